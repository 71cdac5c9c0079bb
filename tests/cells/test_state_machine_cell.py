"""StateMachineCell: the chapter's plain RNN equals ElmanCell plus a Dense
output, the gated form against a NumPy reference (masks with holes, learned
and given s0), save/load with its sub-layers, Bidirectional, Keras's RNN, and
its argument checks."""

import json

import keras
import numpy as np
import pytest
from keras import ops

import keras_seqmodels as ks
from keras_seqmodels.testing import compute_gradients, run_layer_test

F64 = keras.backend.backend() == "tensorflow"
DTYPE = "float64" if F64 else "float32"
ATOL = 1e-10 if F64 else 3e-6


def _sigmoid(a):
    return 1.0 / (1.0 + np.exp(-a))


def _dense(units, activation=None, dtype=DTYPE):
    return keras.layers.Dense(units, activation=activation, dtype=dtype)


def _randomize(layer, seed=0, scale=0.6):
    rng = np.random.default_rng(seed)
    for w in layer.weights:
        w.assign(scale * rng.standard_normal(w.shape).astype(w.dtype))


def _gated_machine(units=3, outputs=2, dtype=DTYPE, **kwargs):
    return ks.cells.StateMachineCell(
        _dense(units, "tanh", dtype),
        output=_dense(outputs, "sigmoid", dtype),
        gate=_dense(units, "sigmoid", dtype),
        dtype=dtype,
        **kwargs,
    )


def _reference(x, mask, weights, s0):
    """s' = s + g (tanh([s, x] W + b) - s), g = σ([s, x] W_g + b_g),
    y = σ(s' V + c); masked steps keep s and output zeros."""
    w, b, v, c, wg, bg = weights
    batch, time, _ = x.shape
    s = np.tile(s0, (batch, 1))
    ys = np.zeros((batch, time, v.shape[1]))
    for t in range(time):
        sx = np.concatenate([s, x[:, t]], axis=-1)
        g = _sigmoid(sx @ wg + bg)
        new = s + g * (np.tanh(sx @ w + b) - s)
        keep = mask[:, t : t + 1]
        s = np.where(keep, new, s)
        ys[:, t] = np.where(keep, _sigmoid(s @ v + c), 0.0)
    return ys, s


def _weights(cell):
    read = ops.convert_to_numpy
    return [
        read(cell.transition_layer.kernel),
        read(cell.transition_layer.bias),
        read(cell.output_layer.kernel),
        read(cell.output_layer.bias),
        read(cell.gate_layer.kernel),
        read(cell.gate_layer.bias),
    ]


def test_plain_rnn_is_elman_cell_plus_dense_output():
    """f_s = tanh(W^sx x + W^ss s + b), f_o = σ(W^o s + b_o) with ElmanCell's
    weights ([W^ss; W^sx] as the kernel: state first) gives ElmanCell's
    states and a Dense's outputs, with and without a mask."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 6, 2)).astype(DTYPE)
    mask = np.array([[1] * 6, [1, 1, 0, 1, 1, 0], [0] * 6], bool)
    elman = ks.layers.Recurrent(ks.cells.ElmanCell(4, dtype=DTYPE), return_sequences=True,
                                return_state=True, dtype=DTYPE)
    readout = _dense(3, "sigmoid")
    cell = ks.cells.StateMachineCell(_dense(4, "tanh"), output=_dense(3, "sigmoid"), dtype=DTYPE)
    machine = ks.layers.Recurrent(cell, return_sequences=True, return_state=True, dtype=DTYPE)
    elman(x)
    readout(np.zeros((1, 4), DTYPE))
    machine(x)
    _randomize(elman, 1)
    _randomize(readout, 2)
    u, w, b = (ops.convert_to_numpy(v) for v in elman.cell.weights)
    cell.transition_layer.set_weights([np.concatenate([w, u], 0), b])
    cell.output_layer.set_weights(readout.get_weights())
    for m in (None, mask):
        h_seq, h_last = elman(x, mask=m)
        y_seq, s_last = machine(x, mask=m)
        expected = ops.convert_to_numpy(readout(h_seq))
        if m is not None:
            expected = expected * m[..., None]
        np.testing.assert_allclose(ops.convert_to_numpy(y_seq), expected, atol=ATOL)
        np.testing.assert_allclose(ops.convert_to_numpy(s_last), ops.convert_to_numpy(h_last),
                                   atol=ATOL)
        assert np.abs(ops.convert_to_numpy(s_last)).max() > 0.1


@pytest.mark.parametrize("s0_mode", ["zeros", "given", "learned"])
def test_gated_machine_matches_numpy_with_a_mask(s0_mode):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((3, 5, 2)).astype(DTYPE)
    mask = np.array([[1, 1, 1, 1, 1], [1, 0, 1, 1, 0], [0, 0, 0, 0, 0]], bool)
    given = [0.5, -0.25, 0.75]
    kwargs = {"zeros": {}, "given": {"initial_state": given},
              "learned": {"initial_state": given, "learn_initial_state": True}}[s0_mode]
    cell = _gated_machine(**kwargs)
    layer = ks.layers.Recurrent(cell, return_sequences=True, return_state=True, dtype=DTYPE)
    layer(x)
    for sub in (cell.transition_layer, cell.output_layer, cell.gate_layer):
        _randomize(sub, seed=len(sub.weights[0].path))
    s0 = np.zeros(3) if s0_mode == "zeros" else np.array(given)
    y, s = layer(x, mask=mask)
    ys, s_ref = _reference(x.astype("float64"), mask, _weights(cell), s0)
    np.testing.assert_allclose(ops.convert_to_numpy(y), ys, atol=ATOL)
    np.testing.assert_allclose(ops.convert_to_numpy(s), s_ref, atol=ATOL)
    # The fully masked row ends in s0; each row equals its run alone.
    np.testing.assert_allclose(ops.convert_to_numpy(s)[2], s0, atol=ATOL)
    for i in range(2):
        alone = x[i : i + 1][:, mask[i]]
        y_alone, s_alone = layer(alone)
        np.testing.assert_allclose(ops.convert_to_numpy(y_alone)[0],
                                   ops.convert_to_numpy(y)[i][mask[i]], atol=ATOL)
        np.testing.assert_allclose(ops.convert_to_numpy(s_alone), ops.convert_to_numpy(s)[i:i+1],
                                   atol=ATOL)
    trainable = [w.path.split("/")[-1] for w in cell.trainable_weights]
    assert ("initial_state" in trainable) == (s0_mode == "learned")


def test_learned_initial_state_gets_the_gradient_of_the_first_step():
    """dL/ds0 for L = sum(y(1)), y = σ(s V + c), s(1) = tanh([s0, x] W + b):
    checked against the chain rule in NumPy."""
    cell = ks.cells.StateMachineCell(_dense(3, "tanh"), output=_dense(1, "sigmoid"),
                                     initial_state=[0.1, -0.2, 0.3], learn_initial_state=True,
                                     dtype=DTYPE)
    layer = ks.layers.Recurrent(cell, dtype=DTYPE)
    x = np.random.default_rng(5).standard_normal((2, 1, 2)).astype(DTYPE)
    layer(x)
    _randomize(cell.transition_layer, 6)
    _randomize(cell.output_layer, 7)
    (grad,) = compute_gradients(lambda: ops.sum(layer(x)), [cell.initial_state_weight])
    w, b = cell.transition_layer.get_weights()
    v, c = cell.output_layer.get_weights()
    s0 = np.array([0.1, -0.2, 0.3])
    sx = np.concatenate([np.tile(s0, (2, 1)), x[:, 0]], -1)
    s1 = np.tanh(sx @ w + b)
    y = _sigmoid(s1 @ v + c)
    ds1 = (y * (1 - y)) @ v.T
    da = ds1 * (1 - s1**2)
    expected = (da @ w.T)[:, :3].sum(0)
    np.testing.assert_allclose(grad, expected, atol=1e-9 if F64 else 1e-5)


def test_layer_contract_with_a_model_as_transition():
    """Config/JSON round trip, symbolic shapes, .keras save/load with the
    sub-layers' weights, one fit step, mixed precision."""
    x = np.random.default_rng(0).standard_normal((2, 5, 3)).astype("float32")

    def factory():
        transition = keras.Sequential(
            [keras.layers.Dense(6, activation="relu"), keras.layers.Dense(4, activation="tanh")]
        )
        cell = ks.cells.StateMachineCell(
            transition,
            output=keras.layers.Dense(2),
            gate=keras.layers.Dense(4, activation="sigmoid"),
            initial_state=[0.1, 0.2, 0.3, 0.4],
            learn_initial_state=True,
        )
        return ks.layers.Recurrent(cell, return_sequences=True)

    layer = run_layer_test(factory, x, expected_output_shape=(2, 5, 2))
    assert layer.cell.state_size == 4 and layer.cell.output_size == 2


def test_serialize_keras_object_round_trip_keeps_sub_layers():
    cell = _gated_machine(dtype="float32", initial_state=[1.0, 2.0, 3.0])
    blob = json.dumps(keras.saving.serialize_keras_object(cell))
    clone = keras.saving.deserialize_keras_object(json.loads(blob))
    assert isinstance(clone, ks.cells.StateMachineCell)
    assert clone.initial_state == [1.0, 2.0, 3.0] and clone.state_size == 3
    assert isinstance(clone.gate_layer, keras.layers.Dense)
    assert clone.gate_layer.activation is keras.activations.sigmoid
    assert clone.output_layer.units == 2
    assert clone.transition_layer is not cell.transition_layer


def test_saved_model_file_round_trip(tmp_path):
    x = np.random.default_rng(1).standard_normal((2, 4, 2)).astype("float32")
    inputs = keras.Input((None, 2))
    cell = _gated_machine(dtype="float32", learn_initial_state=True)
    outputs = ks.layers.Recurrent(cell, return_sequences=True)(inputs)
    model = keras.Model(inputs, outputs)
    cell.initial_state_weight.assign([0.3, -0.3, 0.6])
    _randomize(cell.transition_layer, 2)
    path = str(tmp_path / "machine.keras")
    model.save(path)
    loaded = keras.saving.load_model(path)
    np.testing.assert_allclose(ops.convert_to_numpy(loaded(x)), ops.convert_to_numpy(model(x)),
                               atol=1e-6)
    loaded_cell = loaded.layers[-1].cell
    np.testing.assert_allclose(ops.convert_to_numpy(loaded_cell.initial_state_weight),
                               [0.3, -0.3, 0.6], atol=1e-7)


def test_bidirectional_with_a_mask_equals_per_sequence_runs():
    x = np.random.default_rng(2).standard_normal((2, 5, 2)).astype("float32")
    mask = np.array([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]], bool)
    cell = ks.cells.StateMachineCell(keras.layers.Dense(3, activation="tanh"),
                                     learn_initial_state=True, initial_state=[0.5, 0.0, -0.5])
    bi = ks.layers.Bidirectional(ks.layers.Recurrent(cell, return_sequences=True))
    out = ops.convert_to_numpy(bi(x, mask=mask))
    assert out.shape == (2, 5, 6)
    np.testing.assert_allclose(out[0, 3:], 0.0)
    alone = ops.convert_to_numpy(bi(x[:1, :3]))
    np.testing.assert_allclose(out[0, :3], alone[0], atol=1e-6)
    backward_cell = bi.backward_layer.cell
    assert backward_cell is not cell and backward_cell.initial_state == [0.5, 0.0, -0.5]


def test_runs_inside_keras_rnn():
    x = np.random.default_rng(4).standard_normal((2, 4, 2)).astype("float32")
    cell = _gated_machine(dtype="float32", initial_state=[0.2, 0.1, 0.0])
    ours = ks.layers.Recurrent(cell, return_sequences=True)
    theirs = keras.layers.RNN(cell, return_sequences=True)
    np.testing.assert_allclose(ops.convert_to_numpy(theirs(x)), ops.convert_to_numpy(ours(x)),
                               atol=1e-6)


def test_recurrent_returns_outputs_with_a_mask_when_output_and_state_sizes_differ():
    # docs/designs.md: Keras 3.15's masked JAX loop in keras.layers.RNN returns
    # the states there; Recurrent returns the outputs on every backend.
    x = np.random.default_rng(5).standard_normal((2, 5, 3)).astype("float32")
    mask = np.array([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]], bool)
    cell = ks.cells.StateMachineCell(keras.layers.Dense(4, activation="tanh"),
                                     output=keras.layers.Dense(1))  # fmt: skip
    layer = ks.layers.Recurrent(cell, return_sequences=True, zero_output_for_mask=False)
    out = ops.convert_to_numpy(layer(x, mask=mask))
    assert out.shape == (2, 5, 1)
    alone = ops.convert_to_numpy(layer(x[:1, :3]))
    np.testing.assert_allclose(out[0, :3], alone[0], atol=1e-6)
    np.testing.assert_allclose(out[0, 3:], np.repeat(alone[0, 2:], 2, axis=0), atol=1e-6)


def test_fit_learns_the_initial_state():
    """Targets that depend only on s0 (zero inputs, zero transition weights
    frozen): fit moves s0 to them."""
    transition = keras.layers.Dense(2, kernel_initializer="zeros", use_bias=False,
                                    trainable=False)
    gate = keras.layers.Dense(2, kernel_initializer="zeros", bias_initializer="zeros",
                              trainable=False, activation="sigmoid")
    cell = ks.cells.StateMachineCell(transition, gate=gate, learn_initial_state=True)
    # With g = 0.5 and f_s = 0: s(1) = s0 / 2.
    model = keras.Sequential([keras.Input((1, 1)), ks.layers.Recurrent(cell)])
    model.compile(optimizer=keras.optimizers.SGD(2.0), loss="mse")
    target = np.tile([[0.4, -0.3]], (8, 1)).astype("float32")
    model.fit(np.zeros((8, 1, 1), "float32"), target, epochs=40, verbose=0)
    np.testing.assert_allclose(ops.convert_to_numpy(cell.initial_state_weight), [0.8, -0.6],
                               atol=1e-3)


@pytest.mark.parametrize(
    "factory,match",
    [
        (lambda: ks.cells.StateMachineCell("dense"), "`transition` must be a Keras layer"),
        (lambda: ks.cells.StateMachineCell(keras.layers.Dense), "`transition` must be a Keras"),
        (lambda: ks.cells.StateMachineCell(keras.layers.Dense(2), output=np.tanh),
         "`output` must be a Keras layer"),
        (lambda: ks.cells.StateMachineCell(keras.layers.Dense(2), gate=3),
         "`gate` must be a Keras layer"),
        (lambda: ks.cells.StateMachineCell(keras.layers.Activation("tanh")),
         "`state_size` must be given"),
        (lambda: ks.cells.StateMachineCell(keras.layers.Dense(2), state_size=0),
         "`state_size` must be a positive integer"),
        (lambda: ks.cells.StateMachineCell(keras.layers.Dense(2), initial_state=[1.0]),
         "`initial_state` must be None or 2 finite numbers"),
        (lambda: ks.cells.StateMachineCell(keras.layers.Dense(2), initial_state="zeros"),
         "`initial_state`"),
    ],
)
def test_bad_arguments_are_named(factory, match):
    with pytest.raises(ValueError, match=match):
        factory()


def test_a_transition_of_the_wrong_width_is_named_at_build():
    cell = ks.cells.StateMachineCell(keras.layers.Dense(3), state_size=2)
    with pytest.raises(ValueError, match="`transition` must map"):
        ks.layers.Recurrent(cell)(np.ones((1, 2, 1), "float32"))


def test_state_size_read_from_a_model_or_given():
    seq = keras.Sequential([keras.layers.Dense(5), keras.layers.Dense(3)])
    assert ks.cells.StateMachineCell(seq).state_size == 3
    cell = ks.cells.StateMachineCell(keras.layers.Dense(2), output=keras.layers.Activation("tanh"))
    assert cell.output_size == 2
    assert ks.cells.StateMachineCell(keras.layers.Dense(4)).output_size == 4


def test_golden_constant_weights():
    """One state unit, kernel 0.5 everywhere, zero bias, x = 1: s(t) =
    tanh(0.5 s(t-1) + 0.5); with a gate of zero weights (g = 0.5),
    s(t) = s(t-1) + 0.5 (tanh(0.5 s(t-1) + 0.5) - s(t-1))."""

    def transition():
        half = keras.initializers.Constant(0.5)
        return keras.layers.Dense(1, activation="tanh", kernel_initializer=half, dtype=DTYPE)

    gate = keras.layers.Dense(1, activation="sigmoid", kernel_initializer="zeros", dtype=DTYPE)
    x = np.ones((1, 3, 1), DTYPE)
    plain = ks.layers.Recurrent(ks.cells.StateMachineCell(transition(), dtype=DTYPE),
                                return_sequences=True, dtype=DTYPE)
    gated = ks.layers.Recurrent(ks.cells.StateMachineCell(transition(), gate=gate, dtype=DTYPE),
                                return_sequences=True, dtype=DTYPE)
    np.testing.assert_allclose(ops.convert_to_numpy(plain(x))[0, :, 0],
                               [0.46211715726000974, 0.6237125498258757, 0.6706129992209577],
                               atol=ATOL)
    np.testing.assert_allclose(ops.convert_to_numpy(gated(x))[0, :, 0],
                               [0.23105857863000487, 0.38953308589759494, 0.4952842354616387],
                               atol=ATOL)
