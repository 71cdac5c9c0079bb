"""The fused loop of ``Recurrent`` against its generic loop (``fused=False``)."""

import keras
import numpy as np
import pytest
from recurrent_grads import exact_tanh, np_, value_and_grads

import keras_seqmodels as ks
from keras_seqmodels.layers import fused_rnn, kernels

BACKEND = keras.backend.backend()
pytestmark = pytest.mark.skipif(
    BACKEND not in ("tensorflow", "jax"), reason="fused kernels exist for TensorFlow and JAX"
)

CELLS = {
    "elman": lambda **kw: ks.cells.ElmanCell(5, **kw),
    "lstm": lambda **kw: ks.cells.LSTMCell(5, **kw),
    "lstm_peep": lambda **kw: ks.cells.LSTMCell(5, use_peepholes=True, **kw),
    "gru": lambda **kw: ks.cells.GRUCell(5, reset_after=False, **kw),
    "gru_after": lambda **kw: ks.cells.GRUCell(5, reset_after=True, **kw),
    "gated": lambda **kw: ks.cells.GatedCell(5, **kw),
}
KIND = {"lstm_peep": "lstm"}

# A test that changes the fused loop's tuning gives its own layer its own
# kernels (``kernels.tune``); they die with the layer, so nothing needs undoing.


def fused_plan(layer, sequences=None, training=True):
    """The fused kernel's plan for a call of ``layer`` on ``sequences`` (a
    tensor or ``keras.KerasTensor``; default: batch and length unknown, so
    that in inference only the per-platform kinds decide), or None."""
    if sequences is None:
        sequences = keras.KerasTensor((None, None, 3))
    return kernels.plan_of(layer, sequences, training=training, kernel="fused")


def fused_kind(layer, training, sequences=None):
    plan = fused_plan(layer, sequences, training)
    return None if plan is None else plan.kind


def fused_options(layer, sequences):
    """``(jit, hoist)`` of the fused loop for ``sequences``."""
    plan = fused_plan(layer, sequences)
    return plan.jit, plan.hoist


# Holes in the middle, right padding, a row that starts masked and a row
# that is fully masked.
MASK = np.array(
    [
        [1, 1, 0, 1, 1, 1, 1],
        [1, 1, 1, 1, 0, 0, 0],
        [0, 0, 1, 0, 1, 1, 0],
        [0, 0, 0, 0, 0, 0, 0],
    ],
    bool,
)


def make_pair(key, x_shape, dtype="float64", seed=0, cell_kw=None, **layer_kw):
    """A fused and a generic layer with the same random weights."""
    layers = []
    for fused in (True, False):
        kw = dict(cell_kw or {})
        if not fused and dtype == "float64":
            kw["activation"] = exact_tanh()
        cell = CELLS[key](dtype=dtype, **kw)
        layer = ks.layers.Recurrent(cell, fused=fused, dtype=dtype, **layer_kw)
        layer.build(x_shape)
        layers.append(layer)
    rng = np.random.default_rng(seed)
    values = [rng.uniform(-0.6, 0.6, w.shape) for w in layers[0].weights]
    for layer in layers:
        for var, value in zip(layer.weights, values):
            var.assign(value.astype(var.dtype))
    return layers


def assert_pair_equal(fused, generic, x, states, mask, atol=1e-9, training=True):
    # training=True: on TensorFlow the fused loop takes its hand-written
    # gradient only then (otherwise a plain forward loop, differentiated
    # automatically, which the last test checks too).
    rng = np.random.default_rng(7)
    out_shapes = [tuple(s) for s in _output_shapes(fused, x)]
    proj = [rng.standard_normal(s).astype(x.dtype) for s in out_shapes]
    outs_f, grads_f = value_and_grads(fused, x, states, mask, proj, training)
    outs_g, grads_g = value_and_grads(generic, x, states, mask, proj, training)
    assert len(grads_f) == len(grads_g) == 1 + len(states) + len(fused.cell.trainable_weights)
    for a, b in zip(outs_f, outs_g):
        np.testing.assert_allclose(a, b, atol=atol, rtol=0)
    for a, b in zip(grads_f, grads_g):
        assert np.abs(b).max() > 0  # the comparison is not between zeros
        np.testing.assert_allclose(a, b, atol=atol, rtol=0)


def _output_shapes(layer, x):
    shapes = layer.compute_output_shape(x.shape)
    if isinstance(shapes, list):
        return [tuple(x.shape[0] if d is None else d for d in s) for s in shapes]
    return [shapes]


def random_states(key, batch, rng):
    n = 2 if KIND.get(key, key) == "lstm" else 1
    return [rng.standard_normal((batch, 5)) for _ in range(n)]


@pytest.mark.parametrize(
    "key, return_sequences", [(key, True) for key in CELLS] + [("elman", False), ("gru", False)]
)
def test_fused_equals_generic_outputs_states_and_gradients(key, return_sequences):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((4, 7, 3))
    fused, generic = make_pair(key, x.shape, return_sequences=return_sequences, return_state=True)
    assert fused_kind(fused, True) == KIND.get(key, key)
    assert fused_kind(generic, True) is None
    assert_pair_equal(fused, generic, x, random_states(key, 4, rng), None)


@pytest.mark.parametrize("key", list(CELLS))
@pytest.mark.parametrize("go_backwards, zero_output", [(False, True), (True, False)])
def test_fused_equals_generic_with_holes_in_the_mask(key, go_backwards, zero_output):
    rng = np.random.default_rng(2)
    x = rng.standard_normal((4, 7, 3))
    x[~MASK] = 1e3  # padding content must not matter
    fused, generic = make_pair(
        key,
        x.shape,
        return_sequences=True,
        return_state=True,
        go_backwards=go_backwards,
        zero_output_for_mask=zero_output,
    )
    assert_pair_equal(fused, generic, x, random_states(key, 4, rng), MASK)


@pytest.mark.parametrize("key", ["lstm", "gru_after"])
def test_fused_equals_generic_last_output_with_mask(key):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((4, 7, 3))
    fused, generic = make_pair(key, x.shape, return_state=True, go_backwards=True)
    assert_pair_equal(fused, generic, x, random_states(key, 4, rng), MASK)


@pytest.mark.parametrize("key", ["gru", "lstm_peep"])
def test_input_dropout_takes_the_fused_path_with_the_same_masks(key):
    rng = np.random.default_rng(4)
    x = rng.standard_normal((4, 7, 3))
    fused, generic = make_pair(
        key, x.shape, return_sequences=True, cell_kw={"dropout": 0.5, "seed": 3}
    )
    assert fused_kind(fused, True) is not None
    assert_pair_equal(fused, generic, x, random_states(key, 4, rng), None, training=True)


@pytest.mark.parametrize("key", list(CELLS))
@pytest.mark.parametrize("xla", [True, False])
def test_projection_hoisted_before_the_loop_equals_generic(key, xla):
    # TensorFlow projects each gate separately before the loop; every kind
    # must put the parts back in its own gate order.
    rng = np.random.default_rng(9)
    x = rng.standard_normal((4, 7, 3))
    fused, generic = make_pair(key, x.shape, return_sequences=True, return_state=True)
    kernels.tune(fused, hoist=True, jit=xla)
    assert fused_options(fused, x) == (xla and BACKEND == "tensorflow", True)
    assert_pair_equal(fused, generic, x, random_states(key, 4, rng), MASK)


@pytest.mark.parametrize("key", list(CELLS))
@pytest.mark.parametrize("groups", [1, 2])
def test_reverse_loop_in_chunks_equals_generic(key, groups):
    if groups > 1 and BACKEND != "jax":
        pytest.skip("row blocks are a JAX loop option")
    # 7 steps in 3 chunks (2, 3, 2 steps): the states' gradients carried
    # from chunk to chunk, each chunk's weight gradients summed.
    rng = np.random.default_rng(14)
    x = rng.standard_normal((4, 7, 3))
    fused, generic = make_pair(
        key, x.shape, return_sequences=True, return_state=True, go_backwards=True
    )
    kernels.tune(fused, groups=groups, chunks=3)
    assert_pair_equal(fused, generic, x, random_states(key, 4, rng), MASK)


def test_reverse_loop_chunks_per_backend():
    kernel = kernels.FusedKernel()
    if BACKEND == "tensorflow":
        assert kernel.chunks("gru_after", 1) == 2
        return
    assert kernel.chunks("lstm", 2) == 2
    assert kernel.chunks("lstm", 1) == 1
    assert kernel.chunks("gru_after", 2) == 1


@pytest.mark.skipif(BACKEND != "jax", reason="row blocks are a JAX loop option")
@pytest.mark.parametrize("key", list(CELLS))
def test_rows_in_two_blocks_equal_generic(key, monkeypatch):
    # Every kind's loop can carry the batch as blocks of rows; holes in the
    # mask, go_backwards and initial states must come out as from one block.
    rng = np.random.default_rng(12)
    x = rng.standard_normal((4, 7, 3))
    fused, generic = make_pair(
        key, x.shape, return_sequences=True, return_state=True, go_backwards=True
    )
    calls = []
    loop = fused_rnn.recurrent_loop

    def recorded(*args, **kwargs):
        calls.append(kwargs["groups"])
        return loop(*args, **kwargs)

    monkeypatch.setattr(fused_rnn, "recurrent_loop", recorded)
    kernels.tune(fused, groups=2)
    assert_pair_equal(fused, generic, x, random_states(key, 4, rng), MASK)
    assert calls and set(calls) == {2}  # the fused loop ran with two blocks


def test_row_blocks_for_small_gru_and_lstm_batches_on_a_jax_cpu():
    two = 2 if fused_rnn.on_jax_cpu() else 1
    assert fused_rnn.row_groups("gru_after", 32, 256, 2) == two
    assert fused_rnn.row_groups("gru", 16, 256, 2) == two
    assert fused_rnn.row_groups("lstm", 64, 256, 2) == two
    assert fused_rnn.row_groups("lstm", 128, 512, 2) == 1  # products large enough
    assert fused_rnn.row_groups("gru_after", 15, 256, 2) == 1  # odd batch
    assert fused_rnn.row_groups("gru_after", 8, 256, 2) == 1  # too few rows a block
    assert fused_rnn.row_groups("gru_after", None, 256, 2) == 1  # unknown batch
    assert fused_rnn.row_groups("elman", 32, 256, 2) == 1
    assert fused_rnn.row_groups("gru_after", 32, 256, 1) == 1
    layer = ks.layers.Recurrent(ks.cells.GRUCell(256, reset_after=True))
    assert fused_plan(layer, keras.KerasTensor((32, 10, 3))).groups == two
    assert fused_plan(layer, keras.KerasTensor((128, 10, 3))).groups == 1


def test_inference_mode_gradients_equal_generic():
    # The reset-before GRU is the cell whose fused forward also runs in
    # inference; its automatic gradients there must equal the generic loop's.
    rng = np.random.default_rng(10)
    x = rng.standard_normal((4, 7, 3))
    fused, generic = make_pair("gru", x.shape, return_sequences=True, return_state=True)
    assert fused_kind(fused, False) == "gru"
    assert_pair_equal(fused, generic, x, random_states("gru", 4, rng), MASK, training=False)


@pytest.mark.parametrize("key", ["elman", "lstm", "gru_after", "gated"])
def test_inference_path_follows_the_backend(key):
    # Inference runs the fused forward for every cell with JAX on a CPU or a
    # GPU (where the input product is also hoisted at every batch size);
    # elsewhere, without the compiled loop or the small-batch projection,
    # the generic loop for every cell but the reset-before GRU.
    fused, _ = make_pair(key, (2, 3, 3))
    on_jax = fused_rnn.on_jax_cpu() or fused_rnn.on_jax_gpu()
    assert fused_kind(fused, True) == KIND.get(key, key)
    assert fused_kind(fused, False) == (KIND.get(key, key) if on_jax else None)
    wide = keras.KerasTensor((32, None, 3))  # large batch, length unknown
    assert fused_options(fused, wide) == (False, fused_rnn.on_jax_gpu())
    assert fused_kind(fused, False, wide) == (KIND.get(key, key) if on_jax else None)


def test_fused_options_follow_backend_length_and_batch():
    layer = ks.layers.Recurrent(ks.cells.LSTMCell(3))
    on_tf = BACKEND == "tensorflow"
    # The input product is hoisted up to batch 4, and at every batch with
    # JAX on a GPU (test_jax_on_a_gpu_hoists_and_runs_inference_fused).
    large = fused_rnn.on_jax_gpu()
    assert fused_options(layer, keras.KerasTensor((1, 10, 3))) == (on_tf, True)
    assert fused_options(layer, keras.KerasTensor((4, 10, 3))) == (on_tf, True)
    assert fused_options(layer, keras.KerasTensor((5, 10, 3))) == (on_tf, large)
    assert fused_options(layer, keras.KerasTensor((None, 10, 3))) == (on_tf, large)
    assert fused_options(layer, keras.KerasTensor((1, None, 3))) == (False, True)
    assert fused_kind(layer, False, keras.KerasTensor((1, 10, 3))) == "lstm"


@pytest.mark.parametrize("key", list(CELLS))
def test_jax_on_a_gpu_hoists_and_runs_inference_fused(key, monkeypatch):
    # Measured on an H100: with JAX on a GPU the fused loop hoists the input
    # product at every batch size and runs inference for every cell.
    fused, _ = make_pair(key, (2, 3, 3))
    monkeypatch.setattr(keras.backend, "backend", lambda: "jax")
    monkeypatch.setattr(fused_rnn, "_jax_platform", lambda: "gpu")
    assert fused_rnn.on_jax_gpu() and not fused_rnn.on_jax_cpu()
    wide = keras.KerasTensor((128, 50, 3))
    assert fused_options(fused, wide) == (False, True)
    assert fused_kind(fused, False, wide) == KIND.get(key, key)
    kernels.tune(fused, hoist=False)  # the switch still rules
    assert fused_options(fused, wide) == (False, False)
    monkeypatch.setattr(fused_rnn, "_jax_platform", lambda: "tpu")  # not measured
    kernels.tune(fused)  # the defaults
    assert fused_options(fused, wide) == (False, False)
    assert fused_kind(fused, False, wide) == ("gru" if KIND.get(key, key) == "gru" else None)


@pytest.mark.parametrize("key", list(CELLS))
def test_fused_inference_forward_equals_generic(key):
    # Batch 4 takes the fused forward in inference on both backends (XLA on
    # TensorFlow, the projection before the loop on both); its gradients
    # (automatic on JAX, the custom gradient re-running the forward loop
    # on TensorFlow) must equal the generic loop's too.
    rng = np.random.default_rng(11)
    x = rng.standard_normal((4, 7, 3))
    x[~MASK] = 1e3
    fused, generic = make_pair(key, x.shape, return_sequences=True, return_state=True)
    assert fused_kind(fused, False, x) == KIND.get(key, key)
    assert_pair_equal(fused, generic, x, random_states(key, 4, rng), MASK, training=False)


@pytest.mark.parametrize("key", list(CELLS))
@pytest.mark.parametrize("training", [True, False])
def test_fused_without_xla_or_hoist_equals_generic(key, training):
    # The loop as it runs for a length known only at run time and a large
    # batch: graph-mode tf.scan on TensorFlow, the input product per step.
    rng = np.random.default_rng(12)
    x = rng.standard_normal((4, 7, 3))
    fused, generic = make_pair(
        key, x.shape, return_sequences=True, return_state=True, go_backwards=True
    )
    every = tuple(KIND.get(k, k) for k in CELLS)
    inference = {BACKEND: every, "jax_cpu": every, "jax_gpu": every}
    kernels.tune(fused, jit=False, hoist=False, inference=inference)  # on every device
    assert fused_options(fused, x) == (False, False)
    assert fused_kind(fused, training, x) == KIND.get(key, key)
    assert_pair_equal(fused, generic, x, random_states(key, 4, rng), MASK, training=training)


@pytest.mark.parametrize("key", ["lstm", "gru"])
def test_unknown_length_model_equals_generic(key):
    # A model whose length is known only at run time (no XLA on
    # TensorFlow), called on two lengths, in both modes.
    rng = np.random.default_rng(13)
    outs = []
    for layer in make_pair(key, (1, None, 3), return_sequences=True):
        inputs = keras.Input((None, 3), batch_size=1, dtype="float64")
        model = keras.Model(inputs, layer(inputs))
        model.compile(optimizer=keras.optimizers.SGD(0.1), loss="mse")
        outs.append(model)
    for steps in (5, 9):
        x = rng.standard_normal((1, steps, 3))
        y = rng.standard_normal((1, steps, 5))
        a, b = (np_(m.predict_on_batch(x)) for m in outs)
        np.testing.assert_allclose(a, b, atol=1e-9)
        a, b = (m.train_on_batch(x, y) for m in outs)
        np.testing.assert_allclose(a, b, atol=1e-9)


def test_recurrent_dropout_while_training_falls_back_to_the_generic_loop():
    layer = ks.layers.Recurrent(ks.cells.LSTMCell(3, recurrent_dropout=0.5))
    assert fused_kind(layer, True) is None
    gru = ks.layers.Recurrent(ks.cells.GRUCell(3, reset_after=False, recurrent_dropout=0.5))
    assert fused_kind(gru, True) is None
    assert fused_kind(gru, False) == "gru"


def test_other_cells_and_activations_fall_back():
    assert fused_kind(ks.layers.Recurrent(ks.cells.ElmanCell(3, activation="relu")), True) is None
    assert fused_kind(ks.layers.Recurrent(ks.cells.ElmanCell(3), unroll=True), True) is None

    class MyLSTM(ks.cells.LSTMCell):
        pass

    assert fused_kind(ks.layers.Recurrent(MyLSTM(3)), True) is None


@pytest.mark.parametrize("key", ["lstm", "gru_after"])
def test_fused_stateful_carry_equals_generic(key):
    rng = np.random.default_rng(5)
    x = rng.standard_normal((2, 8, 3))
    fused, generic = make_pair(key, x.shape, return_sequences=True, stateful=True)
    assert fused_kind(fused, True) is not None
    for chunk in (x[:, :5], x[:, 5:]):
        np.testing.assert_allclose(
            np_(fused(chunk, training=True)), np_(generic(chunk, training=True)), atol=1e-9
        )
    for a, b in zip(fused.states, generic.states):
        np.testing.assert_allclose(np_(a.value), np_(b.value), atol=1e-9)


@pytest.mark.parametrize("policy", ["mixed_float16", "mixed_bfloat16"])
def test_fused_mixed_precision_close_to_generic(policy):
    rng = np.random.default_rng(6)
    x = rng.standard_normal((4, 7, 3)).astype("float32")
    layers = []
    for fused in (True, False):
        layer = ks.layers.Recurrent(
            ks.cells.LSTMCell(5), fused=fused, dtype=policy, return_sequences=True
        )
        layer.build(x.shape)
        layers.append(layer)
    layers[1].set_weights(layers[0].get_weights())
    a, b = (np_(layer(x, mask=MASK, training=True)) for layer in layers)
    assert a.dtype == b.dtype and a.dtype != np.float32
    tol = 2e-2 if policy == "mixed_bfloat16" else 3e-3
    np.testing.assert_allclose(a.astype("float32"), b.astype("float32"), atol=tol)


@pytest.mark.parametrize(
    "key, jit_compile", [("lstm", "auto"), ("gru_after", "auto"), ("gated", "auto"), ("gru", True)]
)
def test_fit_gives_equal_weights_on_both_paths(key, jit_compile):
    rng = np.random.default_rng(8)
    x = rng.standard_normal((8, 6, 3))
    y = rng.standard_normal((8, 6, 5))
    mask = np.ones((8, 6), bool)
    mask[:3, 4:] = False
    models = []
    for layer in make_pair(key, x.shape, return_sequences=True):
        inputs = keras.Input((6, 3), dtype="float64")
        m_in = keras.Input((6,), dtype="bool")
        model = keras.Model([inputs, m_in], layer(inputs, mask=m_in))
        model.compile(optimizer=keras.optimizers.SGD(0.1), loss="mse", jit_compile=jit_compile)
        model.fit([x, mask], y, batch_size=4, epochs=2, shuffle=False, verbose=0)
        models.append(model)
    for a, b in zip(models[0].get_weights(), models[1].get_weights()):
        np.testing.assert_allclose(a, b, atol=1e-9)
    assert not np.allclose(models[0].get_weights()[0], make_pair(key, x.shape)[0].get_weights()[0])


def test_old_config_without_fused_key_loads_with_the_fused_path():
    layer = ks.layers.Recurrent(ks.cells.LSTMCell(3))
    config = layer.get_config()
    assert config["fused"] is True
    del config["fused"]
    restored = ks.layers.Recurrent.from_config(config)
    assert restored.fused and fused_kind(restored, True) == "lstm"
    generic = ks.layers.Recurrent.from_config({**config, "fused": False})
    assert fused_kind(generic, True) is None
