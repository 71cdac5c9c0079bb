import keras
import numpy as np
import pytest
from keras import ops
from reference import cell_weights, run_reference

import keras_seqmodels as ks
from keras_seqmodels.testing import run_layer_test

CELL_NAMES = ["ElmanCell", "LSTMCell", "GRUCell", "GatedCell"]


def new_cell(name, units=4, **kw):
    return getattr(ks.cells, name)(units, **kw)


def np_(x):
    return ops.convert_to_numpy(x)


@pytest.mark.parametrize("name", CELL_NAMES)
@pytest.mark.parametrize("precompute", [False, True])
def test_padded_masked_batch_equals_each_sequence_alone(name, precompute):
    rng = np.random.default_rng(0)
    lengths = [6, 3, 1, 5]
    x = rng.standard_normal((4, 6, 3)).astype("float32")
    mask = np.arange(6)[None, :] < np.array(lengths)[:, None]
    x[~mask] = 99.0  # padding content must never matter
    layer = ks.layers.Recurrent(
        new_cell(name),
        return_sequences=True,
        return_state=True,
        precompute_inputs=precompute,
    )
    out, *states = layer(x, mask=mask)
    out = np_(out)
    for i, n in enumerate(lengths):
        alone, *alone_states = layer(x[i : i + 1, :n])
        np.testing.assert_allclose(out[i, :n], np_(alone)[0], atol=1e-5)
        np.testing.assert_array_equal(out[i, n:], 0.0)
        for s, a in zip(states, alone_states):
            np.testing.assert_allclose(np_(s)[i], np_(a)[0], atol=1e-5)
    ref_out, _ = run_reference(
        name, x.astype("float64"), cell_weights(layer.cell), mask=mask.astype(float)
    )
    np.testing.assert_allclose(out, ref_out, atol=1e-5)


def test_precomputed_projection_equals_in_loop_projection():
    x = np.random.default_rng(1).standard_normal((3, 7, 5)).astype("float32")
    a = ks.layers.Recurrent(ks.cells.LSTMCell(6), return_sequences=True)
    a.build(x.shape)
    b = ks.layers.Recurrent(ks.cells.LSTMCell(6), return_sequences=True, precompute_inputs=True)
    b.build(x.shape)
    b.set_weights(a.get_weights())
    np.testing.assert_allclose(np_(a(x)), np_(b(x)), atol=1e-6)


def test_fully_masked_rows_keep_initial_state():
    x = np.ones((2, 4, 3), "float32")
    mask = np.array([[True] * 4, [False] * 4])
    h0 = np.full((2, 5), 0.3, "float32")
    layer = ks.layers.Recurrent(ks.cells.ElmanCell(5), return_sequences=True, return_state=True)
    out, h = layer(x, initial_state=[h0], mask=mask)
    np.testing.assert_array_equal(np_(out)[1], 0.0)
    np.testing.assert_allclose(np_(h)[1], h0[1])
    assert np.all(np.isfinite(np_(out)))


def test_zero_length_sequences_return_initial_state():
    layer = ks.layers.Recurrent(ks.cells.LSTMCell(4), return_sequences=True, return_state=True)
    h0 = np.full((2, 4), 0.5, "float32")
    c0 = np.full((2, 4), -0.5, "float32")
    out, h, c = layer(np.zeros((2, 0, 3), "float32"), initial_state=[h0, c0])
    assert tuple(out.shape) == (2, 0, 4)
    np.testing.assert_allclose(np_(h), h0)
    np.testing.assert_allclose(np_(c), c0)


def test_empty_batch():
    layer = ks.layers.Recurrent(ks.cells.GRUCell(4), return_sequences=True)
    out = layer(np.zeros((0, 5, 3), "float32"))
    assert tuple(out.shape) == (0, 5, 4)


def test_initial_state_and_go_backwards():
    rng = np.random.default_rng(2)
    x = rng.standard_normal((2, 5, 3)).astype("float32")
    h0 = rng.standard_normal((2, 4)).astype("float32")
    fwd = ks.layers.Recurrent(ks.cells.ElmanCell(4), return_sequences=True)
    fwd.build(x.shape)
    bwd = ks.layers.Recurrent(ks.cells.ElmanCell(4), return_sequences=True, go_backwards=True)
    bwd.build(x.shape)
    bwd.set_weights(fwd.get_weights())
    np.testing.assert_allclose(
        np_(bwd(x, initial_state=[h0])),
        np_(fwd(x[:, ::-1], initial_state=[h0])),
        atol=1e-6,
    )
    ref, _ = run_reference("ElmanCell", x.astype("float64"), cell_weights(fwd.cell), states=[h0])
    np.testing.assert_allclose(np_(fwd(x, initial_state=[h0])), ref, atol=1e-5)


@pytest.mark.parametrize("name", CELL_NAMES)
def test_stateful_carry_over_equals_one_long_run(name):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 8, 3)).astype("float32")
    full = ks.layers.Recurrent(new_cell(name), return_sequences=True)
    full.build(x.shape)
    stateful = ks.layers.Recurrent(new_cell(name), return_sequences=True, stateful=True)
    stateful.build(x.shape)
    stateful.cell.set_weights(full.cell.get_weights())
    first = np_(stateful(x[:, :5]))
    second = np_(stateful(x[:, 5:]))
    np.testing.assert_allclose(np.concatenate([first, second], 1), np_(full(x)), atol=1e-5)
    stateful.reset_states()
    np.testing.assert_allclose(np_(stateful(x[:, :5])), first, atol=1e-6)


def test_stateful_rejects_another_batch_size():
    layer = ks.layers.Recurrent(ks.cells.LSTMCell(3), stateful=True)
    layer(np.zeros((4, 2, 2), "float32"))
    with pytest.raises(ValueError, match="stateful layer carries states for a batch of 4"):
        layer(np.zeros((3, 2, 2), "float32"))


def test_stateful_needs_fixed_batch_size():
    layer = ks.layers.Recurrent(ks.cells.LSTMCell(3), stateful=True)
    with pytest.raises(ValueError, match="stateful=True needs a fixed batch size"):
        layer(keras.Input((5, 2)))


@keras.saving.register_keras_serializable(package="keras_seqmodels_tests")
class OuterProductMemoryCell(keras.layers.Layer):
    """A test cell with a matrix state and a nested tuple state.

    M(t) = decay * M(t-1) + x(t) x(t)^T;  (count, total)(t) = (count + 1,
    total + sum(x)); output = M(t) x(t) flattened with count and total.
    """

    def __init__(self, width, decay=0.5, **kwargs):
        super().__init__(**kwargs)
        self.width = width
        self.decay = decay
        self.state_size = [(width, width), (1,), (1,)]
        self.output_size = width + 2

    def get_initial_state(self, batch_size=None):
        return [
            ops.zeros((batch_size, self.width, self.width)),
            (ops.zeros((batch_size, 1)), ops.zeros((batch_size, 1))),
        ]

    def call(self, x, states):
        memory, (count, total) = states[0], states[1]
        memory = self.decay * memory + x[:, :, None] * x[:, None, :]
        count = count + 1.0
        total = total + ops.sum(x, axis=-1, keepdims=True)
        read = ops.einsum("bij,bj->bi", memory, x)
        return ops.concatenate([read, count, total], -1), [memory, (count, total)]

    def get_config(self):
        return {**super().get_config(), "width": self.width, "decay": self.decay}


def test_matrix_and_nested_states_with_mask():
    rng = np.random.default_rng(4)
    x = rng.standard_normal((3, 5, 2)).astype("float32")
    lengths = np.array([5, 2, 4])
    mask = np.arange(5)[None] < lengths[:, None]
    layer = ks.layers.Recurrent(OuterProductMemoryCell(2), return_sequences=True, return_state=True)
    out, memory, count, total = layer(x, mask=mask)
    for b in range(3):
        m = np.zeros((2, 2))
        for t in range(lengths[b]):
            m = 0.5 * m + np.outer(x[b, t], x[b, t])
        np.testing.assert_allclose(np_(memory)[b], m, atol=1e-5)
        np.testing.assert_allclose(np_(count)[b], [lengths[b]])
        np.testing.assert_allclose(np_(total)[b], [x[b, : lengths[b]].sum()], atol=1e-5)
        np.testing.assert_allclose(
            np_(out)[b, lengths[b] - 1, :2], m @ x[b, lengths[b] - 1], atol=1e-5
        )
    assert tuple(memory.shape) == (3, 2, 2)


def test_matrix_state_layer_serializes():
    x = np.random.default_rng(5).standard_normal((2, 3, 2)).astype("float32")
    run_layer_test(
        lambda: ks.layers.Recurrent(OuterProductMemoryCell(2), return_sequences=True),
        x,
        expected_output_shape=(2, 3, 4),
        run_mixed_precision=False,
    )


def test_errors_name_the_layer_and_the_problem():
    layer = ks.layers.Recurrent(ks.cells.LSTMCell(3), name="my_rnn")
    with pytest.raises(ValueError, match="my_rnn: `sequences` must have rank 3"):
        layer(np.zeros((2, 3), "float32"))
    layer = ks.layers.Recurrent(ks.cells.LSTMCell(3), name="my_rnn2")
    with pytest.raises(ValueError, match="my_rnn2: `sequences` must be a floating-point"):
        layer(np.zeros((2, 3, 4), "int32"))
    layer = ks.layers.Recurrent(ks.cells.LSTMCell(3), name="my_rnn3")
    with pytest.raises(ValueError, match=r"my_rnn3: `mask` must have shape \(batch, time\)"):
        layer(np.zeros((2, 3, 4), "float32"), mask=np.ones((2, 4), bool))
    with pytest.raises(ValueError, match="Recurrent: `cell` must be a Keras layer"):
        ks.layers.Recurrent("lstm")
    with pytest.raises(ValueError, match="LSTMCell: `units` must be a positive integer"):
        ks.cells.LSTMCell(-1)


def test_fit_lowers_the_loss_under_jit():
    rng = np.random.default_rng(6)
    x = rng.standard_normal((64, 10, 2)).astype("float32")
    y = x[:, :, 0].cumsum(axis=1)[:, -1:].astype("float32")
    keras.utils.set_random_seed(0)
    model = keras.Sequential(
        [
            keras.Input((10, 2)),
            ks.layers.Recurrent(ks.cells.GRUCell(16)),
            keras.layers.Dense(1),
        ]
    )
    model.compile(optimizer=keras.optimizers.Adam(1e-2), loss="mse", jit_compile=True)
    before = model.evaluate(x, y, verbose=0)
    model.fit(x, y, epochs=30, batch_size=16, verbose=0)
    after = model.evaluate(x, y, verbose=0)
    assert after < 0.3 * before


def test_inside_keras_bidirectional_with_mask():
    rng = np.random.default_rng(7)
    x = rng.standard_normal((2, 5, 3)).astype("float32")
    mask = np.array([[1, 1, 1, 1, 1], [1, 1, 1, 0, 0]], bool)
    bi = keras.layers.Bidirectional(
        ks.layers.Recurrent(ks.cells.LSTMCell(4), return_sequences=True)
    )
    out = np_(bi(x, mask=mask))
    assert out.shape == (2, 5, 8)
    fwd_alone = np_(bi.forward_layer(x[1:, :3]))
    np.testing.assert_allclose(out[1, :3, :4], fwd_alone[0], atol=1e-5)
