"""Checks shared by the tests of LRU, RGLRU, HawkBlock and SelectiveSSM.

Each test file describes its layer with a ``Spec``: how to build it, how to
map its weights onto the float64 reference of ``references.py`` and how its
states map onto the reference's. The checks here compare the layer's
parallel form (one call), its step form (``layer.step``) and the reference.
"""

import dataclasses
import os
import tempfile
from collections.abc import Callable

import keras
import numpy as np
import references as R
from keras import ops

import keras_seqmodels as ks
from keras_seqmodels.testing.layer_test import compute_gradients


@dataclasses.dataclass
class Spec:
    make: Callable  # make(**layer_kwargs) -> layer
    features: int  # input width
    reference: Callable  # reference(weights: dict of float64 arrays) -> step function
    to_ref: Callable  # to_ref(list of layer states as arrays) -> reference states
    from_ref: Callable  # from_ref(reference states) -> list of layer states


def weights_of(layer):
    return {
        v.path.split("/")[-1]: np.asarray(ops.convert_to_numpy(v), np.float64)
        for v in layer.weights
        if v.trainable
    }


def inputs(batch, time, features, seed=0, scale=1.0):
    return (np.random.RandomState(seed).randn(batch, time, features) * scale).astype("float32")


def numpy_states(states):
    return [np.asarray(ops.convert_to_numpy(s), np.float64) for s in states]


def close(actual, expected, rtol=1e-5):
    """Elementwise within ``rtol`` of the reference, relative to the reference's scale."""
    expected = np.asarray(expected)
    scale = max(float(np.abs(expected).max()), 1e-6) if expected.size else 1.0
    np.testing.assert_allclose(np.asarray(actual), expected, rtol=rtol, atol=rtol * scale)


def zero_ref_states(spec, layer, batch):
    return spec.to_ref(numpy_states(layer.get_initial_state(batch)))


def run_layer(layer, x, **call_kwargs):
    out = layer(x, **call_kwargs)
    if not isinstance(out, (list, tuple)):
        out = [out]
    return [np.asarray(ops.convert_to_numpy(o), np.float64) for o in out]


def stream(layer, x, states):
    """The step form over a whole sequence: ``layer.step`` once per step, in
    one compiled loop (``keras.ops.fori_loop`` inside ``tf.function`` or
    ``jax.jit``), so long sequences stream in seconds. Returns ``(outputs,
    final states)``."""
    y0, _ = layer.step(x[:, 0], states)

    def run(x, states):
        def body(t, carry):
            out, states = carry
            y, states = layer.step(ops.take(x, t, axis=1), states)
            return ops.slice_update(out, (0, t, 0), ops.expand_dims(y, 1)), states

        out = ops.zeros((x.shape[0], x.shape[1], y0.shape[-1]), dtype=y0.dtype)
        return ops.fori_loop(0, x.shape[1], body, (out, list(states)))

    backend = keras.backend.backend()
    if backend == "tensorflow":
        import tensorflow as tf

        run = tf.function(run)
    elif backend == "jax":
        import jax

        run = jax.jit(run)
    return run(ops.convert_to_tensor(x), list(states))


def check_parallel_step_reference(spec, length, batch=2, rtol=1e-5, step_form=True, **kw):
    """Parallel form == reference == step form over ``length`` steps (the
    step form in one compiled loop, ``stream``, and for short sequences also
    as eager calls, one per step)."""
    layer = spec.make(return_sequences=True, return_state=True, **kw)
    x = inputs(batch, length, spec.features, seed=length)
    y, *states = run_layer(layer, x)
    ref_step = spec.reference(weights_of(layer))
    ref_y, ref_states = R.run(ref_step, x, zero_ref_states(spec, layer, batch))
    close(y, ref_y, rtol)
    for s, r in zip(states, spec.from_ref(ref_states)):
        close(s, r, rtol)
    if step_form:
        outs, step_states = stream(layer, x, layer.get_initial_state(batch))
        close(ops.convert_to_numpy(outs), y, rtol)
        for s, p in zip(numpy_states(step_states), states):
            close(s, p, rtol)
    if step_form and length <= 7:
        step_states = layer.get_initial_state(batch)
        outs = []
        for t in range(length):
            out, step_states = layer.step(x[:, t], step_states)
            outs.append(ops.convert_to_numpy(out))
        close(np.stack(outs, 1), y, rtol)
        for s, p in zip(numpy_states(step_states), states):
            close(s, p, rtol)


def check_masks(spec, time=6, rtol=1e-5):
    """Right padding keeps the state; an all-masked row keeps its initial
    state and outputs zeros; without return_sequences the last real step's
    output comes out."""
    lengths = [time, 3, 0]
    batch = len(lengths)
    mask = np.arange(time)[None, :] < np.array(lengths)[:, None]
    x = inputs(batch, time, spec.features, seed=3)
    layer = spec.make(return_sequences=True, return_state=True)
    if not layer.built:
        layer.build((None, None, spec.features))
    init = [
        np.asarray(np.random.RandomState(4).randn(*s.shape) * 0.5, "float32")
        for s in numpy_states(layer.get_initial_state(batch))
    ]
    y, *states = run_layer(layer, x, mask=mask, initial_state=init)
    ref_y, ref_states = R.run(
        spec.reference(weights_of(layer)), x, spec.to_ref(numpy_states(init)), mask=mask
    )
    close(y, ref_y, rtol)
    for s, r in zip(states, spec.from_ref(ref_states)):
        close(s, r, rtol)
    assert np.all(y[2] == 0.0)
    for s, i in zip(states, init):
        np.testing.assert_array_equal(s[2], i[2])
    # Each row alone, unpadded, gives the same.
    for row, n in enumerate(lengths[:2]):
        alone, *alone_states = run_layer(
            layer, x[row : row + 1, :n], initial_state=[i[row : row + 1] for i in init]
        )
        close(y[row, :n], alone[0], rtol)
        for s, a in zip(states, alone_states):
            close(s[row], a[0], rtol)
    last = spec.make(return_sequences=False)
    if not last.built:
        last.build((None, None, spec.features))
    for var, value in zip(last.trainable_weights, layer.trainable_weights):
        var.assign(value)
    (final,) = run_layer(last, x, mask=mask, initial_state=init)
    close(final[0], ref_y[0, -1], rtol)
    close(final[1], ref_y[1, 2], rtol)
    assert np.all(final[2] == 0.0)


def check_go_backwards(spec, time=7, rtol=1e-5):
    lengths = [time, 4]
    mask = np.arange(time)[None, :] < np.array(lengths)[:, None]
    x = inputs(2, time, spec.features, seed=5)
    layer = spec.make(return_sequences=True, return_state=True, go_backwards=True)
    y, *states = run_layer(layer, x, mask=mask)
    ref_y, ref_states = R.run(
        spec.reference(weights_of(layer)),
        x,
        zero_ref_states(spec, layer, 2),
        mask=mask,
        go_backwards=True,
    )
    close(y, ref_y, rtol)
    for s, r in zip(states, spec.from_ref(ref_states)):
        close(s, r, rtol)


def check_initial_state_and_stateful(spec, rtol=1e-5):
    """return_state / initial_state chain two calls into one; a stateful
    layer over chunks equals one call over the whole sequence."""
    x = inputs(2, 12, spec.features, seed=6)
    whole = spec.make(return_sequences=True, return_state=True)
    y, *states = run_layer(whole, x)
    y1, *s1 = run_layer(whole, x[:, :5])
    y2, *s2 = run_layer(whole, x[:, 5:], initial_state=[s.astype("float32") for s in s1])
    close(np.concatenate([y1, y2], 1), y, rtol)
    for a, b in zip(s2, states):
        close(a, b, rtol)

    stateful = spec.make(return_sequences=True, stateful=True)
    model = keras.Sequential([keras.Input(batch_shape=(2, None, spec.features)), stateful])
    for var, value in zip(stateful.trainable_weights, whole.trainable_weights):
        var.assign(value)
    chunks = [model(x[:, :5]), model(x[:, 5:9]), model(x[:, 9:])]
    close(np.concatenate([ops.convert_to_numpy(c) for c in chunks], 1), y, rtol)
    stateful.reset_states()
    close(ops.convert_to_numpy(model(x[:, :5])), y[:, :5], rtol)


def check_bidirectional(spec, rtol=1e-5):
    """Inside the package's Bidirectional, each direction equals the
    reference run forwards and over each row reversed within its length."""
    time, lengths = 6, [6, 4]
    mask = np.arange(time)[None, :] < np.array(lengths)[:, None]
    x = inputs(2, time, spec.features, seed=7)
    bi = ks.layers.Bidirectional(spec.make(return_sequences=True), merge_mode="concat")
    y = np.asarray(ops.convert_to_numpy(bi(x, mask=mask)), np.float64)
    fwd, bwd = bi.forward_layer, bi.backward_layer
    width = y.shape[-1] // 2
    ref_f, _ = R.run(spec.reference(weights_of(fwd)), x, zero_ref_states(spec, fwd, 2), mask=mask)
    close(y[..., :width], ref_f, rtol)
    for row, n in enumerate(lengths):
        rev = x[row : row + 1, :n][:, ::-1]
        ref_b, _ = R.run(spec.reference(weights_of(bwd)), rev, zero_ref_states(spec, bwd, 1))
        close(y[row, :n, width:], ref_b[0, ::-1], rtol)
        assert np.all(y[row, n:] == 0.0)


def check_gradients(spec, time=3, batch=2, eps=1e-6, rtol=1e-5, **kw):
    """Gradients of a float64 layer (the backend's automatic differentiation)
    against central finite differences of the float64 reference, for every
    trainable weight entry. (Finite differences of the reference rather than
    of the layer: on JAX, ``keras.ops.cos`` and ``sin`` return float32 for
    float64 input, which would blur the layer's own differences.)"""
    layer = spec.make(return_sequences=True, dtype="float64", **kw)
    x = inputs(batch, time, spec.features, seed=8).astype("float64")
    probe = np.random.RandomState(9).randn(*ops.convert_to_numpy(layer(x)).shape)
    grads = compute_gradients(lambda: ops.sum(layer(x) * probe), layer.trainable_weights)
    weights = weights_of(layer)
    states = zero_ref_states(spec, layer, batch)

    def ref_loss(w):
        return float(np.sum(R.run(spec.reference(w), x, states)[0] * probe))

    for var, grad in zip(layer.trainable_weights, grads):
        name = var.path.split("/")[-1]
        numeric = np.zeros_like(weights[name])
        for idx in np.ndindex(numeric.shape):
            for sign in (1.0, -1.0):
                shifted = dict(weights)
                shifted[name] = weights[name].copy()
                shifted[name][idx] += sign * eps
                numeric[idx] += sign * ref_loss(shifted) / (2 * eps)
        np.testing.assert_allclose(
            grad, numeric, rtol=rtol, atol=rtol * max(np.abs(numeric).max(), 1e-3),
            err_msg=f"gradient of {var.path}",
        )  # fmt: skip


def check_long(spec, length=16_384, rtol=1e-5):
    """The parallel form equals the step-by-step reference and the step form
    over ``length`` steps, at a tiny width and batch."""
    check_parallel_step_reference(spec, length, batch=1, rtol=rtol)


def check_long_extreme(spec, set_extreme, length=16_384, rtol=1e-5):
    """At ``length`` steps with weights that put the gates (or |lambda|) at
    both ends, outputs, states and gradients are finite and the outputs
    match the reference within ``rtol``."""
    layer = spec.make(return_sequences=True, return_state=True)
    x = inputs(1, length, spec.features, seed=10)
    layer(x[:, :1])
    set_extreme(layer)
    y, *states = run_layer(layer, x)
    assert np.all(np.isfinite(y)) and all(np.all(np.isfinite(s)) for s in states)
    ref_y, ref_states = R.run(spec.reference(weights_of(layer)), x, zero_ref_states(spec, layer, 1))
    close(y, ref_y, rtol)
    for s, r in zip(states, spec.from_ref(ref_states)):
        close(s, r, rtol)
    grads = compute_gradients(lambda: ops.mean(layer(x)[0] ** 2), layer.trainable_weights)
    for var, grad in zip(layer.trainable_weights, grads):
        assert np.all(np.isfinite(grad)), var.path


def check_keras_round_trip(spec, **kw):
    """``.keras`` save and load give the same outputs and states."""
    layer = spec.make(return_sequences=True, return_state=True, **kw)
    inp = keras.Input((None, spec.features))
    model = keras.Model(inp, layer(inp))
    x = inputs(2, 5, spec.features, seed=11)
    before = [ops.convert_to_numpy(o) for o in model(x)]
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "m.keras")
        model.save(path)
        loaded = keras.saving.load_model(path)
    after = [ops.convert_to_numpy(o) for o in loaded(x)]
    for a, b in zip(before, after):
        np.testing.assert_array_equal(a, b)
    assert type(loaded.layers[-1]) is type(layer)
    assert loaded.layers[-1].get_config() == layer.get_config()


def check_input_errors(spec, name):
    layer = spec.make(name=name)
    for bad, words in (
        (np.zeros((2, spec.features), "float32"), "rank 3"),
        (np.zeros((2, 3, spec.features), "int32"), "floating-point"),
    ):
        try:
            layer(bad)
        except ValueError as err:
            assert name in str(err) and words in str(err), str(err)
        else:
            raise AssertionError(f"{name} accepted {bad.shape} {bad.dtype}")
