"""``seqmodels --help``, ``zoo list`` and ``zoo info`` start in well under a
second: they import neither Keras nor TensorFlow. ``zoo list`` fits 100
columns; ``zoo info`` shows the card's use and license fields."""

import json
import os
import shutil
import subprocess
import sys
import time

import pytest
from cli_helpers import run_cli

from keras_seqmodels.cli.zoo_commands import MAX_WIDTH, info_lines, list_table

_PROBE = (
    "import sys; from keras_seqmodels.cli.main import main; code = main({argv!r}); "
    "print('LOADED', sorted(m for m in ('keras', 'tensorflow', 'jax') if m in sys.modules))"
)


def _cpu_and_wall(argv):
    """(CPU seconds, wall seconds) of one run of ``argv`` (output discarded)."""
    before = os.times()
    start = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    wall = time.perf_counter() - start
    after = os.times()
    assert done.returncode == 0, done.stderr
    cpu = (after.children_user - before.children_user) + (
        after.children_system - before.children_system
    )
    return cpu, wall, done.stdout


@pytest.mark.parametrize("argv", [["--help"], ["zoo", "list"], ["zoo", "info", "ud-ewt-upos"]])
def test_light_commands_import_no_framework(argv):
    out = subprocess.run(
        [sys.executable, "-c", _PROBE.format(argv=argv)], capture_output=True, text=True,
        timeout=120,
    ).stdout
    if argv == ["--help"]:  # argparse exits before the probe line
        assert out.startswith("usage: seqmodels")
        return
    assert out.splitlines()[-1] == "LOADED []", out[-300:]


@pytest.mark.parametrize("argv", [["--help"], ["zoo", "list"], ["zoo", "info", "ud-ewt-upos"]])
def test_light_commands_start_fast(argv):
    """Best of 3: under 1 s of CPU (the work; wall time, which a loaded
    machine stretches, is not asserted)."""
    script = shutil.which("seqmodels")
    assert script, "the seqmodels console script is not on PATH"
    cpu = min(_cpu_and_wall([script, *argv])[0] for _ in range(3))
    assert cpu < 1.0, f"seqmodels {' '.join(argv)}: {cpu:.2f} s CPU"


def test_zoo_list_fits_100_columns(monkeypatch):
    # The table follows the terminal's width up to 100 columns; pin it, as a
    # test runner's terminal (or its absence) varies.
    monkeypatch.setenv("COLUMNS", "100")
    code, out, err = run_cli(["zoo", "list"])
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].split() == ["name", "size", "task", "test", "metrics"]
    assert max(len(line) for line in lines) <= MAX_WIDTH, max(lines, key=len)
    from keras_seqmodels import zoo

    names = [line.split()[0] for line in lines[1:] if line[:1].strip()]
    assert names == zoo.list_models()
    # Wrapped cells lose no metric: every "k=v" of the index is printed whole.
    for name in names:
        for key in zoo.info(name).get("metrics", {}):
            if isinstance(zoo.info(name)["metrics"][key], (int, float)):
                assert f"{key}=" in out, key


def test_list_table_wraps_long_cells():
    entries = {
        "a-model-with-a-long-name": {
            "task": "a task described in very many words " * 4,
            "metrics": {f"metric_number_{i}": i / 3 for i in range(12)},
            "size_bytes": 123456789,
        },
        "b": {"task": "short", "metrics": {}, "size_bytes": 0},
    }
    lines = list_table(entries, width=80)
    assert max(len(line) for line in lines) <= 80
    text = " ".join(lines)
    assert all(f"metric_number_{i}=" in text for i in range(12))
    assert lines[1].startswith("a-model-with-a-long-name  123.5 MB  a task described")
    assert any(line.startswith("b ") for line in lines)


def test_zoo_info_shows_use_license_and_limits():
    from keras_seqmodels import zoo

    entry = zoo.info("multi30k-en-de")
    code, out, err = run_cli(["zoo", "info", "multi30k-en-de"])
    assert code == 0, err
    assert max(len(line) for line in out.splitlines()) <= MAX_WIDTH
    flat = " ".join(out.split())
    for key, label in (("license", "license"), ("domain", "domain"),
                       ("intended_use", "intended use"), ("limits", "known limits")):
        if key in entry:
            assert f"{label} {' '.join(entry[key].split())}" in flat, key
    code, out, _ = run_cli(["zoo", "info", "multi30k-en-de", "--json"])
    assert json.loads(out) == entry


def test_info_lines_order_and_wrapping():
    entry = {"license": "CC BY 4.0", "task": "t", "limits": "x " * 100, "zzz_extra": 1}
    lines = info_lines("m", entry, width=70)
    assert lines[0] == "m"
    labels = [line.split()[0] for line in lines[1:] if line[2:3] != " "]
    assert labels == ["task", "known", "license", "zzz"]
    assert max(len(line) for line in lines) <= 70


def test_input_errors_answer_before_loading_a_framework(tmp_path):
    """A binary --file is reported before Keras or TensorFlow is imported."""
    path = tmp_path / "binary.txt"
    path.write_bytes(b"\xff\xfe\x00 not text")
    done = subprocess.run(
        [sys.executable, "-c", _PROBE.format(argv=["tag", "--file", str(path)])],
        capture_output=True, text=True, timeout=120,
    )
    assert done.stdout.splitlines()[-1] == "LOADED []", done.stdout[-300:]
    assert done.stderr.splitlines() == [
        f"seqmodels tag: error: --file: {path}, line 1: not UTF-8 text (byte 0xff at "
        "column 1); give a UTF-8 text file, one sentence per line"
    ]


@pytest.mark.slow
def test_framework_start_up_log_is_hidden(tmp_path):
    """The console script imports Keras and TensorFlow to read a .keras file
    (and refuses a corrupt one): standard error holds the one error line,
    none of TensorFlow's native start-up lines."""
    script = shutil.which("seqmodels")
    assert script, "the seqmodels console script is not on PATH"
    model = tmp_path / "corrupt.keras"
    model.write_bytes(b"PK\x03\x04 not a zip archive")
    done = subprocess.run(
        [script, "tag", "--model-path", str(model), "A sentence ."],
        capture_output=True, text=True, timeout=600,
    )
    assert done.returncode == 2, done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr[-2000:]
    assert lines[0].startswith(f"seqmodels tag: error: --model-path: cannot load {model}")
