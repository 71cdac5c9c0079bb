"""ptb-mingru: the linear-recurrence language model beside ptb-lstm (its size,
the stream scorer's carried states, the recipe through the framework)."""

import json
import math

import numpy as np
import pytest

from keras_seqmodels.language_model import network as lm_network
from keras_seqmodels.zoo import framework
from keras_seqmodels.zoo.models import specs
from keras_seqmodels.zoo.models.ptb_lstm import network, scan_network, scan_recipe


def test_default_size_is_ptb_lstms_parameter_count():
    ours = scan_network.build_model(10000)
    lstm = network.build_model(10000, units=650, layers=2, tie_weights=True)
    assert abs(ours.count_params() / lstm.count_params() - 1) < 0.01
    assert scan_network.model_options(ours) == dict(units=650, blocks=2, layer="mingru",
                                                    mlp_ratio=2.0)  # fmt: skip


@pytest.mark.parametrize("layer", ["mingru", "lstm"])
def test_stream_perplexity_carries_the_states_over_windows(layer):
    """Scoring the stream in windows of 4 with a stateful copy gives what the
    stateless model gives on each whole row at once."""
    rng = np.random.default_rng(0)
    model = scan_network.build_model(12, units=6, blocks=2, layer=layer, dropout=0.0,
                                     block_dropout=0.0)  # fmt: skip
    ids = rng.integers(0, 12, 2 * 13 + 1).astype("int32")
    evaluator = scan_network.stream_evaluator(model, batch=2)
    ppl, count = lm_network.perplexity(model, ids, window=4, rows=2, evaluator=evaluator)
    x = ids[:26].reshape(2, 13)
    y = ids[1:27].reshape(2, 13)
    logits = np.asarray(model.predict(x, verbose=0), "float64")
    logits -= logits.max(-1, keepdims=True)
    nll = np.log(np.exp(logits).sum(-1)) - np.take_along_axis(logits, y[..., None], -1)[..., 0]
    assert count == 26
    assert ppl == pytest.approx(math.exp(nll.mean()), rel=1e-4)


def test_bad_layer_is_named():
    with pytest.raises(ValueError, match="ptb-mingru: `layer` must be one of mingru"):
        scan_network.build_model(12, units=4, layer="gru")


def test_smoke_train_then_evaluate(tmp_path, capsys):
    rec = framework.Recipe.from_module(scan_recipe, specs()["ptb-mingru"])
    argv = ["--smoke", "--verbose", "0", "--epochs", "2", "--units", "8", "--blocks", "1",
            "--bptt", "10", "--batch-size", "4", "--work-dir", str(tmp_path)]  # fmt: skip
    assert framework.main(rec, "train", argv) == 0
    selected = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert selected["monitor"] == "val_perplexity"
    path = tmp_path / "ptb-mingru.keras"
    assert (tmp_path / "vocab.txt").is_file()
    assert framework.main(rec, "evaluate", ["--smoke", "--model", str(path)]) == 0
    metrics = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    # The smoke stream has 40 words: a trained model is below uniform guessing.
    assert metrics["tokens_scored"] > 0 and 1 < metrics["perplexity"] < 40
