"""The one word-level LSTM network (``language_model.network.word_lstm``)
and the one perplexity, as ``WordLanguageModel`` and the ptb-lstm zoo
models use them."""

import math

import keras
import numpy as np
import pytest

from keras_seqmodels.language_model import WordLanguageModel
from keras_seqmodels.language_model import network as word_network


def _reference_perplexity(logits, ids):
    """Perplexity of ``ids[1:]`` under ``logits`` (one row per position of ``ids[:-1]``)."""
    logits = np.asarray(logits, "float64")
    logits = logits - logits.max(-1, keepdims=True)
    nll = np.log(np.exp(logits).sum(-1)) - logits[np.arange(len(ids) - 1), ids[1:]]
    return math.exp(nll.mean())


def test_word_language_model_wraps_the_one_network():
    keras.utils.set_random_seed(0)
    lm = WordLanguageModel(["<eos>", "<unk>", "a", "b", "c"], units=6, layers=2, dropout=0.1)
    keras.utils.set_random_seed(0)
    net = word_network.word_lstm(5, 6, 2, 0.1)
    assert lm.network.get_config() == net.get_config()
    for ours, theirs in zip(lm.network.get_weights(), net.get_weights()):
        np.testing.assert_array_equal(ours, theirs)


def test_uniform_initialisation_and_tied_logits():
    net = word_network.word_lstm(7, 4, 1, init_scale=0.05, seed=3, tie_weights=True)
    for w in net.trainable_weights:
        values = keras.ops.convert_to_numpy(w)
        assert np.all(np.abs(values) <= 0.05), w.path
    assert isinstance(net.get_layer("embedding"), keras.layers.ReversibleEmbedding)
    same = word_network.word_lstm(7, 4, 1, init_scale=0.05, seed=3, tie_weights=True)
    for a, b in zip(net.get_weights(), same.get_weights()):
        np.testing.assert_array_equal(a, b)  # seeded: the same weights
    with pytest.raises(ValueError, match=r"^word_lstm: `tie_weights` needs `embedding_dim`"):
        word_network.word_lstm(7, 4, 1, embedding_dim=3, tie_weights=True)


def test_the_two_ways_of_scoring_agree_on_one_window():
    keras.utils.set_random_seed(1)
    net = word_network.word_lstm(9, 5, 2, init_scale=0.3, seed=2)
    ids = np.random.default_rng(0).integers(0, 9, 23).astype("int32")
    one_pass = _reference_perplexity(net.predict_on_batch(ids[None, :-1])[0], ids)
    # Windows from zero states: one window holding the whole stream.
    ppl, count = word_network.perplexity(net, ids, window=len(ids), rows=2)
    assert count == len(ids) - 1
    np.testing.assert_allclose(ppl, one_pass, rtol=1e-5)
    # States carried by a stateful copy over windows of 4: the same one pass.
    evaluator = word_network.word_lstm(9, 5, 2, batch=1, stateful=True)
    carried, count = word_network.perplexity(net, ids, window=4, rows=1, evaluator=evaluator)
    assert count == len(ids) - 1
    np.testing.assert_allclose(carried, one_pass, rtol=1e-5)
    # Short windows from zero states see less context: another number.
    short, _ = word_network.perplexity(net, ids, window=4, rows=2)
    assert abs(short - one_pass) > 1e-4


def test_perplexity_needs_two_words():
    net = word_network.word_lstm(4, 2, 1)
    with pytest.raises(ValueError, match=r"^perplexity: `ids` needs at least two words"):
        word_network.perplexity(net, np.array([1]))
