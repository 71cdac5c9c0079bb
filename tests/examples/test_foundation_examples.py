"""Smoke tests: the foundation's examples run end to end with tiny settings."""

import os
import subprocess
import sys

import pytest
from scripts import ROOT, load_script


def load_example(name):
    return load_script("examples", name)


def test_adding_problem_data():
    import numpy as np

    ltd = load_example("long_term_dependencies")
    x, y = ltd.adding_problem(50, 12, np.random.default_rng(0))
    assert x.shape == (50, 12, 2) and y.shape == (50, 1)
    np.testing.assert_array_equal(x[:, :, 1].sum(1), 2.0)
    np.testing.assert_allclose(y[:, 0], (x[:, :, 0] * x[:, :, 1]).sum(1), rtol=1e-6)
    first = x[:, :6, 1].sum(1)
    np.testing.assert_array_equal(first, 1.0)  # one marker in each half


def test_long_term_dependencies_runs_and_plots(tmp_path):
    ltd = load_example("long_term_dependencies")
    png = tmp_path / "ltd.png"
    results = ltd.main(
        [
            "--spans",
            "5",
            "--runs",
            "1",
            "--cells",
            "lstm,elman",
            "--train-size",
            "200",
            "--epochs",
            "1",
            "--units",
            "4",
            "--png",
            str(png),
        ]
    )
    assert len(results) == 2
    assert all(r["mse"] >= 0 for r in results)
    assert png.stat().st_size > 1000


@pytest.mark.slow
def test_quickstart_prints_accuracy():
    out = subprocess.run(
        [
            sys.executable,
            os.path.join(ROOT, "examples", "quickstart.py"),
            "--sentences",
            "500",
            "--epochs",
            "2",
        ],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    line = [ln for ln in out.stdout.splitlines() if ln.startswith("UPOS accuracy")][-1]
    accuracy = float(line.split()[-1])
    assert 0.5 < accuracy <= 1.0  # majority tag (NOUN) alone gives about 0.17
