import keras
import numpy as np
import pytest
from keras import ops
from reference import cell_weights, run_reference

import keras_seqmodels as ks
from keras_seqmodels.layers.bidirectional import reversal_permutation
from keras_seqmodels.testing import compute_gradients, run_layer_test

# Exact float64 comparisons on TensorFlow; float32 tolerances on JAX, where
# Keras downcasts float64 inside some ops.
F64 = keras.backend.backend() == "tensorflow"
DTYPE = "float64" if F64 else "float32"
ATOL = 1e-10 if F64 else 2e-6

CELLS = {
    "ElmanCell": ks.cells.ElmanCell,
    "LSTMCell": ks.cells.LSTMCell,
    "GRUCell": ks.cells.GRUCell,
}
LENGTHS = [5, 3, 1, 4]


def randomize(layer, seed=0):
    rng = np.random.default_rng(seed)
    for v in layer.weights:
        v.assign(rng.uniform(-0.6, 0.6, v.shape).astype(v.dtype))


def ragged_batch(lengths=LENGTHS, time=6, features=3, seed=0):
    """Padded batch whose padding holds large garbage, so leaks would show."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((len(lengths), time, features)).astype(DTYPE)
    mask = np.arange(time)[None, :] < np.array(lengths)[:, None]
    x[~mask] = 50.0
    return x, mask


def make_bi(key, units=4, merge_mode="concat", **kw):
    layer = ks.layers.Recurrent(
        CELLS[key](units, dtype=DTYPE),
        return_sequences=True,
        return_state=True,
        dtype=DTYPE,
        **kw,
    )
    return ks.layers.Bidirectional(layer, merge_mode=merge_mode, dtype=DTYPE)


def reference(bi, x, lengths):
    """Forward + per-sequence-reversed backward runs, one sequence at a time."""
    fw_w = cell_weights(bi.forward_layer.cell)
    bw_w = cell_weights(bi.backward_layer.cell)
    name = type(bi.forward_layer.cell).__name__
    batch, time, _ = x.shape
    units = fw_w["recurrent_kernel"].shape[0]
    fw_out = np.zeros((batch, time, units))
    bw_out = np.zeros((batch, time, units))
    fw_states, bw_states = [], []
    for b, n in enumerate(lengths):
        seq = x[b : b + 1, :n].astype(np.float64)
        out, states = run_reference(name, seq, fw_w)
        fw_out[b, :n] = out[0]
        fw_states.append(states)
        out, states = run_reference(name, seq[:, ::-1], bw_w)
        bw_out[b, :n] = out[0, ::-1]
        bw_states.append(states)
    stack = lambda per_row: [  # noqa: E731
        np.concatenate([row[k] for row in per_row]) for k in range(len(per_row[0]))
    ]
    return fw_out, bw_out, stack(fw_states), stack(bw_states)


@pytest.mark.parametrize("key", list(CELLS))
def test_ragged_batch_equals_per_sequence_runs(key):
    x, mask = ragged_batch()
    bi = make_bi(key)
    bi.build(x.shape)
    randomize(bi)
    out, *states = bi(x, mask=mask)
    fw, bw, fw_states, bw_states = reference(bi, x, LENGTHS)
    np.testing.assert_allclose(ops.convert_to_numpy(out), np.concatenate([fw, bw], -1), atol=ATOL)
    n = len(fw_states)
    for got, want in zip(states, fw_states + bw_states):
        np.testing.assert_allclose(ops.convert_to_numpy(got), want, atol=ATOL)
    assert len(states) == 2 * n


@pytest.mark.parametrize("key", ["GRUCell"])
def test_no_mask_reverses_whole_sequence(key):
    x, _ = ragged_batch(lengths=[6, 6])
    bi = make_bi(key)
    bi.build(x.shape)
    randomize(bi, seed=4)
    out = ops.convert_to_numpy(bi(x)[0])
    fw, bw, _, _ = reference(bi, x, [6, 6])
    np.testing.assert_allclose(out, np.concatenate([fw, bw], -1), atol=ATOL)


def test_mask_with_holes_and_left_padding():
    # Row 0 is left-padded, row 1 has a hole; each must equal its valid steps
    # compacted into a sequence of their own.
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 5, 3)).astype(DTYPE)
    mask = np.array([[0, 0, 1, 1, 1], [1, 0, 1, 0, 1]], bool)
    bi = make_bi("LSTMCell")
    bi.build(x.shape)
    randomize(bi, seed=5)
    out = ops.convert_to_numpy(bi(x, mask=mask)[0])
    for b in range(2):
        steps = np.flatnonzero(mask[b])
        compact = x[b : b + 1, steps]
        fw, bw, _, _ = reference(bi, compact, [len(steps)])
        np.testing.assert_allclose(out[b, steps], np.concatenate([fw, bw], -1)[0], atol=ATOL)
        np.testing.assert_array_equal(out[b, ~mask[b]], 0.0)


def test_reversal_permutation_matches_numpy():
    mask = np.array([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1], [0, 0, 0, 0, 0], [0, 1, 0, 1, 1]], bool)
    order, inverse, rmask = (ops.convert_to_numpy(t) for t in reversal_permutation(mask))
    for b, row in enumerate(mask):
        valid, pad = np.flatnonzero(row), np.flatnonzero(~row)
        want = np.concatenate([valid[::-1], pad])
        np.testing.assert_array_equal(order[b], want)
        np.testing.assert_array_equal(inverse[b][order[b]], np.arange(5))
        np.testing.assert_array_equal(rmask[b], np.arange(5) < len(valid))


@pytest.mark.parametrize(
    "mode, fn",
    [
        ("sum", lambda a, b: a + b),
        ("mean", lambda a, b: (a + b) / 2),
        ("product", lambda a, b: a * b),
        ("mul", lambda a, b: a * b),
        ("ave", lambda a, b: (a + b) / 2),
    ],
)
def test_merge_modes(mode, fn):
    x, mask = ragged_batch()
    bi = make_bi("GRUCell", merge_mode=mode)
    bi.build(x.shape)
    randomize(bi, seed=1)
    out = ops.convert_to_numpy(bi(x, mask=mask)[0])
    fw, bw, _, _ = reference(bi, x, LENGTHS)
    np.testing.assert_allclose(out, fn(fw, bw), atol=ATOL)


def test_merge_none_returns_both_directions():
    x, mask = ragged_batch()
    bi = make_bi("ElmanCell", merge_mode=None)
    bi.build(x.shape)
    randomize(bi, seed=2)
    fw_out, bw_out, fw_h, bw_h = bi(x, mask=mask)
    fw, bw, fw_states, bw_states = reference(bi, x, LENGTHS)
    np.testing.assert_allclose(ops.convert_to_numpy(fw_out), fw, atol=ATOL)
    np.testing.assert_allclose(ops.convert_to_numpy(bw_out), bw, atol=ATOL)
    np.testing.assert_allclose(ops.convert_to_numpy(fw_h), fw_states[0], atol=ATOL)
    np.testing.assert_allclose(ops.convert_to_numpy(bw_h), bw_states[0], atol=ATOL)


def test_last_output_without_return_sequences():
    x, mask = ragged_batch()
    layer = ks.layers.Recurrent(ks.cells.GRUCell(4, dtype=DTYPE), dtype=DTYPE)
    bi = ks.layers.Bidirectional(layer, dtype=DTYPE)
    bi.build(x.shape)
    randomize(bi, seed=6)
    out = ops.convert_to_numpy(bi(x, mask=mask))
    fw, bw, _, _ = reference(bi, x, LENGTHS)
    # Forward: output at each row's last valid step; backward: at step 0.
    last = fw[np.arange(len(LENGTHS)), np.array(LENGTHS) - 1]
    np.testing.assert_allclose(out, np.concatenate([last, bw[:, 0]], -1), atol=ATOL)


def test_initial_state_goes_forward_then_backward():
    x, mask = ragged_batch()
    bi = make_bi("LSTMCell")
    bi.build(x.shape)
    randomize(bi, seed=7)
    rng = np.random.default_rng(8)
    init = [rng.standard_normal((4, 4)).astype(DTYPE) for _ in range(4)]
    out = ops.convert_to_numpy(bi(x, mask=mask, initial_state=init)[0])
    fw_w, bw_w = cell_weights(bi.forward_layer.cell), cell_weights(bi.backward_layer.cell)
    for b, n in enumerate(LENGTHS):
        seq = x[b : b + 1, :n]
        f, _ = run_reference("LSTMCell", seq, fw_w, states=[s[b : b + 1] for s in init[:2]])
        g, _ = run_reference(
            "LSTMCell", seq[:, ::-1], bw_w, states=[s[b : b + 1] for s in init[2:]]
        )
        np.testing.assert_allclose(out[b, :n], np.concatenate([f[0], g[0, ::-1]], -1), atol=ATOL)


def test_gradients_of_padded_batch_equal_sum_over_sequences():
    x, mask = ragged_batch()
    proj = np.random.default_rng(9).standard_normal((4, 6, 8)).astype(DTYPE)
    bi = make_bi("GRUCell")
    bi.build(x.shape)
    randomize(bi, seed=10)
    variables = bi.trainable_weights

    batch_grads = compute_gradients(lambda: ops.sum(bi(x, mask=mask)[0] * proj), variables)
    row_grads = [np.zeros_like(g) for g in batch_grads]
    for b, n in enumerate(LENGTHS):
        seq, p = x[b : b + 1, :n], proj[b : b + 1, :n]
        grads = compute_gradients(lambda: ops.sum(bi(seq)[0] * p), variables)  # noqa: B023
        row_grads = [a + g for a, g in zip(row_grads, grads)]
    for got, want in zip(batch_grads, row_grads):
        np.testing.assert_allclose(got, want, atol=1e-9 if F64 else 1e-4)
    assert all(np.abs(g).max() > 0 for g in batch_grads)


def test_gradients_match_finite_differences():
    # d loss / d input via the backward direction's gather: perturb one
    # valid input step and compare with the analytic gradient.
    x, mask = ragged_batch(lengths=[4, 2], time=4, features=2)
    proj = np.random.default_rng(11).standard_normal((2, 4, 6)).astype(DTYPE)
    bi = make_bi("ElmanCell", units=3)
    bi.build(x.shape)
    randomize(bi, seed=12)
    xv = keras.Variable(x, dtype=DTYPE)
    (grad,) = compute_gradients(lambda: ops.sum(bi(xv.value, mask=mask)[0] * proj), [xv])

    def loss(xn):
        return float(ops.convert_to_numpy(ops.sum(bi(xn, mask=mask)[0] * proj)))

    eps = 1e-6 if F64 else 1e-2
    for idx in [(0, 0, 0), (0, 3, 1), (1, 1, 0), (1, 0, 1)]:
        plus, minus = x.copy(), x.copy()
        plus[idx] += eps
        minus[idx] -= eps
        numeric = (loss(plus) - loss(minus)) / (2 * eps)
        np.testing.assert_allclose(grad[idx], numeric, rtol=1e-5 if F64 else 2e-2, atol=1e-7)
    # Padding never influences the loss.
    np.testing.assert_array_equal(grad[1, 2:], 0.0)


def test_wraps_keras_lstm_and_matches_keras_bidirectional_with_mask():
    x, mask = ragged_batch()
    x = x.astype("float32")
    ours = ks.layers.Bidirectional(keras.layers.LSTM(4, return_sequences=True))
    theirs = keras.layers.Bidirectional(keras.layers.LSTM(4, return_sequences=True))
    ours.build(x.shape)
    theirs.build(x.shape)
    randomize(ours, seed=13)
    for src, dst in zip(ours.weights, theirs.weights):
        dst.assign(src.value)
    np.testing.assert_allclose(
        ops.convert_to_numpy(ours(x, mask=mask)),
        ops.convert_to_numpy(theirs(x, mask=mask)),
        atol=2e-6,
    )


def test_fit_with_mask_from_embedding():
    ids = np.array([[3, 5, 2, 0, 0], [1, 4, 4, 4, 2], [6, 0, 0, 0, 0]], "int32")
    model = keras.Sequential(
        [
            keras.Input((5,), dtype="int32"),
            keras.layers.Embedding(8, 3, mask_zero=True),
            ks.layers.Bidirectional(
                ks.layers.Recurrent(ks.cells.LSTMCell(4), return_sequences=True)
            ),
            keras.layers.Dense(2),
        ]
    )
    model.compile("adam", "mse")
    history = model.fit(ids, np.zeros((3, 5, 2), "float32"), epochs=2, verbose=0)
    assert np.all(np.isfinite(history.history["loss"]))


@pytest.mark.slow
@pytest.mark.parametrize("merge_mode", ["concat", None])
def test_layer_contract(merge_mode):
    x = np.random.default_rng(0).standard_normal((2, 4, 3)).astype("float32")
    run_layer_test(
        lambda: ks.layers.Bidirectional(
            ks.layers.Recurrent(ks.cells.LSTMCell(5), return_sequences=True, return_state=True),
            merge_mode=merge_mode,
        ),
        x,
        expected_output_shape=(2, 4, 10 if merge_mode else 5),
    )


@pytest.mark.slow
def test_layer_contract_keras_gru():
    x = np.random.default_rng(0).standard_normal((2, 4, 3)).astype("float32")
    run_layer_test(
        lambda: ks.layers.Bidirectional(keras.layers.GRU(3), merge_mode="sum"),
        x,
        expected_output_shape=(2, 3),
    )


def test_argument_errors():
    rnn = ks.layers.Recurrent(ks.cells.GRUCell(2), return_sequences=True)
    with pytest.raises(ValueError, match="merge_mode"):
        ks.layers.Bidirectional(rnn, merge_mode="max")
    with pytest.raises(ValueError, match="go_backwards"):
        ks.layers.Bidirectional(ks.layers.Recurrent(ks.cells.GRUCell(2), go_backwards=True))
    with pytest.raises(ValueError, match="stateful"):
        ks.layers.Bidirectional(keras.layers.GRU(2, stateful=True))
    with pytest.raises(ValueError, match="`layer` must be"):
        ks.layers.Bidirectional(keras.layers.Dense(2))
    with pytest.raises(ValueError, match="return_sequences"):
        ks.layers.Bidirectional(rnn, backward_layer=keras.layers.GRU(2))
    with pytest.raises(ValueError, match="rank 3"):
        ks.layers.Bidirectional(rnn)(np.ones((2, 3), "float32"))
    with pytest.raises(ValueError, match="even number"):
        ks.layers.Bidirectional(rnn)(
            np.ones((1, 3, 2), "float32"), initial_state=[np.zeros((1, 2), "float32")]
        )
