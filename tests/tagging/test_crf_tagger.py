"""CRFTagger: a CRF trained with compile / fit(x, y) / evaluate / predict, saved and loaded."""

import keras
import numpy as np
import pytest
from keras import ops

import keras_seqmodels as ks
from keras_seqmodels.tagging.crf import crf_decode, crf_log_likelihood


def toy(n, seed):
    """Right-padded word ids and tags that a BiLSTM can learn (word id mod 3)."""
    rng = np.random.default_rng(seed)
    x = rng.integers(1, 10, (n, 6))
    for i, length in enumerate(rng.integers(2, 7, n)):
        x[i, length:] = 0
    y = np.where(x > 0, x % 3, 0)
    return x, y


def make_tagger(seed=0, recurrent=False):
    """Embedding (mask_zero) -> [BiLSTM] -> Dense potentials -> CRF."""
    keras.utils.set_random_seed(seed)
    words = keras.Input((None,), dtype="int32")
    h = keras.layers.Embedding(10, 8, mask_zero=True)(words)
    if recurrent:
        h = ks.layers.Bidirectional(
            ks.layers.Recurrent(ks.cells.LSTMCell(4), return_sequences=True))(h)
    return ks.tagging.CRFTagger(keras.Model(words, keras.layers.Dense(3)(h)))


def masked_accuracy(pred, y, x):
    return float((pred == y)[x > 0].mean())


def test_fit_evaluate_predict_save_load(tmp_path):
    x, y = toy(96, 0)
    xv, yv = toy(32, 1)
    tagger = make_tagger()
    tagger.compile(keras.optimizers.Adam(0.03), metrics=["accuracy"])
    history = tagger.fit(x, y, validation_data=(xv, yv), epochs=4, batch_size=16, verbose=0)
    losses = history.history["loss"]
    assert losses[-1] < 0.7 * losses[0], losses
    assert set(history.history) == {"loss", "accuracy", "val_loss", "val_accuracy"}

    pred = tagger.predict(xv, verbose=0)
    assert pred.shape == yv.shape and pred.dtype == np.int32
    assert (pred[xv == 0] == 0).all()
    accuracy = masked_accuracy(pred, yv, xv)
    majority = np.bincount(y[x > 0]).max() / (x > 0).sum()
    assert accuracy > majority + 0.25, (accuracy, majority)

    # The metric counts unmasked steps only, and the loss is the mean CRF
    # negative log-likelihood per sequence, computed here from the parts.
    result = tagger.evaluate(xv, yv, verbose=0, return_dict=True)
    np.testing.assert_allclose(result["accuracy"], accuracy, atol=1e-6)
    potentials = tagger.potentials_model(xv)
    mask = xv > 0
    nll = -crf_log_likelihood(potentials, yv, mask, *tagger.crf._params())
    np.testing.assert_allclose(result["loss"], float(ops.mean(nll)), rtol=1e-4)
    viterbi, _ = crf_decode(potentials, mask, *tagger.crf._params())
    np.testing.assert_array_equal(pred, ops.convert_to_numpy(viterbi))

    path = tmp_path / "tagger.keras"
    tagger.save(path)
    loaded = keras.saving.load_model(path)
    assert isinstance(loaded, ks.tagging.CRFTagger)
    np.testing.assert_array_equal(loaded.predict(xv, verbose=0), pred)
    again = loaded.evaluate(xv, yv, verbose=0, return_dict=True)
    np.testing.assert_allclose(again["loss"], result["loss"], rtol=1e-5)
    np.testing.assert_allclose(again["accuracy"], result["accuracy"], atol=1e-6)
    loaded.fit(x, y, epochs=1, batch_size=32, verbose=0)  # compiled on load


def test_sample_weight_weights_whole_sequences():
    x, y = toy(8, 2)
    tagger = make_tagger()
    tagger.compile("sgd")
    weights = np.array([1, 0, 0, 0, 0, 0, 0, 0], "float32")
    weighted = tagger.evaluate(x, y, sample_weight=weights, batch_size=8, verbose=0)
    nll = -crf_log_likelihood(tagger.potentials_model(x), y, x > 0, *tagger.crf._params())
    np.testing.assert_allclose(weighted, float(nll[0]) / 8, rtol=1e-4)


def test_compile_and_target_errors_are_clear():
    tagger = make_tagger()
    with pytest.raises(ValueError, match="leave `loss` out of compile or pass loss='crf'"):
        tagger.compile("adam", loss="sparse_categorical_crossentropy")
    tagger.compile("adam", loss="crf")
    x, y = toy(4, 3)
    with pytest.raises(ValueError, match=r"integer tags of shape \(batch, time\)"):
        tagger.evaluate(x, y[..., None], verbose=0)
    with pytest.raises(TypeError, match="`potentials_model` must be a Keras model"):
        ks.tagging.CRFTagger("not a model")


def test_recurrent_encoder_mask_reaches_the_crf():
    """The mask of a BiLSTM encoder's output reaches the CRF: padding never changes tags."""
    x, y = toy(6, 4)
    tagger = make_tagger(recurrent=True)
    tagger.predict(x[:1], verbose=0)
    rng = np.random.default_rng(5)
    for weight in tagger.crf.weights:  # transitions that would carry padding into the tags
        weight.assign(rng.normal(0, 2, weight.shape))
    pred = tagger.predict(x, verbose=0)
    longer = np.concatenate([x, np.zeros((6, 3), x.dtype)], axis=1)
    np.testing.assert_array_equal(tagger.predict(longer, verbose=0)[:, :6], pred)
    assert (pred[x == 0] == 0).all()


def test_accuracy_counts_every_token_once_whatever_the_batch_width():
    # Two batches padded to different widths (3 and 6): the metric must equal
    # the share of all real tokens tagged right (a Keras mean over (batch,
    # time) values would average each row over its padded width first).
    from keras_seqmodels.tagging.crf_tagger import TokenAccuracy

    x, y = toy(8, 3)
    x[:4, 3:] = 0
    y[:4, 3:] = 0
    tagger = make_tagger(seed=1)
    pred = np.asarray(tagger.predict(x, verbose=0))
    expected = masked_accuracy(pred, y, x)
    acc = TokenAccuracy()
    acc.update_state(y[:4, :3], tagger(x[:4, :3]))  # the mask rides on the output
    acc.update_state(y[4:], tagger(x[4:]))
    np.testing.assert_allclose(float(ops.convert_to_numpy(acc.result())), expected, atol=1e-6)
    # compile(metrics=["accuracy"]) uses it, and evaluate agrees with the count.
    tagger.compile("adam", metrics=["accuracy"])
    result = tagger.evaluate(x, y, batch_size=4, verbose=0, return_dict=True)
    np.testing.assert_allclose(result["accuracy"], expected, atol=1e-6)
