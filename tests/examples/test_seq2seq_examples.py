"""Smoke test: the encoder-decoder example trains and decodes (issue 7)."""

import numpy as np
from scripts import load_script


def _load():
    return load_script("examples", "encoder_decoder", "encoder_decoder_example")


def test_toy_data_targets_are_reversed_sources():
    ex = _load()
    src, tgt = ex.make_data(20, 6, np.random.default_rng(1))
    for s, t in zip(src, tgt):
        n = int(np.argmax(s == ex.END))
        assert t[0] == ex.START and t[n + 1] == ex.END
        np.testing.assert_array_equal(t[1 : n + 1], s[:n][::-1])
    assert ex.exact_match(tgt[:, 1:], tgt) == 1.0


def test_example_runs_small():
    result = _load().main(["--samples", "256", "--epochs", "2", "--units", "16", "--max-len", "5"])
    assert result["last_loss"] < result["first_loss"]
    assert 0.0 <= result["greedy_exact_match"] <= 1.0
