"""Keras parity of the runner: lists of cells, NumPy integers, a cell class by mistake."""

import json

import keras
import numpy as np
import pytest
from keras import ops, tree

import keras_seqmodels as ks
from keras_seqmodels.testing import run_layer_test


def np_(x):
    return ops.convert_to_numpy(x)


def stack():
    return [ks.cells.LSTMCell(4), ks.cells.GRUCell(3)]


# Lists of cells ------------------------------------------------------------


def test_list_of_cells_matches_keras_rnn_with_the_same_list():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 6, 5)).astype("float32")
    mask = np.arange(6)[None, :] < np.array([[6], [4], [2]])
    ours = ks.layers.Recurrent(stack(), return_sequences=False, return_state=True)
    out, *states = ours(x, mask=mask)
    assert isinstance(ours.cell, ks.cells.StackedCells)
    assert [tuple(s.shape) for s in states] == [(3, 4), (3, 4), (3, 3)]
    theirs = keras.layers.RNN(stack(), return_state=True)
    theirs(x)
    theirs.set_weights(ours.get_weights())
    ref_out, *ref_states = theirs(x, mask=mask)
    np.testing.assert_allclose(np_(out), np_(ref_out), atol=1e-6)
    for s, r in zip(states, tree.flatten(ref_states)):
        np.testing.assert_allclose(np_(s), np_(r), atol=1e-6)


def test_list_of_cells_equals_stacked_layers():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 5, 3)).astype("float32")
    stacked = ks.layers.Recurrent(
        [ks.cells.GRUCell(4), ks.cells.ElmanCell(2)], return_sequences=True
    )
    out = np_(stacked(x))
    first = ks.layers.Recurrent(ks.cells.GRUCell(4), return_sequences=True)
    second = ks.layers.Recurrent(ks.cells.ElmanCell(2), return_sequences=True)
    first.build(x.shape)
    second.build((2, 5, 4))
    first.set_weights(stacked.cell.cells[0].get_weights())
    second.set_weights(stacked.cell.cells[1].get_weights())
    np.testing.assert_allclose(out, np_(second(first(x))), atol=1e-6)


def test_stacked_states_fed_back_continue_the_sequence():
    # return_state gives the states flat; fed back as initial_state they are
    # regrouped per cell, so two halves equal one run.
    x = np.random.default_rng(3).standard_normal((2, 6, 3)).astype("float32")
    layer = ks.layers.Recurrent(stack(), return_sequences=True, return_state=True)
    full, *_ = layer(x)
    first, *states = layer(x[:, :3])
    second, *_ = layer(x[:, 3:], initial_state=states)
    np.testing.assert_allclose(np_(second), np_(full)[:, 3:], atol=1e-6)
    with pytest.raises(ValueError, match="`initial_state` must be a list of 3"):
        layer(x, initial_state=states[:2])


def test_list_of_one_cell_is_that_cell():
    cell = ks.cells.GRUCell(3)
    assert ks.layers.Recurrent([cell]).cell is cell


@pytest.mark.slow  # ~15 s on JAX (fit, save/load, two mixed policies)
def test_list_of_cells_layer_contract():
    # Config and JSON round trip, .keras save/load with identical outputs,
    # one fit step, mixed precision.
    x = np.random.default_rng(2).standard_normal((2, 4, 3)).astype("float32")
    run_layer_test(
        lambda: ks.layers.Recurrent(
            [ks.cells.LSTMCell(4, dropout=0.2), ks.cells.GRUCell(3, recurrent_dropout=0.3)],
            return_sequences=True,
        ),
        x,
        expected_output_shape=(2, 4, 3),
    )


def test_keras_cells_in_a_list():
    x = np.ones((2, 4, 3), "float32")
    layer = ks.layers.Recurrent([keras.layers.LSTMCell(4), keras.layers.GRUCell(2)])
    assert tuple(layer(x).shape) == (2, 2)


def test_dropout_in_a_stack_draws_fresh_masks_per_call():
    x = np.ones((2, 5, 3), "float32")
    layer = ks.layers.Recurrent(
        [ks.cells.GRUCell(4, dropout=0.5), ks.cells.LSTMCell(3, recurrent_dropout=0.5, seed=1)],
        return_sequences=True,
    )
    a = np_(layer(x, training=True))
    b = np_(layer(x, training=True))
    assert not np.allclose(a, b)
    # Masks do not outlive the call (a stale mask would be reused forever).
    for cell in layer.cell.cells:
        assert getattr(cell, "_dropout_mask", None) is None
        assert getattr(cell, "_recurrent_dropout_mask", None) is None
    np.testing.assert_allclose(np_(layer(x)), np_(layer(x)))


def test_dropout_in_a_stack_trains_with_fit():
    # Under JAX, masks drawn inside the loop would fail in the jitted step.
    inputs = keras.Input((5, 3))
    outputs = ks.layers.Recurrent(
        [
            ks.cells.GRUCell(4, dropout=0.3, recurrent_dropout=0.3),
            ks.cells.ElmanCell(2, dropout=0.3),
        ]
    )(inputs)
    model = keras.Model(inputs, outputs)
    model.compile("sgd", "mse")
    history = model.fit(np.ones((4, 5, 3)), np.zeros((4, 2)), epochs=1, verbose=0)
    assert np.isfinite(history.history["loss"][0])


# NumPy integers --------------------------------------------------------------

UNIT_CELLS = ["ElmanCell", "LSTMCell", "GRUCell", "GatedCell", "LeakyCell", "DeepTransitionCell"]


@pytest.mark.parametrize("name", UNIT_CELLS)
def test_numpy_integer_units(name):
    rate = {} if name == "DeepTransitionCell" else {"dropout": np.float32(0.25)}
    cell = getattr(ks.cells, name)(np.int64(4), **rate)
    assert type(cell.units) is int and cell.units == 4
    assert not rate or cell.dropout == 0.25
    json.dumps(cell.get_config())  # serializable, no NumPy scalars left
    out = ks.layers.Recurrent(cell)(np.ones((2, 3, 2), "float32"))
    assert tuple(out.shape)[0] == 2
    keras.layers.LSTM(np.int64(4))  # Keras accepts the same


def test_numpy_integers_in_other_layers():
    grid = ks.layers.FourDirectional2D(ks.cells.GRUCell(np.int32(2)), patch_size=np.int64(2))
    assert grid.patch_size == (2, 2) and all(type(v) is int for v in grid.patch_size)
    assert tuple(grid(np.ones((1, 4, 4, 1), "float32")).shape) == (1, 2, 2, 4)
    json.dumps(grid.get_config())
    ntm = ks.memory.NTMCell(np.int64(4), memory_size=np.int64(6), memory_width=np.int64(3),
                            shift_range=np.int64(1))
    assert type(ntm.shift_range) is int
    json.dumps(ntm.get_config())


def test_numpy_bools_and_floats_are_not_integers():
    for bad in (np.bool_(True), True, np.float64(4.0), 4.0):
        with pytest.raises(ValueError, match="GRUCell: `units` must be a positive integer"):
            ks.cells.GRUCell(bad)


# A cell class by mistake --------------------------------------------------------


def test_cell_class_instead_of_instance():
    with pytest.raises(ValueError, match=r"Recurrent: `cell` must be a cell instance, "
                                         r"e\.g\. LSTMCell\(32\), not the class"):
        ks.layers.Recurrent(ks.cells.LSTMCell)
    with pytest.raises(ValueError, match=r"Recurrent: `cell\[1\]` must be a cell instance"):
        ks.layers.Recurrent([ks.cells.LSTMCell(3), ks.cells.GRUCell])
    with pytest.raises(ValueError, match=r"Recurrent: `cell` must be a cell or a non-empty"):
        ks.layers.Recurrent([])
    with pytest.raises(ValueError, match=r"StackedCells: `cells\[0\]` must be a cell instance"):
        ks.cells.StackedCells([ks.cells.GRUCell])
    with pytest.raises(ValueError, match=r"ConditionedRecurrent: `cell` must be a cell instance"):
        ks.layers.ConditionedRecurrent(ks.cells.GRUCell, "input")
    with pytest.raises(ValueError, match=r"OutputFeedback: `cell` must be a cell instance"):
        ks.layers.OutputFeedback(ks.cells.OutputFeedbackCell)
    with pytest.raises(ValueError, match=r"FourDirectional2D: `cell` must be a cell instance"):
        ks.layers.FourDirectional2D(ks.cells.GRUCell)
    with pytest.raises(
        ValueError, match=r"FourDirectional2D: `vertical_cell` must be a cell instance"
    ):
        ks.layers.FourDirectional2D(ks.cells.GRUCell(2), vertical_cell=ks.cells.LSTMCell)
    with pytest.raises(ValueError, match=r"Recurrent: `cell` must be a Keras layer"):
        ks.layers.Recurrent("lstm")
