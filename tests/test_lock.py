"""The lock files pin a set that setup.cfg allows, and the drift report finds
every kind of difference from them."""

import configparser
import os
import subprocess
import sys

import pytest
from packaging.requirements import Requirement
from scripts import ROOT, load_script

check_lock = load_script("tools", "check_lock")
LOCKS = ("test.lock", "bench.lock")


def _requirements(extras):
    config = configparser.ConfigParser()
    config.read(os.path.join(ROOT, "setup.cfg"))
    lines = config["options"]["install_requires"].splitlines()
    for extra in extras:
        lines += config["options.extras_require"][extra].splitlines()
    return [Requirement(line) for line in lines if line.strip() and not line.startswith("#")]


@pytest.mark.parametrize(
    "lock, extras", [("test.lock", ("test", "deploy")), ("bench.lock", ("test", "bench"))]
)
def test_lock_pins_every_requirement_within_its_range(lock, extras):
    pins = check_lock.read_lock(os.path.join(ROOT, "requirements", lock))
    for requirement in _requirements(extras):
        name = check_lock.canonical(requirement.name)
        assert name in pins, f"{lock} does not pin {requirement.name}"
        assert requirement.specifier.contains(pins[name], prereleases=True), (
            f"{lock}: {name}=={pins[name]} is outside setup.cfg's {requirement}"
        )


def test_differences_name_changed_missing_and_unlocked_packages():
    locked = {"numpy": "2.4.6", "keras": "3.15.1", "jax": "0.10.2"}
    present = {"numpy": "2.5.0", "keras": "3.15.1", "pytest": "9.2.0", "pip": "23.2.1"}
    assert check_lock.differences(locked, present) == [
        "locked but not installed: jax==0.10.2",
        "changed: numpy 2.4.6 (locked) -> 2.5.0 (installed)",
        "not in the lock: pytest==9.2.0",
    ]
    assert check_lock.differences(locked, dict(locked)) == []


def test_names_are_compared_normalised(tmp_path):
    lock = tmp_path / "x.lock"
    lock.write_text("# comment\n\nJinja2==3.1.6\ntyping_extensions==4.15.0  # why\n")
    assert check_lock.read_lock(lock) == {"jinja2": "3.1.6", "typing-extensions": "4.15.0"}


def test_a_line_that_is_not_a_pin_is_refused_with_file_and_line(tmp_path):
    lock = tmp_path / "x.lock"
    lock.write_text("numpy==2.4.6\nkeras>=3\n")
    with pytest.raises(ValueError, match=r"x\.lock:2: expected 'name==version'"):
        check_lock.read_lock(lock)


def _run(lock):
    script = os.path.join(ROOT, "tools", "check_lock.py")
    return subprocess.run(
        [sys.executable, script, str(lock)], capture_output=True, text=True, timeout=120
    )


def test_script_exit_status_follows_the_report(tmp_path):
    present = check_lock.installed()
    same = tmp_path / "same.lock"
    same.write_text("".join(f"{n}=={v}\n" for n, v in sorted(present.items())))
    result = _run(same)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "match" in result.stdout

    name = next(n for n in sorted(present) if n not in ("pip", "setuptools", "wheel"))
    drift = tmp_path / "drift.lock"
    drift.write_text(same.read_text().replace(f"{name}=={present[name]}", f"{name}==0.0.0"))
    result = _run(drift)
    assert result.returncode == 1
    assert f"changed: {name} 0.0.0 (locked) -> {present[name]} (installed)" in result.stdout

    broken = tmp_path / "broken.lock"
    broken.write_text("not a pin\n")
    assert _run(broken).returncode == 2
