"""Smoke tests: the zoo examples run end to end with tiny settings and learn."""

import os

from scripts import ROOT, load_script


def load_example(name):
    return load_script("examples", name)


def test_bidirectional_tagger_beats_the_majority_baseline():
    fixtures = os.path.join(ROOT, "tests", "fixtures")
    result = load_example("bidirectional_tagger").main(
        ["--epochs", "3", "--limit", "120", "--data-dir", fixtures]
    )
    assert result["loss"][-1] < result["loss"][0]
    assert result["accuracy"] > result["baseline"] + 0.1
    # evaluate's accuracy metric counts the same (unpadded) tokens as the check here
    assert abs(result["evaluate_accuracy"] - result["accuracy"]) < 1e-6


def test_char_lm_beats_the_uniform_baseline():
    result = load_example("char_lm").main(
        ["--epochs", "3", "--units", "32", "--limit", "20000", "--sample", "20"]
    )
    assert result["bpc"] < result["uniform_bpc"] - 1.0
    assert result["sample"].startswith("The ") and len(result["sample"]) == 24
