"""Encoder, decoder, attention, loss and the EncoderDecoder model (any backend)."""

import os
import tempfile

import keras
import numpy as np
import pytest
from keras import ops

from keras_seqmodels.seq2seq import (
    AttentionDecoder,
    EncoderDecoder,
    MaskedAccuracy,
    MaskedSparseCrossentropy,
    RecurrentEncoder,
)
from keras_seqmodels.testing import compute_gradients, run_layer_test

SOURCE = np.array([[5, 6, 7, 8, 3], [9, 4, 3, 0, 0], [3, 0, 0, 0, 0]], "int32")
TARGET_IN = np.array([[2, 5, 6, 7], [2, 8, 0, 0], [2, 4, 9, 3]], "int32")


def _np(x):
    return ops.convert_to_numpy(x)


def _model(**kw):
    cfg = dict(start_id=2, end_id=3, encoder_layers=2, bidirectional=True)
    cfg.update(kw)
    return EncoderDecoder(12, 11, 6, 5, 7, **cfg)


@pytest.mark.parametrize("attention", ["multiplicative", "additive"])
def test_attention_weights_cover_unpadded_source_only(attention):
    keras.utils.set_random_seed(0)
    model = _model(attention=attention)
    _, weights = model((SOURCE, TARGET_IN), return_attention=True)
    weights = _np(weights).astype("float64")
    mask = SOURCE != 0
    assert weights.shape == (3, 4, 5)
    np.testing.assert_allclose(weights.sum(-1), 1.0, atol=1e-5)
    np.testing.assert_array_equal(weights * ~mask[:, None, :], 0.0)
    assert np.all(weights[mask[:, None, :].repeat(4, 1)] > 0)


@pytest.mark.parametrize("cell_type,attention,context_input", [
    ("lstm", "multiplicative", True),
    ("gru", "additive", False),
    ("lstm", "none", True),
])
def test_padding_does_not_change_any_output(cell_type, attention, context_input):
    keras.utils.set_random_seed(1)
    model = _model(cell_type=cell_type, attention=attention, context_input=context_input)
    batch = _np(model((SOURCE, TARGET_IN)))
    for i in range(3):
        n = int((SOURCE[i] > 0).sum())
        alone = _np(model((SOURCE[i : i + 1, :n], TARGET_IN[i : i + 1])))
        np.testing.assert_allclose(batch[i], alone[0], atol=1e-5)


def test_step_by_step_decoding_equals_teacher_forcing():
    keras.utils.set_random_seed(2)
    model = _model(decoder_layers=2)
    full = _np(model((SOURCE, TARGET_IN)))
    memory = model.encoder(SOURCE)
    prepared = model.decoder.prepare_memory(memory)
    states = model.decoder.initial_state(memory)
    for t in range(TARGET_IN.shape[1]):
        logits, states, _ = model.decoder.step(TARGET_IN[:, t], states, prepared)
        np.testing.assert_allclose(_np(logits), full[:, t], atol=1e-5)


def test_encoder_reads_both_directions():
    """Reference: a masked two-direction LSTM over each unpadded row in NumPy."""
    keras.utils.set_random_seed(3)
    enc = RecurrentEncoder(12, 4, 3, num_layers=1, bidirectional=True)
    seq, summary, mask = enc(SOURCE)
    emb = _np(enc.embedding.embeddings).astype("float64")

    def lstm(xs, cell):
        weights = (cell.kernel, cell.recurrent_kernel, cell.bias)
        k, r, b = (_np(w).astype("float64") for w in weights)
        h, c, out = np.zeros(3), np.zeros(3), []
        sig = lambda a: 1 / (1 + np.exp(-a))  # noqa: E731
        for x in xs:
            a = x @ k + h @ r + b
            i, f, g, o = np.split(a, 4)
            c = sig(f) * c + sig(i) * np.tanh(g)
            h = sig(o) * np.tanh(c)
            out.append(h)
        return np.array(out)

    for row in range(3):
        n = int((SOURCE[row] > 0).sum())
        xs = emb[SOURCE[row, :n]]
        fwd = lstm(xs, enc.forward_layers[0].cell)
        bwd = lstm(xs[::-1], enc.backward_layers[0].cell)[::-1]
        np.testing.assert_allclose(_np(seq)[row, :n], np.concatenate([fwd, bwd], -1), atol=1e-5)
        np.testing.assert_allclose(_np(summary)[row], np.concatenate([fwd[-1], bwd[0]]), atol=1e-5)
        np.testing.assert_array_equal(_np(seq)[row, n:], 0.0)
    np.testing.assert_array_equal(_np(mask), SOURCE != 0)


def test_masked_loss_matches_numpy_reference_and_ignores_padding():
    rng = np.random.default_rng(0)
    y = np.array([[3, 1, 4, 0], [2, 0, 0, 0]])
    z = rng.normal(size=(2, 4, 6)).astype("float32")
    eps = 0.1
    loss = float(_np(MaskedSparseCrossentropy(label_smoothing=eps)(y, z)))
    logp = z - z.max(-1, keepdims=True)
    logp = logp - np.log(np.exp(logp).sum(-1, keepdims=True))
    terms = [
        -(1 - eps) * logp[b, t, y[b, t]] - eps * logp[b, t].mean()
        for b in range(2) for t in range(4) if y[b, t] != 0
    ]
    np.testing.assert_allclose(loss, np.mean(terms), rtol=1e-5)
    z2 = z.copy()
    z2[y == 0] = 100.0  # changing predictions at padded targets changes nothing
    assert float(_np(MaskedSparseCrossentropy(label_smoothing=eps)(y, z2))) == pytest.approx(loss)
    acc = MaskedAccuracy()
    acc.update_state(y, z)
    hits = [z[b, t].argmax() == y[b, t] for b in range(2) for t in range(4) if y[b, t]]
    assert float(_np(acc.result())) == pytest.approx(np.mean(hits))


def test_masked_accuracy_counts_every_token_once_across_widths():
    # Batch 1: width 2, one real token, right. Batch 2: width 5, four real
    # tokens, all wrong. Per token: 1 / 5 (a per-row mean over the padded
    # width would give 1/3).
    acc = MaskedAccuracy()
    acc.update_state(np.array([[4, 0]]), np.eye(6)[[[4, 0]]])
    acc.update_state(np.array([[4, 4, 4, 4, 0]]), np.eye(6)[[[5, 5, 5, 5, 0]]])
    assert float(_np(acc.result())) == pytest.approx(1 / 5)
    # Sequence weights (batch,) scale each row's tokens.
    acc.reset_state()
    y = np.array([[4, 4, 0], [4, 0, 0]])
    z = np.eye(6)[[[4, 4, 0], [5, 0, 0]]]
    acc.update_state(y, z, sample_weight=np.array([1.0, 3.0]))
    assert float(_np(acc.result())) == pytest.approx(2 / (2 + 3))


def test_gradients_match_finite_differences():
    keras.utils.set_random_seed(4)
    model = _model(dropout=0.0)
    labels = np.concatenate([TARGET_IN[:, 1:], np.full((3, 1), 3)], 1)
    loss_fn = MaskedSparseCrossentropy(label_smoothing=0.1)
    model((SOURCE, TARGET_IN))
    variables = [model.decoder.key_projection.kernel, model.encoder.backward_layers[1].cell.kernel]

    def loss():
        return loss_fn(labels, model((SOURCE, TARGET_IN)))

    grads = compute_gradients(loss, variables)
    rng = np.random.default_rng(0)
    for var, grad in zip(variables, grads):
        base = _np(var.value).copy()
        for _ in range(2):
            idx = tuple(rng.integers(0, s) for s in base.shape)
            h = 1e-2
            for sign, store in ((1, "plus"), (-1, "minus")):
                bumped = base.copy()
                bumped[idx] += sign * h
                var.assign(bumped)
                if store == "plus":
                    plus = float(_np(loss()))
                else:
                    minus = float(_np(loss()))
            var.assign(base)
            numeric = (plus - minus) / (2 * h)
            np.testing.assert_allclose(grad[idx], numeric, atol=2e-3, rtol=5e-2)


def test_fit_save_and_load_round_trip():
    keras.utils.set_random_seed(5)
    model = _model(dropout=0.2)
    model.compile(optimizer="adam",
                  loss=MaskedSparseCrossentropy(label_smoothing=0.1),
                  metrics=[MaskedAccuracy()])
    labels = np.concatenate([TARGET_IN[:, 1:], np.full((3, 1), 3)], 1)
    history = model.fit((SOURCE, TARGET_IN), labels, epochs=2, verbose=0)
    assert history.history["loss"][-1] < history.history["loss"][0]
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "m.keras")
        model.save(path)
        loaded = keras.saving.load_model(path)
    np.testing.assert_allclose(_np(loaded((SOURCE, TARGET_IN))),
                               _np(model((SOURCE, TARGET_IN))), atol=1e-6)
    np.testing.assert_array_equal(_np(loaded.greedy(SOURCE, max_length=6)[0]),
                                  _np(model.greedy(SOURCE, max_length=6)[0]))


def test_model_beam_one_equals_greedy():
    keras.utils.set_random_seed(6)
    model = _model()
    greedy, _ = model.greedy(SOURCE, max_length=6)
    beam, scores, _ = model.beam(SOURCE, beam_size=1, max_length=6)
    np.testing.assert_array_equal(_np(greedy), _np(beam)[:, 0])
    beam, scores, _ = model.beam(SOURCE, beam_size=3, max_length=6)
    assert np.all(np.diff(_np(scores), axis=1) <= 1e-6)


def test_encoder_layer_contract():
    run_layer_test(
        lambda: RecurrentEncoder(12, 4, 3, num_layers=2, dropout=0.1),
        SOURCE,
        expected_output_shape=(3, 5, 6),
        run_mixed_precision=False,
    )


def test_decoder_config_round_trip():
    dec = AttentionDecoder(11, 6, 7, memory_dim=10, attention="additive",
                           cell_type="gru", num_layers=2, tie_embeddings=False)
    clone = AttentionDecoder.from_config(dec.get_config())
    assert clone.get_config() == dec.get_config()


def test_constructor_errors_name_the_argument():
    with pytest.raises(ValueError, match="units"):
        RecurrentEncoder(10, 4, 0)
    with pytest.raises(ValueError, match="attention"):
        AttentionDecoder(10, 4, 4, memory_dim=4, attention="dot-product")
    with pytest.raises(ValueError, match="cell_type"):
        EncoderDecoder(10, 10, 4, 4, 4, cell_type="rnn")
    with pytest.raises(ValueError, match="label_smoothing"):
        MaskedSparseCrossentropy(label_smoothing=1.5)
    with pytest.raises(ValueError, match="source_ids, decoder_input_ids"):
        _model()(SOURCE)
