import math

import keras
import numpy as np
import pytest
from keras import ops
from reference import cell_weights, run_reference

import keras_seqmodels as ks
from keras_seqmodels.testing import compute_gradients, run_layer_test

# Keras promotes float64 to float32 inside some ops on JAX and PyTorch, so the
# exact float64 comparison runs on TensorFlow and a float32 one elsewhere.
F64 = keras.backend.backend() == "tensorflow"
DTYPE = "float64" if F64 else "float32"
ATOL = 1e-10 if F64 else 2e-6

CELLS = {
    "ElmanCell": lambda **kw: ks.cells.ElmanCell(5, **kw),
    "LSTMCell": lambda **kw: ks.cells.LSTMCell(5, **kw),
    "LSTMCell_peep": lambda **kw: ks.cells.LSTMCell(5, use_peepholes=True, **kw),
    "GRUCell": lambda **kw: ks.cells.GRUCell(5, **kw),
    "GRUCell_before": lambda **kw: ks.cells.GRUCell(5, reset_after=False, **kw),
    "GatedCell": lambda **kw: ks.cells.GatedCell(5, **kw),
}


def ref_name(key):
    return key.split("_")[0]


def randomize(layer, seed=0):
    """Give every weight random values (bias and peepholes included)."""
    rng = np.random.default_rng(seed)
    for v in layer.weights:
        v.assign(rng.uniform(-0.6, 0.6, v.shape).astype(v.dtype))


def make_layer(key, dtype=DTYPE, **kw):
    cell = CELLS[key](dtype=dtype, **kw)
    return ks.layers.Recurrent(cell, return_sequences=True, return_state=True, dtype=dtype)


@pytest.mark.parametrize("key", list(CELLS))
def test_forward_matches_numpy(key):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((3, 6, 4)).astype(DTYPE)
    layer = make_layer(key)
    layer.build(x.shape)
    randomize(layer)
    out, *states = layer(x)
    ref_out, ref_states = run_reference(ref_name(key), x, cell_weights(layer.cell))
    np.testing.assert_allclose(ops.convert_to_numpy(out), ref_out, atol=ATOL)
    for s, r in zip(states, ref_states):
        np.testing.assert_allclose(ops.convert_to_numpy(s), r, atol=ATOL)


@pytest.mark.parametrize("key", list(CELLS))
def test_gradients_match_numpy_finite_differences(key):
    rng = np.random.default_rng(2)
    x = rng.standard_normal((2, 4, 3)).astype(DTYPE)
    proj = rng.standard_normal((2, 4, 5)).astype(DTYPE)
    layer = make_layer(key)
    layer.build(x.shape)
    randomize(layer, seed=3)

    def loss_fn():
        out = layer(x)[0]
        return ops.sum(out * proj)

    grads = compute_gradients(loss_fn, layer.cell.trainable_weights)
    weights = cell_weights(layer.cell)
    eps = 1e-6
    for var, grad in zip(layer.cell.trainable_weights, grads):
        name = var.path.split("/")[-1]
        numeric = np.zeros_like(weights[name])
        for idx in np.ndindex(numeric.shape):
            w_plus = {k: v.copy() for k, v in weights.items()}
            w_minus = {k: v.copy() for k, v in weights.items()}
            w_plus[name][idx] += eps
            w_minus[name][idx] -= eps
            f_plus = np.sum(run_reference(ref_name(key), x, w_plus)[0] * proj)
            f_minus = np.sum(run_reference(ref_name(key), x, w_minus)[0] * proj)
            # (x and proj are upcast to float64 by NumPy.)
            numeric[idx] = (f_plus - f_minus) / (2 * eps)
        np.testing.assert_allclose(
            grad, numeric, atol=1e-7 if F64 else 1e-4, rtol=1e-6 if F64 else 1e-4
        )


def _golden_layer(cell):
    layer = ks.layers.Recurrent(cell, return_sequences=True, return_state=True)
    x = np.array([[[1.0], [2.0]]], "float32")
    out, *states = layer(x)
    return ops.convert_to_numpy(out)[0, :, 0], [ops.convert_to_numpy(s)[0, 0] for s in states]


CONST = dict(
    kernel_initializer=keras.initializers.Constant(0.5),
    recurrent_initializer=keras.initializers.Constant(-0.25),
    bias_initializer=keras.initializers.Constant(0.1),
)


def sig(a):
    return 1.0 / (1.0 + math.exp(-a))


def test_golden_elman():
    out, _ = _golden_layer(ks.cells.ElmanCell(1, **CONST))
    h1 = math.tanh(0.5 * 1 + 0.1)
    h2 = math.tanh(0.5 * 2 + 0.1 - 0.25 * h1)
    np.testing.assert_allclose(out, [h1, h2], rtol=1e-6)
    np.testing.assert_allclose([h1, h2], [0.5370496, 0.7468252], rtol=1e-6)


def test_golden_lstm_with_forget_bias_one():
    out, (h, c) = _golden_layer(ks.cells.LSTMCell(1, **CONST))
    # Gates i, f, g, o. unit_forget_bias replaces the forget gate's bias by 1;
    # the other gates use the bias initializer (0.1).
    i1, f1, g1, o1 = sig(0.6), sig(0.5 + 1.0), math.tanh(0.6), sig(0.6)
    c1 = f1 * 0.0 + i1 * g1  # c(0) = 0
    h1 = o1 * math.tanh(c1)
    a = 1.0 + 0.1 - 0.25 * h1
    i2, f2, g2, o2 = sig(a), sig(1.0 + 1.0 - 0.25 * h1), math.tanh(a), sig(a)
    c2 = f2 * c1 + i2 * g2
    h2 = o2 * math.tanh(c2)
    np.testing.assert_allclose(out, [h1, h2], rtol=1e-6)
    np.testing.assert_allclose([h, c], [h2, c2], rtol=1e-6)
    np.testing.assert_allclose([h1, h2], [0.2153197, 0.5231028], rtol=1e-5)


def test_golden_gru_reset_after():
    out, _ = _golden_layer(ks.cells.GRUCell(1, **CONST))
    # Both bias rows (input and recurrent) are 0.1; the recurrent one of the
    # candidate sits inside the reset gate.
    u1 = r1 = sig(0.7)
    h1 = (1 - u1) * math.tanh(0.6 + r1 * 0.1)
    a = -0.25 * h1 + 0.1
    u2 = r2 = sig(1.1 + a)
    h2 = u2 * h1 + (1 - u2) * math.tanh(1.1 + r2 * a)
    np.testing.assert_allclose(out, [h1, h2], rtol=1e-6)
    np.testing.assert_allclose([h1, h2], [0.1934078, 0.3425049], rtol=1e-5)


def test_golden_gru_reset_before():
    out, _ = _golden_layer(ks.cells.GRUCell(1, reset_after=False, **CONST))
    u1 = sig(0.6)
    h1 = (1 - u1) * math.tanh(0.6)
    u2, r2 = sig(1.1 - 0.25 * h1), sig(1.1 - 0.25 * h1)
    h2 = u2 * h1 + (1 - u2) * math.tanh(1.1 - 0.25 * r2 * h1)
    np.testing.assert_allclose(out, [h1, h2], rtol=1e-6)
    np.testing.assert_allclose([h1, h2], [0.1903001, 0.3448235], rtol=1e-5)


def test_golden_gated():
    out, _ = _golden_layer(ks.cells.GatedCell(1, **CONST))
    g1 = sig(0.6)
    s1 = g1 * math.tanh(0.6)
    g2 = sig(1.1 - 0.25 * s1)
    s2 = (1 - g2) * s1 + g2 * math.tanh(1.1 - 0.25 * s1)
    np.testing.assert_allclose(out, [s1, s2], rtol=1e-6)
    np.testing.assert_allclose([s1, s2], [0.3467494, 0.6551682], rtol=1e-5)


@pytest.mark.parametrize("key", list(CELLS))
def test_layer_contract(key):
    x = np.random.default_rng(0).standard_normal((2, 4, 3)).astype("float32")
    run_layer_test(
        lambda: ks.layers.Recurrent(
            CELLS[key](dropout=0.2, recurrent_dropout=0.2), return_sequences=True
        ),
        x,
        expected_output_shape=(2, 4, 5),
    )


@pytest.mark.parametrize("key", list(CELLS))
def test_inside_keras_rnn_and_bidirectional(key):
    x = np.random.default_rng(0).standard_normal((2, 5, 3)).astype("float32")
    ours = ks.layers.Recurrent(CELLS[key](), return_sequences=True)
    out = ops.convert_to_numpy(ours(x))
    theirs = keras.layers.RNN(ours.cell, return_sequences=True)
    np.testing.assert_allclose(ops.convert_to_numpy(theirs(x)), out, atol=1e-6)
    bi = keras.layers.Bidirectional(keras.layers.RNN(CELLS[key](), return_sequences=True))
    assert tuple(bi(x).shape) == (2, 5, 10)
    bi_ours = keras.layers.Bidirectional(ks.layers.Recurrent(CELLS[key](), return_sequences=True))
    y = bi_ours(x)
    fwd = ops.convert_to_numpy(bi_ours.forward_layer(x))
    bwd = ops.convert_to_numpy(bi_ours.backward_layer(x))[:, ::-1]
    np.testing.assert_allclose(ops.convert_to_numpy(y), np.concatenate([fwd, bwd], -1), atol=1e-6)


@pytest.mark.parametrize("key", list(CELLS))
def test_dropout_is_per_sequence_and_only_in_training(key):
    x = np.ones((4, 6, 3), "float32")
    layer = ks.layers.Recurrent(
        CELLS[key](dropout=0.5, recurrent_dropout=0.5, seed=1), return_sequences=True
    )
    inference = ops.convert_to_numpy(layer(x, training=False))
    np.testing.assert_allclose(inference, ops.convert_to_numpy(layer(x, training=False)))
    train_a = ops.convert_to_numpy(layer(x, training=True))
    assert np.all(np.isfinite(train_a))
    assert not np.allclose(train_a, inference)


def test_fit_with_dropout_under_jit():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((16, 7, 3)).astype("float32")
    y = x.sum(axis=(1, 2))[:, None].astype("float32")
    model = keras.Sequential(
        [
            keras.Input((7, 3)),
            ks.layers.Recurrent(ks.cells.LSTMCell(8, dropout=0.2, recurrent_dropout=0.2)),
            keras.layers.Dense(1),
        ]
    )
    model.compile(optimizer="adam", loss="mse", jit_compile=True)
    history = model.fit(x, y, epochs=3, batch_size=8, verbose=0)
    assert np.all(np.isfinite(history.history["loss"]))


def test_lstm_forget_bias_and_peepholes():
    cell = ks.cells.LSTMCell(3, use_peepholes=True)
    cell.build((None, 2))
    bias = ops.convert_to_numpy(cell.bias)
    np.testing.assert_array_equal(bias[3:6], np.ones(3))
    np.testing.assert_array_equal(np.delete(bias, range(3, 6)), np.zeros(9))
    assert tuple(cell.peephole_kernel.shape) == (3, 3)
    plain = ks.cells.LSTMCell(3, unit_forget_bias=False)
    plain.build((None, 2))
    np.testing.assert_array_equal(ops.convert_to_numpy(plain.bias), np.zeros(12))


@pytest.mark.parametrize("key", ["ElmanCell", "LSTMCell", "GRUCell", "GatedCell"])
def test_bad_arguments_name_the_layer(key):
    cls = getattr(ks.cells, key)
    with pytest.raises(ValueError, match=f"{key}: `units` must be a positive integer"):
        cls(0)
    with pytest.raises(ValueError, match=f"{key}: `units`"):
        cls(2.5)
    with pytest.raises(ValueError, match=f"{key}: `dropout`"):
        cls(3, dropout=1.5)
    with pytest.raises(ValueError, match=f"{key}: a cell's step input must have rank 2"):
        cls(3).build((2, 3, 4))
