"""Scheduled sampling and input feeding in the EncoderDecoder (any backend)."""

import os
import tempfile

import keras
import numpy as np
import pytest
from keras import ops

import keras_seqmodels as ks
from keras_seqmodels.seq2seq import AttentionDecoder, EncoderDecoder

SOURCE = np.array([[5, 6, 7, 8, 3], [9, 4, 3, 0, 0], [3, 0, 0, 0, 0]], "int32")
TARGET_IN = np.array([[2, 5, 6, 7], [2, 8, 0, 0], [2, 4, 9, 3]], "int32")
LABELS = np.concatenate([TARGET_IN[:, 1:], np.full((3, 1), 3)], 1)


def _np(x):
    return ops.convert_to_numpy(x)


def _model(**kw):
    cfg = dict(start_id=2, end_id=3, encoder_layers=1, decoder_layers=2, seed=3)
    cfg.update(kw)
    return EncoderDecoder(12, 11, 6, 5, 7, **cfg)


def _set_teacher(model, value):
    model.decoder.teacher_probability.assign(value)


# JAX runs one case of each (eager JAX is slow); TensorFlow runs them all.
@pytest.mark.parametrize("attention,sampling", [
    ("multiplicative", "argmax"), pytest.param("none", "sample", marks=pytest.mark.tf_only),
])
def test_teacher_probability_one_is_teacher_forcing(attention, sampling):
    keras.utils.set_random_seed(0)
    model = _model(attention=attention, scheduled_sampling=True, sampling=sampling)
    forced = _np(model((SOURCE, TARGET_IN)))  # not training: the parallel path
    mixed = _np(model((SOURCE, TARGET_IN), training=True))  # the step loop, ε = 1
    np.testing.assert_allclose(mixed, forced, atol=1e-5)


@pytest.mark.parametrize("input_feeding", [pytest.param(False, marks=pytest.mark.tf_only), True])
def test_teacher_probability_zero_feeds_own_argmax(input_feeding):
    """Reference: a step-by-step rollout that feeds back argmax(logits)."""
    keras.utils.set_random_seed(1)
    model = _model(scheduled_sampling=True, sampling="argmax", input_feeding=input_feeding)
    model((SOURCE, TARGET_IN))
    _set_teacher(model, 0.0)
    got = _np(model((SOURCE, TARGET_IN), training=True))
    memory = model.encoder(SOURCE)
    prepared = model.decoder.prepare_memory(memory)
    states = model.decoder.initial_state(memory)
    token, fed = TARGET_IN[:, 0], []
    for t in range(TARGET_IN.shape[1]):
        fed.append(token)
        logits, states, _ = model.decoder.step(token, states, prepared)
        np.testing.assert_allclose(got[:, t], _np(logits), atol=1e-6, rtol=1e-4)
        token = np.argmax(_np(logits), axis=-1).astype("int32")
    # ... and it differs from teacher forcing (the own tokens are not the truth).
    assert np.any(np.stack(fed, 1)[:, 1:] != TARGET_IN[:, 1:])
    forced = _np(model((SOURCE, TARGET_IN)))
    assert np.abs(got - forced).max() > 0.05 * np.abs(forced).max()


def _fed_tokens(model, source, target, got):
    """Which token was fed at step 1, recovered by matching the step-1 logits."""
    memory = model.encoder(source)
    prepared = model.decoder.prepare_memory(memory)
    states = model.decoder.initial_state(memory)
    first, states, _ = model.decoder.step(target[:, 0], states, prepared)
    vocab = model.decoder.vocabulary_size
    candidates = np.stack([
        _np(model.decoder.step(np.full(len(source), v, "int32"), states, prepared)[0])
        for v in range(vocab)
    ], axis=1)  # (batch, vocab, vocab): the step-1 logits after each token
    error = np.abs(candidates - got[:, None, 1]).max(-1)
    fed = error.argmin(-1)
    assert np.all(error[np.arange(len(fed)), fed] < 1e-4)
    return _np(first), fed


@pytest.mark.tf_only  # backend-agnostic ops; the sampler is tested on JAX in test_decoding
def test_sampled_tokens_follow_the_model_and_the_coin():
    """ε = 0 with sampling: the fed token follows softmax(logits); ε = 0.5:
    about half of the inputs are the truth."""
    keras.utils.set_random_seed(2)
    n = 800
    source = np.repeat(SOURCE[:1], n, axis=0)
    target = np.repeat(np.array([[2, 5]], "int32"), n, axis=0)
    model = _model(scheduled_sampling=True, sampling="sample")
    model((source, target))
    _set_teacher(model, 0.0)
    got = _np(model((source, target), training=True))
    first, fed = _fed_tokens(model, source, target, got)
    p = np.exp(first[0] - first[0].max())
    p /= p.sum()
    freq = np.bincount(fed, minlength=len(p)) / n
    np.testing.assert_allclose(freq, p, atol=4 * np.sqrt(p.max() / n) + 1e-3)
    model2 = _model(scheduled_sampling=True, sampling="argmax")
    model2((source[:1], target[:1]))
    own = int(np.argmax(_np(model2((source[:1], target[:1])))[0, 0]))
    truth = 5 if own != 5 else 4  # so the truth and the own token can be told apart
    target[:, 1] = truth
    _set_teacher(model2, 0.5)
    _, fed = _fed_tokens(model2, source, target, _np(model2((source, target), training=True)))
    assert set(fed.tolist()) == {truth, own}
    assert abs(np.mean(fed == truth) - 0.5) < 0.06


def test_input_feeding_matches_a_hand_wired_reference():
    """o(t-1) is concatenated after [E y(t-1); m] and o(0) = 0 (Luong et al. 2015)."""
    keras.utils.set_random_seed(4)
    model = _model(input_feeding=True, decoder_layers=1, context_input=True)
    got, weights = model((SOURCE, TARGET_IN), return_attention=True)
    got, weights = _np(got), _np(weights)
    dec = model.decoder
    h_enc, summary, mask = (_np(x) for x in model.encoder(SOURCE))
    keys = h_enc @ _np(dec.key_projection.kernel)
    table = _np(dec.embedding.embeddings)
    wc, bc = _np(dec.combine.kernel), _np(dec.combine.bias)
    proj, bias = _np(dec.output_projection.kernel), _np(dec.output_bias)
    states = [_np(s) for s in dec.initial_state(model.encoder(SOURCE))][:2]
    o = np.zeros((3, 7), "float32")
    for t in range(TARGET_IN.shape[1]):
        x = np.concatenate([table[TARGET_IN[:, t]], summary, o], axis=-1)
        s, states = dec.rnns[0].cell(x, states)
        s, states = _np(s), [_np(v) for v in states]
        scores = np.einsum("bu,bsu->bs", s, keys)
        scores = np.where(mask, scores, -np.inf)
        a = np.exp(scores - scores.max(-1, keepdims=True))
        a /= a.sum(-1, keepdims=True)
        context = np.einsum("bs,bsd->bd", a, h_enc)
        o = np.tanh(np.concatenate([context, s], -1) @ wc + bc)
        logits = (o @ proj) @ table.T + bias
        np.testing.assert_allclose(weights[:, t], a, atol=1e-5)
        np.testing.assert_allclose(got[:, t], logits, atol=1e-4)


@pytest.mark.tf_only  # JAX: step() vs the loop is covered by the argmax test
def test_input_feeding_padding_and_step_decoding_agree():
    keras.utils.set_random_seed(5)
    model = _model(input_feeding=True, attention="additive")
    full = _np(model((SOURCE, TARGET_IN)))
    for i in range(3):
        n = int((SOURCE[i] > 0).sum())
        alone = _np(model((SOURCE[i : i + 1, :n], TARGET_IN[i : i + 1])))
        np.testing.assert_allclose(full[i], alone[0], atol=1e-5)
    greedy, _ = model.greedy(SOURCE, max_length=5)
    beam, _, _ = model.beam(SOURCE, beam_size=1, max_length=5)
    np.testing.assert_array_equal(_np(greedy), _np(beam)[:, 0])


@pytest.mark.slow
def test_callback_moves_the_probability_in_fit_and_the_model_round_trips():
    keras.utils.set_random_seed(6)
    source, target, labels = (np.concatenate([a, a[:1]]) for a in (SOURCE, TARGET_IN, LABELS))
    model = _model(scheduled_sampling=True, input_feeding=True, dropout=0.2)
    model.compile("adam", ks.seq2seq.MaskedSparseCrossentropy())
    cb = ks.training.ScheduledSampling("exponential", k=0.5)
    history = model.fit((source, target), labels, epochs=3, batch_size=2, verbose=0,
                        callbacks=[cb])
    assert history.history["teacher_probability"] == [1.0, 0.5, 0.25]
    assert float(_np(model.decoder.teacher_probability)) == 0.25
    assert np.all(np.isfinite(history.history["loss"]))
    cb = ks.training.ScheduledSampling("inverse_sigmoid", k=1.0, per="batch")
    model.fit((source, target), labels, epochs=2, batch_size=2, verbose=0, callbacks=[cb])
    # Four batches, the last one run with ε_3 = 1 / (1 + e^3).
    eps = 1 / (1 + np.exp(3.0))
    assert float(_np(model.decoder.teacher_probability)) == pytest.approx(eps, rel=1e-6)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "m.keras")
        model.save(path)
        loaded = keras.saving.load_model(path)
    assert loaded.decoder.scheduled_sampling and loaded.decoder.input_feeding
    assert float(_np(loaded.decoder.teacher_probability)) == pytest.approx(eps, rel=1e-6)
    np.testing.assert_allclose(_np(loaded((SOURCE, TARGET_IN))),
                               _np(model((SOURCE, TARGET_IN))), atol=1e-6)


def test_options_are_checked_and_serialized():
    dec = AttentionDecoder(11, 6, 7, memory_dim=10, input_feeding=True,
                           scheduled_sampling=True, sampling="argmax", seed=4)
    clone = AttentionDecoder.from_config(dec.get_config())
    assert clone.get_config() == dec.get_config()
    assert EncoderDecoder.from_config(_model(input_feeding=True).get_config()).decoder.input_feeding
    with pytest.raises(ValueError, match="input_feeding.*attention"):
        AttentionDecoder(11, 6, 7, memory_dim=10, input_feeding=True, attention="none")
    with pytest.raises(ValueError, match="sampling"):
        _model(scheduled_sampling=True, sampling="beam")
    # Without the options the decoder has exactly its former variables.
    plain = _model()
    plain((SOURCE, TARGET_IN))
    assert not any("teacher_probability" in v.path for v in plain.variables)
    with pytest.raises(ValueError, match="scheduled_sampling=True"):
        plain.compile("adam", "sparse_categorical_crossentropy")
        plain.fit((SOURCE, TARGET_IN), LABELS, verbose=0,
                  callbacks=[ks.training.ScheduledSampling()])
