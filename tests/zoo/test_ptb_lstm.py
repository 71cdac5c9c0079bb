"""The ptb-lstm recipe's evaluation and sampling, on a small model built here.

No ptb-lstm artifact is shipped yet (see zoo/ptb-lstm/card.md); these tests
check the recipe's stateful TBPTT evaluation and ``seqmodels generate``'s
sampler on a randomly initialised model of the same architecture.
"""

import math

import keras
import numpy as np
import pytest

from keras_seqmodels.cli import generate_commands
from keras_seqmodels.cli.recipe_commands import load_recipe

# Written for this test in the style of Mikolov's PTB preprocessing (lower
# case, no punctuation); no Penn Treebank text is committed.
SENTENCES = [
    "the company said it expects to report a loss for the third quarter",
    "the stock market fell sharply in new york trading yesterday",
    "analysts said the bank 's earnings will rise next year",
]


@pytest.fixture(scope="module")
def recipe():
    return load_recipe("ptb-lstm")


@pytest.fixture(scope="module")
def lm(recipe):
    keras.utils.set_random_seed(0)
    words = recipe.tokens(SENTENCES)
    vocab = recipe.build_vocabulary(words) + ["<unk>"]
    model = recipe.build_model(len(vocab), units=8, layers=2, dropout=0.0)
    return model, vocab, recipe.to_ids(words, vocab)


def test_stream_batches_pair_each_token_with_the_next(recipe):
    ids = np.arange(50, dtype="int32")
    x, y = recipe.stream_batches(ids, batch=4, bptt=5)
    assert x.shape == y.shape == (2, 4, 5)
    np.testing.assert_array_equal(y, x + 1)
    # Row r of consecutive batches continues the same stretch of the stream.
    np.testing.assert_array_equal(x[1, :, 0], x[0, :, -1] + 1)


def test_model_equals_keras_lstm_with_state_carried_over_windows(recipe):
    """The package's Recurrent(LSTMCell) stack computes what keras.layers.LSTM does,
    and a stateful model continues each row from one window to the next."""
    ids = np.random.default_rng(0).integers(0, 30, size=(3, 12)).astype("int32")
    ours = recipe.build_model(30, units=6, layers=2, batch=3, bptt=6, stateful=True)
    inp = keras.Input(batch_shape=(3, 6), dtype="int32")
    h = keras.layers.Embedding(30, 6)(inp)
    for _ in range(2):
        h = keras.layers.LSTM(6, return_sequences=True, stateful=True)(h)
    ref = keras.Model(inp, keras.layers.Dense(30)(h))
    for a, b in zip(ref.trainable_variables, ours.trainable_variables):
        assert tuple(a.shape) == tuple(b.shape)
        a.assign(b)
    windows = [ours.predict_on_batch(ids[:, :6]), ours.predict_on_batch(ids[:, 6:])]
    expected = [ref.predict_on_batch(ids[:, :6]), ref.predict_on_batch(ids[:, 6:])]
    np.testing.assert_allclose(np.concatenate(windows, 1), np.concatenate(expected, 1),
                               rtol=1e-5, atol=1e-5)  # fmt: skip
    full = recipe.build_model(30, units=6, layers=2)
    recipe.copy_weights(ours, full)
    np.testing.assert_allclose(np.concatenate(windows, 1), full.predict_on_batch(ids),
                               rtol=1e-5, atol=1e-5)  # fmt: skip


def test_stateful_chunked_evaluation_equals_one_pass(lm, recipe):
    """TBPTT evaluation in chunks carries the state: same as one full pass."""
    model, vocab, ids = lm
    ppl, count = recipe.perplexity(model, ids, 8, 2, batch=1, bptt=7)
    assert count == len(ids) - 1
    logits = np.asarray(model.predict_on_batch(ids[None, :-1]), "float64")[0]
    logits -= logits.max(-1, keepdims=True)
    nll = np.log(np.exp(logits).sum(-1)) - logits[np.arange(len(ids) - 1), ids[1:]]
    np.testing.assert_allclose(ppl, math.exp(nll.mean()), rtol=1e-4)
    # An untrained model is close to uniform over the vocabulary.
    assert 0.5 * len(vocab) < ppl < 2 * len(vocab)


def test_sampling_is_seeded_and_uses_the_vocabulary(lm):
    model, vocab, _ = lm
    a = generate_commands.sample(model, vocab, "the company", 8, temperature=0.8, seed=3)
    b = generate_commands.sample(model, vocab, "the company", 8, temperature=0.8, seed=3)
    assert a == b and len(a) == 8 and set(a) <= set(vocab)
    greedy = generate_commands.sample(model, vocab, "the", 3, temperature=1e-4, seed=1)
    logits = np.asarray(model(np.array([[vocab.index("the")]], "int32")))[0, -1]
    assert greedy[0] == vocab[int(np.argmax(logits))]
    with pytest.raises(ValueError, match="temperature"):
        generate_commands.sample(model, vocab, "the", 2, temperature=0.0)
