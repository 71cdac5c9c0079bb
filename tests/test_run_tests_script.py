"""tools/run_tests.sh runs every step even after a failing one, and fails at the
end naming the steps that failed (a failure on TensorFlow must not hide the
JAX run)."""

import os
import subprocess

import pytest
from scripts import ROOT

SCRIPT = os.path.join(ROOT, "tools", "run_tests.sh")


def _run(tmp_path, failing):
    """Runs the script with a `python` on PATH that logs each call and fails the
    calls whose backend or tool is in `failing`."""
    log = tmp_path / "calls.log"
    fake = tmp_path / "bin" / "python"
    fake.parent.mkdir()
    fake.write_text(
        "#!/usr/bin/env bash\n"
        f'echo "${{KERAS_BACKEND:-none}} $*" >> "{log}"\n'
        f"for step in {' '.join(failing) or '__none__'}; do\n"
        '  if [ "${KERAS_BACKEND:-ruff}" = "$step" ]; then exit 1; fi\n'
        "done\n"
    )
    fake.chmod(0o755)
    env = dict(os.environ, PATH=f"{fake.parent}:{os.environ['PATH']}")
    env.pop("KERAS_BACKEND", None)
    result = subprocess.run(["bash", SCRIPT], env=env, capture_output=True, text=True)
    return result, log.read_text().splitlines()


@pytest.mark.parametrize(
    "failing, named",
    [
        ((), None),
        (("tensorflow",), "pytest on TensorFlow"),
        (("jax",), "pytest on JAX"),
        (("ruff", "tensorflow"), "ruff"),
    ],
)
def test_every_step_runs_and_any_failure_fails_the_script(tmp_path, failing, named):
    result, calls = _run(tmp_path, failing)
    assert [call.split()[0] for call in calls] == ["none", "tensorflow", "jax"]
    assert "ruff check" in calls[0]
    assert calls[2].split()[-1].startswith("tests/")
    if named is None:
        assert result.returncode == 0, result.stderr
    else:
        assert result.returncode == 1
        assert named in result.stderr
        for step in failing:
            label = {"ruff": "ruff", "tensorflow": "TensorFlow", "jax": "JAX"}[step]
            assert label in result.stderr
