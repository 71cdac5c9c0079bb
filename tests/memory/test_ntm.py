"""NTMCell and the NTM layer: NumPy reference, invariants, gradients, saving."""

import keras
import numpy as np
import pytest
import reference_memory as ref
from keras import ops

import keras_seqmodels as ks
from keras_seqmodels.testing import compute_gradients, run_layer_test

F64 = keras.backend.backend() == "tensorflow"
DTYPE = "float64" if F64 else "float32"
ATOL = 1e-9 if F64 else 5e-5
N, M, UNITS = 6, 3, 5


def make_ntm(controller="lstm", **kw):
    return ks.memory.NTM(
        UNITS,
        memory_size=N,
        memory_width=M,
        read_heads=2,
        write_heads=2,
        shift_range=1,
        controller=controller,
        return_sequences=True,
        return_state=True,
        dtype=DTYPE,
        **kw,
    )


def randomize(layer, seed=0, scale=0.6):
    rng = np.random.default_rng(seed)
    for v in layer.weights:
        if v.trainable:
            v.assign(rng.uniform(-scale, scale, v.shape).astype(v.dtype))


def weights_by_name(layer):
    return {v.path.split("/")[-1]: ops.convert_to_numpy(v) for v in layer.weights}


@pytest.mark.parametrize("controller", ["lstm", "feedforward"])
def test_forward_matches_numpy(controller):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 4, 3)).astype(DTYPE)
    layer = make_ntm(controller)
    layer.build(x.shape)
    randomize(layer)
    out, *states = layer(x)
    ref_out, ref_states = ref.ntm_forward(
        x, weights_by_name(layer), N, M, 2, 2, 1, UNITS, controller
    )
    np.testing.assert_allclose(ops.convert_to_numpy(out), ref_out, atol=ATOL)
    memory, read_w, write_w, reads = states[-4:]
    for got, key in ((memory, "memory"), (read_w, "read_w"), (write_w, "write_w")):
        np.testing.assert_allclose(ops.convert_to_numpy(got), ref_states[key], atol=ATOL)


def test_weightings_sum_to_one_and_states_finite_with_zero_inputs():
    layer = make_ntm(learn_initial_state=False)
    x = np.zeros((2, 5, 3), DTYPE)
    out, h, c, memory, read_w, write_w, reads = layer(x)
    for w in (read_w, write_w):
        np.testing.assert_allclose(ops.convert_to_numpy(w).sum(-1), 1.0, atol=1e-6)
    for s in (out, memory, reads):
        assert np.all(np.isfinite(ops.convert_to_numpy(s)))


def test_zero_memory_and_zero_keys_give_finite_gradients():
    # Zero weights give zero keys; the fixed initial memory is ~0.
    layer = make_ntm(
        learn_initial_state=False, kernel_initializer="zeros", recurrent_initializer="zeros"
    )
    x = np.zeros((1, 3, 3), DTYPE)
    layer.build(x.shape)

    def loss():
        return ops.sum(layer(x)[0])

    grads = compute_gradients(loss, layer.trainable_weights)
    assert all(np.all(np.isfinite(g)) for g in grads)


@pytest.mark.parametrize("read_mode", ["soft", "hard"])
def test_half_precision_gradients_are_finite(read_mode):
    # Under mixed_float16 the softmax weights underflow to zero, where
    # d log(w + eps)/dw = 1e6 overflows float16; the addressing runs in
    # float32 so no gradient becomes NaN (it did on JAX).
    previous = keras.config.dtype_policy()
    keras.config.set_dtype_policy("mixed_float16")
    try:
        keras.utils.set_random_seed(0)
        layer = ks.memory.NTM(
            4, memory_size=8, memory_width=4, read_mode=read_mode, return_sequences=True
        )
        x = np.random.default_rng(0).standard_normal((2, 5, 3)).astype(DTYPE)
        layer(x)

        def loss():
            return ops.mean(ops.cast(layer(x, training=True), "float32"))

        grads = compute_gradients(loss, layer.trainable_weights)
    finally:
        keras.config.set_dtype_policy(previous)
    assert layer.compute_dtype == "float16"
    assert all(np.all(np.isfinite(g)) for g in grads)
    assert any(np.any(g != 0) for g in grads)


def test_gradients_match_finite_differences():
    rng = np.random.default_rng(2)
    x = rng.standard_normal((1, 3, 2)).astype(DTYPE)
    proj = rng.standard_normal((1, 3, UNITS + 2 * M))
    layer = make_ntm()
    layer.build(x.shape)
    randomize(layer, seed=3)

    def loss():
        return ops.sum(layer(x)[0] * ops.convert_to_tensor(proj.astype(DTYPE)))

    grads = compute_gradients(loss, layer.trainable_weights)
    weights = weights_by_name(layer)
    # The numeric side is the float64 NumPy reference on every backend.
    eps = 1e-6
    for var, grad in zip(layer.trainable_weights, grads):
        name = var.path.split("/")[-1]
        # Three entries of every weight keep the test within seconds.
        for flat in rng.choice(weights[name].size, 3, replace=False):
            idx = np.unravel_index(flat, weights[name].shape)
            values = []
            for sign in (1, -1):
                w = {k: v.astype("float64").copy() for k, v in weights.items()}
                w[name][idx] += sign * eps
                out, _ = ref.ntm_forward(x.astype("float64"), w, N, M, 2, 2, 1, UNITS)
                values.append((out * proj).sum())
            numeric = (values[0] - values[1]) / (2 * eps)
            np.testing.assert_allclose(
                grad[idx],
                numeric,
                atol=1e-6 if F64 else 1e-4,
                rtol=1e-5 if F64 else 1e-3,
                err_msg=name,
            )


def test_cell_in_recurrent_with_hoisted_projection_matches_layer():
    rng = np.random.default_rng(4)
    x = rng.standard_normal((2, 4, 3)).astype(DTYPE)
    layer = make_ntm()
    layer.build(x.shape)
    randomize(layer)
    cell = layer.cell
    hoisted = ks.layers.Recurrent(cell, return_sequences=True, precompute_inputs=True, dtype=DTYPE)
    np.testing.assert_allclose(
        ops.convert_to_numpy(hoisted(x)), ops.convert_to_numpy(layer(x)[0]), atol=ATOL
    )


def test_hard_reads_pick_one_slot_and_are_unbiased_for_the_soft_gradient():
    cell = ks.memory.NTMCell(2, memory_size=4, memory_width=2, read_mode="hard", dtype="float32")
    rng = np.random.default_rng(5)
    batch = 4000
    memory = np.broadcast_to(rng.standard_normal((1, 4, 2)), (batch, 4, 2)).astype("float32")
    logits = keras.Variable(rng.standard_normal((1, 1, 4)).astype("float32"))
    uniforms = rng.uniform(size=(batch, 1)).astype("float32")
    proj = np.array([1.0, -2.0], "float32")

    def weights():
        return ops.softmax(ops.broadcast_to(logits, (batch, 1, 4)), axis=-1)

    reads = ops.convert_to_numpy(cell._hard_read(memory, weights(), uniforms, True))
    # Every read is one memory row.
    assert np.all(np.min(np.abs(reads[:, 0, None, :] - memory[:1]).sum(-1), -1) < 1e-6)
    greedy = ops.convert_to_numpy(cell._hard_read(memory, weights(), uniforms, False))
    best = np.argmax(ops.convert_to_numpy(weights())[0, 0])
    np.testing.assert_allclose(greedy[:, 0], np.broadcast_to(memory[0, best], (batch, 2)))

    def hard_loss():
        return ops.mean(ops.sum(cell._hard_read(memory, weights(), uniforms, True) * proj, -1))

    def soft_loss():
        r = ks.memory.addressing.read(memory, weights())
        return ops.mean(ops.sum(r * proj, -1))

    (g_hard,) = compute_gradients(hard_loss, [logits])
    (g_soft,) = compute_gradients(soft_loss, [logits])
    # The score-function estimate averages to the exact gradient.
    np.testing.assert_allclose(g_hard, g_soft, atol=0.1)


def test_hard_read_layer_trains_and_samples_only_in_training():
    layer = ks.memory.NTM(4, memory_size=5, memory_width=2, read_mode="hard", seed=1)
    x = np.random.default_rng(0).standard_normal((2, 3, 3)).astype("float32")
    a = ops.convert_to_numpy(layer(x))
    b = ops.convert_to_numpy(layer(x))
    np.testing.assert_allclose(a, b)
    assert np.all(np.isfinite(ops.convert_to_numpy(layer(x, training=True))))


def test_constructor_validation():
    with pytest.raises(ValueError, match="memory_size"):
        ks.memory.NTMCell(4, memory_size=0)
    with pytest.raises(ValueError, match="shift_range"):
        ks.memory.NTMCell(4, memory_size=2, shift_range=1)
    with pytest.raises(ValueError, match="controller"):
        ks.memory.NTMCell(4, controller="gru")
    with pytest.raises(ValueError, match="read_mode"):
        ks.memory.NTMCell(4, read_mode="sparse")


@pytest.mark.slow
@pytest.mark.parametrize(
    "kw",
    [{}, {"controller": "feedforward", "read_mode": "hard", "learn_initial_state": False}],
    ids=["lstm_soft", "ff_hard_fixed"],
)
def test_layer_contract(kw):
    x = np.random.default_rng(0).standard_normal((2, 4, 3)).astype("float32")
    run_layer_test(
        lambda: ks.memory.NTM(4, memory_size=5, memory_width=2, return_sequences=True, **kw),
        x,
        expected_output_shape=(2, 4, 6),
    )


@pytest.mark.slow
def test_cell_contract_in_recurrent():
    x = np.random.default_rng(0).standard_normal((2, 4, 3)).astype("float32")
    run_layer_test(
        lambda: ks.layers.Recurrent(
            ks.memory.NTMCell(4, memory_size=5, memory_width=2), return_state=True
        ),
        x,
        expected_output_shape=(2, 6),
        run_mixed_precision=False,
    )


def test_masked_steps_leave_memory_unchanged():
    rng = np.random.default_rng(6)
    x = rng.standard_normal((2, 5, 3)).astype("float32")
    layer = ks.memory.NTM(4, memory_size=5, memory_width=2, return_state=True)
    mask = np.array([[True] * 5, [True, True, True, False, False]])
    padded = layer(x, mask=mask)
    alone = layer(x[1:, :3])
    for a, b in zip(padded[3:], alone[3:]):
        np.testing.assert_allclose(
            ops.convert_to_numpy(a)[1], ops.convert_to_numpy(b)[0], atol=1e-5
        )
