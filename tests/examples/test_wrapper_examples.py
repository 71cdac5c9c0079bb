"""Smoke test: the four-direction image example runs end to end, tiny."""

import numpy as np
from scripts import load_script


def load_example(name):
    return load_script("examples", name)


def test_quadrant_labels_follow_the_bright_pixel():
    example = load_example("four_direction_images")
    x, y = example.make_data(64, 6, np.random.default_rng(0))
    assert x.shape == (64, 6, 6, 1) and x.sum() == 64
    _, rows, cols, _ = np.nonzero(x)
    np.testing.assert_array_equal(y, 2 * (rows >= 3) + (cols >= 3))


def test_four_direction_example_runs():
    example = load_example("four_direction_images")
    results = example.main(["--samples", "64", "--size", "4", "--units", "3", "--epochs", "1"])
    assert set(results) == {"renet", "plain"}
    assert all(0.0 <= v <= 1.0 for v in results.values())
