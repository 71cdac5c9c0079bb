"""Bad input gives a clear error naming the layer, the argument and the form.

The fixed table of the issue's cases for the cells and the ``Recurrent``
runner; ``test_fuzz_recurrent.py`` draws random combinations of the same.
"""

import keras
import numpy as np
import pytest
from fuzz_record import record
from keras import ops

import keras_seqmodels as ks

CELLS = ["ElmanCell", "LSTMCell", "GRUCell", "GatedCell"]


def layer(name="bad_input_rnn", cell="LSTMCell", **kwargs):
    return ks.layers.Recurrent(getattr(ks.cells, cell)(3), return_state=True, name=name, **kwargs)


def raises_clear(fn, *needles, error=(ValueError, TypeError)):
    with pytest.raises(error) as info:
        fn()
    message = str(info.value)
    for needle in needles:
        assert needle in message, f"{needle!r} not in {message!r}"
    record("bad input table", "clear error")


@pytest.mark.parametrize("cell", CELLS)
@pytest.mark.parametrize("units", [0, -2, 2.5, True, "3", None])
def test_constructor_rejects_bad_sizes(cell, units):
    raises_clear(
        lambda: getattr(ks.cells, cell)(units),
        cell,
        "`units` must be a positive integer",
        f"units={units!r}",
    )


@pytest.mark.parametrize("arg", ["dropout", "recurrent_dropout"])
@pytest.mark.parametrize("rate", [1.0, -0.1, "half"])
def test_constructor_rejects_bad_rates(arg, rate):
    raises_clear(lambda: ks.cells.GRUCell(2, **{arg: rate}), "GRUCell", f"`{arg}`", "[0, 1)")


def test_runner_rejects_what_is_not_a_cell_or_a_stack():
    cell = ks.cells.GRUCell(2)
    raises_clear(lambda: ks.layers.Recurrent([cell, cell]), "`cell[1]`", "same cell object")
    raises_clear(lambda: ks.layers.Recurrent("lstm"), "`cell`", "state_size")
    raises_clear(lambda: ks.layers.Recurrent(ks.cells.GRUCell), "`cell`", "cell instance")


@pytest.mark.parametrize("shape", [(2, 5), (5,), (2, 3, 4, 5)])
def test_wrong_rank(shape):
    raises_clear(
        lambda: layer()(np.zeros(shape, "float32")),
        "bad_input_rnn",
        "`sequences` must have rank 3",
        "(batch, time, features)",
    )


@pytest.mark.parametrize("shape", [(2, 5), (2, 4, 1, 5), (2, 4, 6)])
def test_built_layer_rejects_another_rank_or_width(shape):
    built = layer()
    built(np.zeros((2, 4, 5), "float32"))
    raises_clear(lambda: built(np.zeros(shape, "float32")), "bad_input_rnn", "`sequences`")
    if len(shape) == 3:
        raises_clear(
            lambda: built(np.zeros(shape, "float32")),
            "last dimension of `sequences` must be 5",
        )


def test_undefined_width_is_rejected_at_build():
    raises_clear(
        lambda: layer()(keras.Input((4, None))),
        "bad_input_rnn",
        "last dimension of `sequences` must be defined",
    )


@pytest.mark.parametrize("dtype", ["int32", "int64", "uint8", "bool"])
def test_integer_inputs(dtype):
    raises_clear(
        lambda: layer()(np.zeros((2, 4, 5), dtype)),
        "bad_input_rnn",
        "`sequences` must be a floating-point tensor",
        "keras.layers.Embedding",
    )


@pytest.mark.parametrize("cell", CELLS)
def test_integer_inputs_to_a_cell_called_directly(cell):
    c = getattr(ks.cells, cell)(2, name="direct_cell")
    states = [np.zeros((1, 2), "float32")] * len(np.atleast_1d(c.state_size))
    raises_clear(
        lambda: c(np.zeros((1, 3), "int32"), states),
        "direct_cell",
        "`inputs` must be a floating-point tensor",
    )


@pytest.mark.parametrize("mask_shape", [(2, 3), (3, 4), (2, 4, 1), (8,)])
def test_mask_of_the_wrong_shape(mask_shape):
    raises_clear(
        lambda: layer()(np.zeros((2, 4, 5), "float32"), mask=np.ones(mask_shape, bool)),
        "bad_input_rnn",
        "`mask` must have shape (batch, time) = (2, 4)",
    )


@pytest.mark.parametrize("states", [[(2, 3)], [(2, 4), (2, 3)], [(3, 3), (3, 3)], [(2, 3)] * 3])
def test_initial_state_of_the_wrong_count_or_shape(states):
    init = [np.zeros(s, "float32") for s in states]
    raises_clear(
        lambda: layer()(np.zeros((2, 4, 5), "float32"), initial_state=init),
        "bad_input_rnn",
        "`initial_state` must be a list of 2 tensor(s) of shapes [(2, 3), (2, 3)]",
    )


@pytest.mark.parametrize("cell", CELLS)
def test_zero_length_sequences_return_the_initial_state(cell):
    rnn = ks.layers.Recurrent(getattr(ks.cells, cell)(3), return_sequences=True, return_state=True)
    n_states = len(np.atleast_1d(rnn.cell.state_size))
    init = [np.full((2, 3), 0.25 * (k + 1), "float32") for k in range(n_states)]
    out, *states = rnn(np.zeros((2, 0, 5), "float32"), initial_state=init)
    assert tuple(out.shape) == (2, 0, 3)
    for s, i in zip(states, init):
        np.testing.assert_array_equal(ops.convert_to_numpy(s), i)
    last = ks.layers.Recurrent(getattr(ks.cells, cell)(3))
    np.testing.assert_array_equal(
        ops.convert_to_numpy(last(np.zeros((2, 0, 5), "float32"))), np.zeros((2, 3))
    )
    record("bad input table", "initial state returned")


@pytest.mark.parametrize("cell", CELLS)
@pytest.mark.parametrize("time", [0, 4])
def test_empty_batch(cell, time):
    rnn = ks.layers.Recurrent(getattr(ks.cells, cell)(3), return_sequences=True, return_state=True)
    out, *states = rnn(np.zeros((0, time, 5), "float32"), mask=np.ones((0, time), bool))
    assert tuple(out.shape) == (0, time, 3)
    assert all(tuple(s.shape) == (0, 3) for s in states)
    record("bad input table", "empty output")


@pytest.mark.tf_only
def test_mask_with_unknown_length_inside_tf_function():
    # What a padded tf.data batch or a SavedModel signature gives the layer.
    import tensorflow as tf

    rnn = ks.layers.Recurrent(ks.cells.GRUCell(3), return_sequences=True)
    x = np.random.default_rng(0).standard_normal((2, 4, 5)).astype("float32")
    mask = np.array([[1, 1, 1, 0], [1, 0, 0, 0]], bool)
    eager = ops.convert_to_numpy(rnn(x, mask=mask))
    spec = [tf.TensorSpec([None, None, 5]), tf.TensorSpec([None, None], tf.bool)]
    graph = tf.function(lambda a, m: rnn(a, mask=m), input_signature=spec)
    np.testing.assert_allclose(graph(x, mask).numpy(), eager, atol=1e-6)
    record("bad input table", "unknown length + mask")


@pytest.mark.tf_only
@pytest.mark.parametrize("masked", [False, True])
@pytest.mark.parametrize("return_sequences", [False, True])
def test_zero_length_known_only_at_run_time(masked, return_sequences):
    # An empty string in a served signature: zero steps inside a tf.function.
    import tensorflow as tf

    rnn = ks.layers.Recurrent(
        ks.cells.LSTMCell(3), return_sequences=return_sequences, return_state=True
    )
    rnn.build((None, None, 5))
    init = [np.full((2, 3), 0.5, "float32"), np.full((2, 3), -0.5, "float32")]

    @tf.function(input_signature=[tf.TensorSpec([None, None, 5])])
    def f(x):
        mask = tf.ones(tf.shape(x)[:2], tf.bool) if masked else None
        return rnn(x, initial_state=init, mask=mask)

    out, h, c = f(tf.zeros((2, 0, 5)))
    assert tuple(out.shape) == ((2, 0, 3) if return_sequences else (2, 3))
    np.testing.assert_array_equal(h.numpy(), init[0])
    np.testing.assert_array_equal(c.numpy(), init[1])
    longer = f(tf.ones((2, 4, 5)))  # the same trace still runs the loop
    assert not np.array_equal(longer[1].numpy(), init[0])
    record("bad input table", "run-time zero length")
