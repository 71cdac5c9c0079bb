"""Smoke tests: the memory examples run end to end with tiny settings."""

import os

import numpy as np
from scripts import ROOT, load_script


def load_example(name):
    return load_script("examples", name)


def test_ntm_copy_example_trains_and_plots(tmp_path):
    example = load_example("ntm_copy")
    png = tmp_path / "ntm.png"
    errors = example.main(
        ["--steps", "3", "--max-length", "2", "--memory-size", "4", "--plot", str(png)]
    )
    # At most every output bit wrong: 8 bits x 2 vectors.
    assert 0.0 <= errors <= 16.0
    assert png.stat().st_size > 1000


def test_memory_network_babi_example_on_the_sample():
    example = load_example("memory_network_babi")
    errors = example.main(
        [
            "--data-dir",
            os.path.join(ROOT, "tests", "fixtures", "babi"),
            "--epochs",
            "2",
            "--memory-size",
            "6",
        ]
    )
    assert set(errors) == {1}
    assert np.isfinite(errors[1]) and 0.0 <= errors[1] <= 100.0
