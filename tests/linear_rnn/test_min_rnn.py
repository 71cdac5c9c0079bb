"""MinGRU and MinLSTM against a float64 NumPy reference of the paper's
equations: parallel form = step form = reference, masks, directions,
states, the wrapper, gradients, serialization and errors."""

import keras
import numpy as np
import pytest
from keras import ops

import keras_seqmodels as ks
from keras_seqmodels.testing.layer_test import compute_gradients, run_layer_test

LAYERS = [ks.linear_rnn.MinGRU, ks.linear_rnn.MinLSTM]


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


def _g(x):
    return np.where(x >= 0, x + 0.5, _sigmoid(x))


def reference(layer, x, h0=None, mask=None):
    """The paper's equations step by step in float64 (masked steps skipped)."""
    w = np.asarray(layer.kernel, "float64")
    bias = np.asarray(layer.bias, "float64") if layer.bias is not None else 0.0
    act = _g if layer.activation == "g" else (lambda v: v)
    k = x.astype("float64") @ w + bias
    u = layer.units
    h = np.zeros((x.shape[0], u)) if h0 is None else h0.astype("float64")
    outs = []
    for t in range(x.shape[1]):
        kt = k[:, t]
        if isinstance(layer, ks.linear_rnn.MinGRU):
            z, cand = _sigmoid(kt[:, :u]), act(kt[:, u:])
            new = (1 - z) * h + z * cand
        else:
            f, i, cand = _sigmoid(kt[:, :u]), _sigmoid(kt[:, u : 2 * u]), act(kt[:, 2 * u :])
            new = f / (f + i) * h + i / (f + i) * cand
        keep = np.ones((x.shape[0], 1), bool) if mask is None else mask[:, t : t + 1]
        h = np.where(keep, new, h)
        outs.append(np.where(keep, new, 0.0))
    return np.stack(outs, 1), h


def _build(cls, features=3, units=4, **kwargs):
    layer = cls(units, return_sequences=True, return_state=True, **kwargs)
    layer.build((None, None, features))
    # Biases away from zero so every gate and both branches of g are used.
    layer.bias.assign(np.random.default_rng(0).normal(size=layer.bias.shape).astype("float32"))
    return layer


def _steps(layer, x, states):
    outs = []
    for t in range(x.shape[1]):
        out, states = layer.step(x[:, t], states)
        outs.append(np.asarray(out))
    return np.stack(outs, 1), states


def _close(actual, expected, rtol=1e-5):
    np.testing.assert_allclose(np.asarray(actual), expected, rtol=rtol,
                               atol=rtol * max(1.0, np.abs(expected).max()))  # fmt: skip


@pytest.mark.parametrize("cls", LAYERS)
@pytest.mark.parametrize("length", [1, 7, 1000])
@pytest.mark.parametrize("activation", ["g", "linear"])
def test_parallel_equals_step_equals_reference(cls, length, activation):
    layer = _build(cls, activation=activation)
    rng = np.random.default_rng(length)
    x = rng.normal(size=(2, length, 3)).astype("float32")
    h0 = rng.normal(size=(2, 4)).astype("float32")
    expected, expected_h = reference(layer, x, h0)
    out, h = layer(x, initial_state=[h0])
    _close(out, expected)
    _close(h, expected_h)
    step_out, step_states = _steps(layer, x, [h0])
    _close(step_out, expected)
    _close(step_states[0], expected_h)


@pytest.mark.parametrize("cls", LAYERS)
def test_length_16384_matches_reference_and_stays_finite(cls):
    layer = _build(cls, features=2, units=3)
    rng = np.random.default_rng(1)
    x = rng.normal(size=(1, 16_384, 2)).astype("float32")
    expected, expected_h = reference(layer, x)
    out, h = layer(x)
    _close(out, expected)
    # Gates pushed to 0 and 1 (pre-activations of +-30): no NaN or inf.
    big = np.where(rng.random(x.shape) < 0.5, -30.0, 30.0).astype("float32")
    extreme = np.asarray(layer(big)[0])
    assert np.all(np.isfinite(extreme))
    _close(extreme, reference(layer, big)[0])


@pytest.mark.parametrize("cls", LAYERS)
def test_right_padding_keeps_the_state_and_all_masked_rows(cls):
    layer = _build(cls)
    rng = np.random.default_rng(2)
    x = rng.normal(size=(3, 6, 3)).astype("float32")
    mask = np.ones((3, 6), bool)
    mask[1, 4:] = False
    mask[2, :] = False  # a row that is entirely padding
    out, h = layer(x, mask=mask)
    alone, alone_h = layer(x[1:2, :4])
    _close(np.asarray(out)[1, :4], np.asarray(alone)[0])
    _close(np.asarray(h)[1], np.asarray(alone_h)[0])
    assert not np.asarray(out)[1, 4:].any() and not np.asarray(out)[2].any()
    assert not np.asarray(h)[2].any()
    expected, expected_h = reference(layer, x, mask=mask)
    _close(out, expected)
    # A hole in the middle keeps the state too.
    holes = mask.copy()
    holes[0, 2] = False
    _close(layer(x, mask=holes)[0], reference(layer, x, mask=holes)[0])
    # Without return_sequences: the output of each row's last real step.
    last = cls(4)
    last.build((None, None, 3))
    last.set_weights(layer.get_weights())
    _close(last(x, mask=mask), np.stack([expected[0, -1], expected[1, 3], np.zeros(4)]))


@pytest.mark.parametrize("cls", LAYERS)
def test_go_backwards_reads_the_reversed_sequence(cls):
    layer = _build(cls)
    back = cls(4, return_sequences=True, return_state=True, go_backwards=True)
    back.build((None, None, 3))
    back.set_weights(layer.get_weights())
    rng = np.random.default_rng(3)
    x = rng.normal(size=(2, 5, 3)).astype("float32")
    mask = np.ones((2, 5), bool)
    mask[1, 3:] = False
    out, h = back(x, mask=mask)
    # As keras_seqmodels.layers.Recurrent: the reversed sequence is read
    # (padding first, which keeps the initial state) and its outputs are
    # returned in reading order.
    expected, expected_h = reference(layer, x[:, ::-1], mask=mask[:, ::-1])
    _close(out, expected)
    _close(h, expected_h)
    rec = ks.layers.Recurrent(ks.cells.GRUCell(4), return_sequences=True, go_backwards=True)
    rec_out = np.asarray(rec(x, mask=mask))
    assert (rec_out[1] == 0).all(axis=-1).tolist() == (np.asarray(out)[1] == 0).all(-1).tolist()


@pytest.mark.parametrize("cls", LAYERS)
def test_stateful_calls_equal_one_long_call(cls):
    rng = np.random.default_rng(4)
    x = rng.normal(size=(2, 9, 3)).astype("float32")
    layer = _build(cls)
    whole = np.asarray(layer(x)[0])
    inputs = keras.Input((None, 3), batch_size=2)
    stateful = cls(4, return_sequences=True, stateful=True)
    model = keras.Model(inputs, stateful(inputs))
    stateful.kernel.assign(layer.kernel)
    stateful.bias.assign(layer.bias)
    parts = [np.asarray(model(x[:, :4])), np.asarray(model(x[:, 4:]))]
    _close(np.concatenate(parts, 1), whole)
    stateful.reset_states()
    _close(model(x[:, :4]), whole[:, :4])
    with pytest.raises(ValueError, match="stateful layer carries states for a batch of 2"):
        stateful(x[:1])


@pytest.mark.parametrize("cls", LAYERS)
def test_bidirectional_padded_batch_equals_each_sequence_alone(cls):
    rng = np.random.default_rng(5)
    x = rng.normal(size=(2, 6, 3)).astype("float32")
    mask = np.ones((2, 6), bool)
    mask[1, 4:] = False
    bi = ks.layers.Bidirectional(cls(4, return_sequences=True))
    out = np.asarray(bi(x, mask=mask))
    alone = np.asarray(bi(x[1:, :4]))
    _close(out[1, :4], alone[0])
    assert not out[1, 4:].any()
    last = ks.layers.Bidirectional(cls(4))
    _close(last(x, mask=mask)[1], np.asarray(last(x[1:, :4]))[0])


@pytest.mark.parametrize("cls", LAYERS)
def test_gradients_match_finite_differences(cls):
    layer = cls(3, return_sequences=True, dtype="float64")
    layer.build((None, None, 2))
    rng = np.random.default_rng(6)
    layer.bias.assign(rng.normal(size=layer.bias.shape))
    x = rng.normal(size=(2, 5, 2))
    h0 = keras.Variable(rng.normal(size=(2, 3)), dtype="float64")
    w = rng.normal(size=(2, 5, 3))

    def loss():
        return ops.sum(layer(x, initial_state=[h0]) * w)

    variables = [layer.kernel, layer.bias, h0]
    grads = compute_gradients(loss, variables)
    for var, grad in zip(variables, grads):
        base = np.asarray(var.value)
        numeric = np.zeros_like(base)
        for idx in np.ndindex(base.shape):
            for sign in (1, -1):
                moved = base.copy()
                moved[idx] += sign * 1e-6
                var.assign(moved)
                numeric[idx] += sign * float(loss()) / 2e-6
            var.assign(base)
        np.testing.assert_allclose(grad, numeric, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("cls", LAYERS)
def test_layer_contract_and_keras_file(cls):
    x = np.random.default_rng(7).normal(size=(2, 5, 3)).astype("float32")
    run_layer_test(lambda: cls(4, return_sequences=True), x, expected_output_shape=(2, 5, 4))
    run_layer_test(lambda: cls(4, return_state=True, go_backwards=True, activation="linear"), x)


@pytest.mark.parametrize("cls", LAYERS)
def test_errors_name_the_layer_and_argument(cls):
    name = cls.__name__
    with pytest.raises(ValueError, match=f"{name}: `units` must be a positive integer"):
        cls(0)
    with pytest.raises(ValueError, match=f"{name}: `units` must be an integer in"):
        cls(100_000)
    with pytest.raises(ValueError, match=f"{name}: `activation` must be one of"):
        cls(4, activation="relu")
    layer = cls(4, name="rnn")
    with pytest.raises(ValueError, match="rnn: `sequences` must be a floating-point tensor"):
        layer(np.ones((2, 3, 2), "int32"))
    with pytest.raises(ValueError, match="rnn: `sequences` must have rank 3"):
        layer(np.ones((2, 3), "float32"))
    x = np.ones((2, 3, 2), "float32")
    with pytest.raises(ValueError, match=r"rnn: `mask` must have shape \(batch, time\)"):
        layer(x, mask=np.ones((2, 4), bool))
    with pytest.raises(ValueError, match="rnn: `initial_state` must be a list of 1"):
        layer(x, initial_state=[np.ones((2, 5), "float32")])
    with pytest.raises(ValueError, match="rnn: the last dimension of `sequences` must be 2"):
        layer(np.ones((2, 3, 5), "float32"))
    with pytest.raises(ValueError, match="stateful=True needs a fixed batch size"):
        cls(4, stateful=True)(keras.Input((None, 2)))
