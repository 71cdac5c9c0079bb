"""Leaky, delayed, clockwork, echo-state, deep-transition and output-feedback
cells against NumPy references of their equations (outputs, gradients,
masking), plus serialization round trips through run_layer_test."""

import keras
import numpy as np
import pytest
from design_reference import (
    clockwork_ref,
    deep_transition_ref,
    delayed_ref,
    esn_ref,
    leaky_ref,
    output_feedback_ref,
    weights_of,
)
from keras import ops

import keras_seqmodels as ks
from keras_seqmodels.testing import compute_gradients, run_layer_test

F64 = keras.backend.backend() == "tensorflow"
DTYPE = "float64" if F64 else "float32"
ATOL = 1e-10 if F64 else 3e-6


def _stack_feedback(w):
    """[x, y] U' with U' = [U; R]: the feedback weights as extra input rows."""
    return {**w, "kernel": np.concatenate([w["kernel"], w["feedback_kernel"]], 0)}


# name -> (factory(dtype), reference(x, w, mask))
DESIGNS = {
    "leaky_fixed": (
        lambda **kw: ks.cells.LeakyCell(4, alpha_range=(0.3, 0.9), **kw),
        leaky_ref,
    ),
    "leaky_learned": (
        lambda **kw: ks.cells.LeakyCell(4, alpha_mode="learned", **kw),
        leaky_ref,
    ),
    "leaky_multiscale": (
        lambda **kw: ks.cells.LeakyCell(5, alpha_mode="multiscale", timescales=[1, 2, 8], **kw),
        leaky_ref,
    ),
    "delayed": (
        lambda **kw: ks.cells.DelayedCell(3, delay=3, **kw),
        lambda x, w, mask=None: delayed_ref(x, w, 3, mask),
    ),
    "clockwork": (
        lambda **kw: ks.cells.ClockworkCell(6, periods=[1, 2, 4], **kw),
        lambda x, w, mask=None: clockwork_ref(x, w, [1, 2, 4], mask),
    ),
    "echo_state": (
        lambda **kw: ks.cells.EchoStateCell(
            5,
            spectral_radius=1.3,
            sparsity=0.5,
            leak_rate=0.6,
            trainable_reservoir=True,
            seed=3,
            **kw,
        ),
        lambda x, w, mask=None: esn_ref(x, w, 0.6, mask),
    ),
    # Output feedback: the last input feature is y(t-1), weighted by R.
    "echo_state_feedback": (
        lambda **kw: ks.cells.EchoStateCell(
            5, leak_rate=0.7, feedback_size=1, trainable_reservoir=True, seed=5, **kw
        ),
        lambda x, w, mask=None: esn_ref(x, _stack_feedback(w), 0.7, mask),
    ),
    "deep_transition": (
        lambda **kw: ks.cells.DeepTransitionCell(
            3, transition_layers=[4, 2], input_layers=[2], output_layers=[3, 2], skip=True, **kw
        ),
        lambda x, w, mask=None: deep_transition_ref(x, w, 1, 2, 2, True, mask),
    ),
    "output_feedback": (
        lambda **kw: ks.cells.OutputFeedbackCell(4, 2, **kw),
        output_feedback_ref,
    ),
    "output_feedback_hidden": (
        lambda **kw: ks.cells.OutputFeedbackCell(3, 2, hidden_recurrence=True, **kw),
        output_feedback_ref,
    ),
}


def randomize(layer, seed=0, scale=0.6):
    rng = np.random.default_rng(seed)
    for v in layer.weights:
        if "alpha" in v.path and "logit" not in v.path:
            v.assign(rng.uniform(0.1, 0.9, v.shape).astype(v.dtype))
        else:
            v.assign(rng.uniform(-scale, scale, v.shape).astype(v.dtype))


def make(key, **kw):
    cell = DESIGNS[key][0](dtype=DTYPE, **kw)
    return ks.layers.Recurrent(cell, return_sequences=True, dtype=DTYPE)


@pytest.mark.parametrize("key", list(DESIGNS))
def test_forward_and_masking_match_numpy(key):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((3, 9, 2)).astype(DTYPE)
    mask = np.ones((3, 9), bool)
    mask[1, 6:] = False
    mask[2, 3] = False  # an interior gap: the state (and a clock) must hold
    layer = make(key)
    layer.build(x.shape)
    if key != "leaky_multiscale":
        randomize(layer)
    w = weights_of(layer.cell)
    ref = DESIGNS[key][1]
    out = ops.convert_to_numpy(layer(x))
    np.testing.assert_allclose(out, ref(x, w), atol=ATOL)
    masked = ops.convert_to_numpy(layer(x, mask=mask))
    np.testing.assert_allclose(masked, ref(x, w, mask=mask.astype(float)), atol=ATOL)
    # Padding gives what the shorter sequence gives alone.
    alone = ops.convert_to_numpy(layer(x[1:2, :6]))
    np.testing.assert_allclose(masked[1, :6], alone[0], atol=ATOL)


@pytest.mark.parametrize("key", list(DESIGNS))
def test_gradients_match_finite_differences(key):
    rng = np.random.default_rng(2)
    x = rng.standard_normal((2, 5, 2)).astype(DTYPE)
    layer = make(key)
    layer.build(x.shape)
    randomize(layer, seed=4)
    proj = rng.standard_normal(tuple(layer(x).shape)).astype(DTYPE)
    variables = layer.cell.trainable_weights
    grads = compute_gradients(lambda: ops.sum(layer(x) * proj), variables)
    w = weights_of(layer.cell)
    ref = DESIGNS[key][1]
    eps = 1e-6
    for var, grad in zip(variables, grads):
        name = var.path.split(layer.cell.name + "/", 1)[-1]
        numeric = np.zeros_like(w[name])
        for idx in np.ndindex(numeric.shape):
            plus = {k: v.copy() for k, v in w.items()}
            minus = {k: v.copy() for k, v in w.items()}
            plus[name][idx] += eps
            minus[name][idx] -= eps
            numeric[idx] = (np.sum(ref(x, plus) * proj) - np.sum(ref(x, minus) * proj)) / (2 * eps)
        np.testing.assert_allclose(
            grad,
            numeric,
            atol=1e-7 if F64 else 2e-4,
            rtol=1e-6 if F64 else 2e-4,
            err_msg=name,
        )


@pytest.mark.parametrize("key", list(DESIGNS))
def test_layer_contract(key):
    # One fit step for all the designs at once is in test_fit_stack_of_designs.
    x = np.random.default_rng(0).standard_normal((2, 5, 3)).astype("float32")
    run_layer_test(
        lambda: ks.layers.Recurrent(DESIGNS[key][0](), return_sequences=True),
        x,
        run_fit=False,
    )


@pytest.mark.slow
def test_fit_stack_of_designs():
    """A deep RNN stacking the new cells in one time loop
    (``keras.layers.StackedRNNCells``) trains in fit, jit-compiled on JAX."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((8, 6, 3)).astype("float32")
    y = rng.standard_normal((8, 1)).astype("float32")
    cells = [
        ks.cells.LeakyCell(4, alpha_mode="learned"),
        ks.cells.DelayedCell(4, delay=2),
        ks.cells.ClockworkCell(4, periods=[1, 2]),
        ks.cells.DeepTransitionCell(4, transition_layers=[5], skip=True),
        ks.cells.OutputFeedbackCell(4, 3, hidden_recurrence=True),
        ks.cells.EchoStateCell(6, seed=0),
    ]
    model = keras.Sequential(
        [
            keras.Input((6, 3)),
            ks.layers.Recurrent(keras.layers.StackedRNNCells(cells)),
            keras.layers.Dense(1),
        ]
    )
    model.compile(optimizer="adam", loss="mse")
    before = [ops.convert_to_numpy(v).copy() for v in model.trainable_weights]
    history = model.fit(x, y, epochs=2, batch_size=4, verbose=0)
    assert np.all(np.isfinite(history.history["loss"]))
    after = [ops.convert_to_numpy(v) for v in model.trainable_weights]
    assert all(not np.allclose(a, b) for a, b in zip(after, before))
    reservoir = cells[-1].recurrent_kernel
    assert all(v is not reservoir for v in model.trainable_weights)


@pytest.mark.slow
def test_fit_with_recurrent_dropout():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((8, 6, 3)).astype("float32")
    y = rng.standard_normal((8, 1)).astype("float32")
    model = keras.Sequential(
        [
            keras.Input((6, 3)),
            ks.layers.Recurrent(
                ks.cells.DelayedCell(4, delay=2, dropout=0.2, recurrent_dropout=0.3),
                return_sequences=True,
            ),
            ks.layers.Recurrent(ks.cells.ClockworkCell(4, periods=[1, 2], recurrent_dropout=0.3)),
            keras.layers.Dense(1),
        ]
    )
    model.compile(optimizer="adam", loss="mse")
    history = model.fit(x, y, epochs=2, batch_size=4, verbose=0)
    assert np.all(np.isfinite(history.history["loss"]))


def test_golden_leaky_and_clockwork():
    const = dict(
        kernel_initializer=keras.initializers.Constant(0.5),
        recurrent_initializer=keras.initializers.Constant(-0.25),
        bias_initializer=keras.initializers.Constant(0.1),
    )
    x = np.array([[[1.0], [2.0], [3.0]]], "float32")
    # Two units with τ = 1, 4: α = 0 and α = 0.75.
    cell = ks.cells.LeakyCell(2, alpha_mode="multiscale", timescales=[1, 4], **const)
    out = ops.convert_to_numpy(ks.layers.Recurrent(cell, return_sequences=True)(x))[0]
    h = np.zeros(2)
    for t in range(3):
        f = np.tanh(0.5 * x[0, t, 0] + 0.1 - 0.25 * h.sum())
        h = np.array([f, 0.75 * h[1] + 0.25 * f])
        np.testing.assert_allclose(out[t], h, rtol=1e-6)
    np.testing.assert_allclose(out[0], [0.5370496, 0.1342624], rtol=1e-5)
    # Clockwork, periods (1, 2), one unit each: the slow unit ticks at t=0, 2
    # and feeds the fast one; the fast one never feeds the slow one.
    cell = ks.cells.ClockworkCell(2, periods=[1, 2], **const)
    out = ops.convert_to_numpy(ks.layers.Recurrent(cell, return_sequences=True)(x))[0]
    fast1, slow1 = np.tanh(0.6), np.tanh(0.6)
    fast2 = np.tanh(1.1 - 0.25 * (fast1 + slow1))
    slow3 = np.tanh(1.6 - 0.25 * slow1)
    fast3 = np.tanh(1.6 - 0.25 * (fast2 + slow1))
    np.testing.assert_allclose(out, [[fast1, slow1], [fast2, slow1], [fast3, slow3]], rtol=1e-6)


def test_leaky_alpha_modes():
    fixed = ks.cells.LeakyCell(200, alpha_range=(0.6, 0.8), seed=1)
    fixed.build((None, 2))
    a = ops.convert_to_numpy(fixed.alpha)
    assert a.min() >= 0.6 and a.max() <= 0.8 and a.std() > 0.03
    assert all(v is not fixed.alpha_weight for v in fixed.trainable_weights)
    learned = ks.cells.LeakyCell(50, alpha_mode="learned", alpha_range=(0.6, 0.8))
    learned.build((None, 2))
    a = ops.convert_to_numpy(learned.alpha)
    assert any(v is learned.alpha_weight for v in learned.trainable_weights)
    assert a.min() >= 0.6 - 1e-6 and a.max() <= 0.8 + 1e-6
    multi = ks.cells.LeakyCell(6, alpha_mode="multiscale", timescales=[1, 2, 10])
    multi.build((None, 2))
    np.testing.assert_allclose(
        ops.convert_to_numpy(multi.alpha), [0, 0, 0.5, 0.5, 0.9, 0.9], atol=1e-7
    )


def test_clockwork_slow_modules_hold_between_ticks():
    cell = ks.cells.ClockworkCell(8, periods=[1, 2, 4, 8])
    x = np.random.default_rng(0).standard_normal((1, 9, 2)).astype("float32")
    out = ops.convert_to_numpy(ks.layers.Recurrent(cell, return_sequences=True)(x))[0]
    for module, period in enumerate([1, 2, 4, 8]):
        cols = out[:, 2 * module : 2 * module + 2]
        for t in range(1, 9):
            if t % period:
                np.testing.assert_array_equal(cols[t], cols[t - 1])
            else:
                assert not np.allclose(cols[t], cols[t - 1])


def test_echo_state_reservoir_is_fixed_and_has_the_radius():
    cell = ks.cells.EchoStateCell(60, spectral_radius=1.5, sparsity=0.8, seed=0)
    cell.build((None, 3))
    assert cell.trainable_weights == []
    rho = ks.initializers.spectral_radius(ops.convert_to_numpy(cell.recurrent_kernel))
    assert abs(rho - 1.5) < 0.015
    zeros = np.mean(ops.convert_to_numpy(cell.recurrent_kernel) == 0)
    assert 0.75 < zeros < 0.85
    # Same seed, same reservoir (a saved config rebuilds the same weights).
    again = ks.cells.EchoStateCell.from_config(cell.get_config())
    again.build((None, 3))
    np.testing.assert_array_equal(
        ops.convert_to_numpy(again.recurrent_kernel),
        ops.convert_to_numpy(cell.recurrent_kernel),
    )


def test_echo_state_output_feedback_enters_through_its_own_weights():
    cell = ks.cells.EchoStateCell(
        30, sparsity=0.9, feedback_size=1, feedback_scaling=0.5, seed=1, dtype=DTYPE
    )
    layer = ks.layers.Recurrent(cell, return_sequences=True, dtype=DTYPE)
    rng = np.random.default_rng(0)
    y = rng.uniform(-1, 1, (2, 12, 1))
    x = np.full((2, 12, 1), 0.2)
    states = ops.convert_to_numpy(layer(ks.cells.teacher_forcing_inputs(y, x).astype(DTYPE)))
    w = weights_of(cell)
    assert w["feedback_kernel"].shape == (1, 30) and cell.trainable_weights == []
    assert np.abs(w["feedback_kernel"]).max() <= 0.5
    # h(t) = tanh(0.2 U + y(t-1) R + W h(t-1)), y(-1) = 0, by hand.
    h = np.zeros((2, 30))
    for t in range(12):
        fed = y[:, t - 1] if t else np.zeros((2, 1))
        h = np.tanh(x[:, t] @ w["kernel"] + fed @ w["feedback_kernel"] + h @ w["recurrent_kernel"])
        np.testing.assert_allclose(states[:, t], h, atol=ATOL)
    # The feedback matters: other fed-back values, other states.
    other = ops.convert_to_numpy(layer(ks.cells.teacher_forcing_inputs(-y, x).astype(DTYPE)))
    assert np.abs(other[:, 1:] - states[:, 1:]).min() > 0
    # Without feedback the input weights are those of a cell without it.
    plain = ks.cells.EchoStateCell(30, sparsity=0.9, seed=1, dtype=DTYPE)
    plain.build((None, 1))
    np.testing.assert_array_equal(ops.convert_to_numpy(plain.kernel), w["kernel"])
    with pytest.raises(ValueError, match="fed-back output"):
        ks.cells.EchoStateCell(4, feedback_size=3).build((None, 2))


def test_echo_state_config_without_the_new_keys_still_loads():
    cell = ks.cells.EchoStateCell(20, spectral_radius=1.1, sparsity=0.7, seed=2)
    config = cell.get_config()
    for key in ("feedback_size", "feedback_scaling", "distribution"):
        config.pop(key)  # a config saved before output feedback existed
    old = ks.cells.EchoStateCell.from_config(config)
    assert old.feedback_size == 0 and old.distribution == "normal"
    old.build((None, 2))
    cell.build((None, 2))
    np.testing.assert_array_equal(
        ops.convert_to_numpy(old.recurrent_kernel), ops.convert_to_numpy(cell.recurrent_kernel)
    )
    uniform = ks.cells.EchoStateCell(20, sparsity=0.5, distribution="uniform", seed=2)
    uniform.build((None, 2))
    values = ops.convert_to_numpy(uniform.recurrent_kernel)
    again = ks.cells.EchoStateCell.from_config(uniform.get_config())
    again.build((None, 2))
    np.testing.assert_array_equal(ops.convert_to_numpy(again.recurrent_kernel), values)


def test_teacher_forcing_inputs_shift_the_targets_and_bound_the_noise():
    y = np.random.default_rng(0).standard_normal((3, 7, 2))
    x = np.ones((3, 7, 1))
    clean = ks.cells.teacher_forcing_inputs(y, x)
    assert clean.shape == (3, 7, 3)
    np.testing.assert_array_equal(clean[:, :, 0], 1.0)
    np.testing.assert_array_equal(clean[:, 0, 1:], 0.0)
    np.testing.assert_array_equal(clean[:, 1:, 1:], y[:, :-1])
    noisy = ks.cells.teacher_forcing_inputs(y, noise=1e-3, seed=0)
    delta = noisy - clean[..., 1:]
    assert 0 < np.abs(delta).max() <= 1e-3 and np.abs(delta).mean() > 2e-4
    np.testing.assert_array_equal(noisy, ks.cells.teacher_forcing_inputs(y, noise=1e-3, seed=0))
    with pytest.raises(ValueError, match="teacher_forcing_inputs: `inputs`"):
        ks.cells.teacher_forcing_inputs(y, x[:, :5])


def test_fit_readout_svd_solver():
    rng = np.random.default_rng(3)
    s = rng.standard_normal((200, 8))
    y = rng.standard_normal((200, 2))
    # Same minimiser as the normal equations on a well-conditioned problem.
    for ridge in (0.0, 0.5):
        k1, b1 = ks.cells.fit_readout(s, y, ridge=ridge)
        k2, b2 = ks.cells.fit_readout(s, y, ridge=ridge, solver="svd")
        np.testing.assert_allclose(k2, k1, atol=1e-10)
        np.testing.assert_allclose(b2, b1, atol=1e-10)
    # Nearly collinear features (condition number ~1e9): the normal equations
    # square it past float64's digits, the SVD does not.
    base = rng.standard_normal((300, 3))
    mix = base @ rng.standard_normal((3, 6)) + 1e-9 * rng.standard_normal((300, 6))
    features = np.concatenate([base, mix], 1)
    target = features @ rng.standard_normal((9, 1)) + 0.3
    kernel, bias = ks.cells.fit_readout(features, target, ridge=0.0, solver="svd")
    svd_error = np.abs(features @ kernel + bias - target).max()
    normal, nbias = ks.cells.fit_readout(features, target, ridge=1e-8)
    assert svd_error < 1e-12
    assert np.abs(features @ normal + nbias - target).max() > 1000 * svd_error


def _generator(units, seed, readout_inputs=True):
    cell = ks.cells.EchoStateCell(
        units,
        spectral_radius=0.9,
        sparsity=0.7,
        leak_rate=0.8,
        feedback_size=1,
        seed=seed,
        dtype=DTYPE,
    )
    gen = ks.cells.EchoStateGenerator(cell, readout_inputs=readout_inputs, dtype=DTYPE)
    gen.build((None, 1))
    return gen


@pytest.mark.parametrize("readout_inputs", [True, False])
def test_echo_state_generator_closed_loop_matches_numpy(readout_inputs):
    units, steps = 12, 25
    gen = _generator(units, 4, readout_inputs)
    rng = np.random.default_rng(5)
    width = units + (1 if readout_inputs else 0)
    kernel, bias = rng.uniform(-0.3, 0.3, (width, 1)), rng.uniform(-0.1, 0.1, 1)
    gen.set_readout(kernel, bias)
    x = rng.uniform(0, 0.5, (3, steps, 1)).astype(DTYPE)
    h0 = rng.uniform(-0.5, 0.5, (3, units)).astype(DTYPE)
    y0 = rng.uniform(-1, 1, (3, 1)).astype(DTYPE)
    loop = ks.layers.Recurrent(gen, return_sequences=True, dtype=DTYPE)
    out = ops.convert_to_numpy(loop(x, initial_state=[h0, y0]))
    w = weights_of(gen.reservoir)
    h, y = h0, y0
    for t in range(steps):
        z = x[:, t] @ w["kernel"] + y @ w["feedback_kernel"]
        h = 0.2 * h + 0.8 * np.tanh(z + h @ w["recurrent_kernel"])
        y = (np.concatenate([h, x[:, t]], -1) if readout_inputs else h) @ kernel + bias
        np.testing.assert_allclose(out[:, t], y, atol=ATOL, err_msg=f"step {t}")
    # The config rebuilds the same reservoir; the readout travels as weights.
    again = ks.cells.EchoStateGenerator.from_config(gen.get_config())
    again.build((None, 1))
    again.set_readout(kernel, bias)
    rerun = ks.layers.Recurrent(again, return_sequences=True, dtype=DTYPE)
    np.testing.assert_allclose(
        ops.convert_to_numpy(rerun(x, initial_state=[h0, y0])), out, atol=ATOL
    )
    with pytest.raises(ValueError, match="EchoStateGenerator: the readout"):
        gen.set_readout(np.zeros((width + 1, 1)), bias)


def test_echo_state_generator_saves_and_loads(tmp_path):
    gen = _generator(8, 6)
    gen.set_readout(np.linspace(-0.2, 0.2, 9)[:, None], np.array([0.05]))
    x = keras.Input((None, 1), dtype=DTYPE)
    h0, y0 = keras.Input((8,), dtype=DTYPE), keras.Input((1,), dtype=DTYPE)
    y = ks.layers.Recurrent(gen, return_sequences=True, dtype=DTYPE)(x, initial_state=[h0, y0])
    model = keras.Model([x, h0, y0], y)
    data = [np.full((2, 6, 1), 0.2, DTYPE), np.zeros((2, 8), DTYPE), np.ones((2, 1), DTYPE)]
    path = str(tmp_path / "generator.keras")
    model.save(path)
    loaded = keras.saving.load_model(path)
    np.testing.assert_allclose(
        ops.convert_to_numpy(loaded(data)), ops.convert_to_numpy(model(data)), atol=ATOL
    )


def test_fit_readout_solves_the_ridge_normal_equations():
    rng = np.random.default_rng(0)
    s = rng.standard_normal((2, 40, 6))
    y = rng.standard_normal((2, 40, 2))
    ridge, washout = 0.3, 5
    kernel, bias = ks.cells.fit_readout(s, y, ridge=ridge, washout=washout)
    S, Y = s[:, washout:].reshape(-1, 6), y[:, washout:].reshape(-1, 2)
    resid = S @ kernel + bias - Y
    # Zero gradient of ‖S V + c - Y‖² + λ‖V‖² in V and c.
    np.testing.assert_allclose(S.T @ resid + ridge * kernel, 0, atol=1e-9)
    np.testing.assert_allclose(resid.sum(0), 0, atol=1e-9)
    dense = keras.layers.Dense(2)
    dense.build((None, 6))
    ks.cells.fit_readout(s, y, readout=dense, ridge=ridge, washout=washout)
    np.testing.assert_allclose(ops.convert_to_numpy(dense.kernel), kernel, atol=1e-6)
    with pytest.raises(ValueError, match="fit_readout"):
        ks.cells.fit_readout(s, y[:, :3])


@pytest.mark.parametrize("radius,sparsity,n", [(1.2, 0.0, 30), (0.9, 0.9, 100), (3.0, 0.5, 64)])
def test_spectral_radius_initializer_within_one_percent(radius, sparsity, n):
    init = ks.initializers.SpectralRadius(radius, sparsity=sparsity, seed=1)
    w = ops.convert_to_numpy(init((n, n), "float32"))
    rho = np.max(np.abs(np.linalg.eigvals(w.astype(np.float64))))
    assert abs(rho - radius) / radius < 0.01
    assert abs(np.mean(w == 0) - sparsity) < 0.05
    clone = keras.initializers.deserialize(keras.initializers.serialize(init))
    np.testing.assert_array_equal(ops.convert_to_numpy(clone((n, n), "float32")), w)
    # ESN-initialised trainable Elman cell.
    cell = ks.cells.ElmanCell(n, recurrent_initializer=init)
    cell.build((None, 2))
    assert any(v is cell.recurrent_kernel for v in cell.trainable_weights)


def test_output_feedback_modes_agree():
    rng = np.random.default_rng(5)
    x = rng.standard_normal((3, 7, 2)).astype(DTYPE)
    y = rng.standard_normal((3, 7, 2)).astype(DTYPE)
    for hidden in (False, True):
        cell = ks.cells.OutputFeedbackCell(4, 2, hidden_recurrence=hidden, dtype=DTYPE)
        layer = ks.layers.OutputFeedback(cell, scheduled_sampling=True, seed=0, dtype=DTYPE)
        layer.build([x.shape, y.shape])
        randomize(layer)
        layer.teacher_probability.assign(1.0)
        w = weights_of(cell)
        teacher = ops.convert_to_numpy(layer([x, y]))
        np.testing.assert_allclose(teacher, output_feedback_ref(x, w, y), atol=ATOL)
        looped = ks.layers.OutputFeedback(cell, parallel=False, dtype=DTYPE)
        np.testing.assert_allclose(ops.convert_to_numpy(looped([x, y])), teacher, atol=ATOL)
        closed = ops.convert_to_numpy(layer(x))
        np.testing.assert_allclose(closed, output_feedback_ref(x, w), atol=ATOL)
        np.testing.assert_allclose(
            ops.convert_to_numpy(ks.layers.Recurrent(cell, return_sequences=True, dtype=DTYPE)(x)),
            closed,
            atol=ATOL,
        )
        # Scheduled sampling: ε = 1 is teacher forcing, ε = 0 is closed loop.
        np.testing.assert_allclose(
            ops.convert_to_numpy(layer([x, y], training=True)), teacher, atol=ATOL
        )
        layer.teacher_probability.assign(0.0)
        np.testing.assert_allclose(
            ops.convert_to_numpy(layer([x, y], training=True)), closed, atol=ATOL
        )
        layer.teacher_probability.assign(0.5)
        mixed = ops.convert_to_numpy(layer([x, y], training=True))
        assert not np.allclose(mixed, teacher) and not np.allclose(mixed, closed)


def test_output_feedback_masking_and_contract():
    rng = np.random.default_rng(6)
    x = rng.standard_normal((2, 6, 3)).astype("float32")
    y = rng.standard_normal((2, 6, 2)).astype("float32")
    mask = np.ones((2, 6), bool)
    mask[1, 4:] = False
    for hidden in (False, True):
        layer = ks.layers.OutputFeedback(
            ks.cells.OutputFeedbackCell(4, 2, hidden_recurrence=hidden)
        )
        for inputs in ([x, y], x):
            out = ops.convert_to_numpy(layer(inputs, mask=mask))
            short = [x[1:2, :4], y[1:2, :4]] if isinstance(inputs, list) else x[1:2, :4]
            np.testing.assert_allclose(out[1, :4], ops.convert_to_numpy(layer(short))[0], atol=2e-6)
            np.testing.assert_array_equal(out[1, 4:], 0.0)
        run_layer_test(
            lambda h=hidden: ks.layers.OutputFeedback(
                ks.cells.OutputFeedbackCell(4, 2, hidden_recurrence=h),
                scheduled_sampling=True,
            ),
            [x, y],
            expected_output_shape=(2, 6, 2),
            run_fit=False,
        )
    with pytest.raises(ValueError, match="output_units=2"):
        ks.layers.OutputFeedback(ks.cells.OutputFeedbackCell(4, 2))([x, x])


@pytest.mark.parametrize("mode", ["input", "initial_state", "both"])
def test_conditioned_recurrent(mode):
    rng = np.random.default_rng(7)
    x = rng.standard_normal((2, 5, 3)).astype(DTYPE)
    c = rng.standard_normal((2, 4)).astype(DTYPE)
    cell = ks.cells.ElmanCell(3, dtype=DTYPE)
    layer = ks.layers.ConditionedRecurrent(cell, mode, return_sequences=True, dtype=DTYPE)
    layer.build([x.shape, c.shape])
    randomize(layer)
    out = ops.convert_to_numpy(layer([x, c]))
    w = weights_of(cell)
    kernel = w["kernel"]
    h = np.zeros((2, 3))
    if mode != "input":
        h = np.tanh(
            c @ ops.convert_to_numpy(layer.initial_state_kernel)
            + ops.convert_to_numpy(layer.initial_state_bias)
        )
    for t in range(5):
        a = x[:, t] @ kernel[:3] + w["bias"] + h @ w["recurrent_kernel"]
        if mode != "initial_state":
            a = a + c @ kernel[3:]  # R: the kernel's last rows
        h = np.tanh(a)
        np.testing.assert_allclose(out[:, t], h, atol=ATOL)
    run_layer_test(
        lambda: ks.layers.ConditionedRecurrent(ks.cells.LSTMCell(3), mode),
        [x.astype("float32"), c.astype("float32")],
        expected_output_shape=(2, 3),
        run_fit=False,
    )


@pytest.mark.parametrize(
    "factory,match",
    [
        (lambda: ks.cells.LeakyCell(3, alpha_mode="slow"), "LeakyCell: `alpha_mode`"),
        (lambda: ks.cells.LeakyCell(3, alpha_range=(0.5, 1.0)), "`alpha_range`"),
        (lambda: ks.cells.LeakyCell(3, alpha_mode="multiscale"), "`timescales`"),
        (lambda: ks.cells.DelayedCell(3, delay=1), "DelayedCell: `delay`"),
        (lambda: ks.cells.ClockworkCell(5, periods=[1, 2]), "ClockworkCell: `units`"),
        (lambda: ks.cells.ClockworkCell(4, periods=[1, 0]), "ClockworkCell: `periods`"),
        (lambda: ks.cells.EchoStateCell(4, leak_rate=1.5), "EchoStateCell: `leak_rate`"),
        (lambda: ks.cells.EchoStateCell(4, feedback_size=-1), "EchoStateCell: `feedback_size`"),
        (lambda: ks.cells.EchoStateCell(4, feedback_scaling=0), "`feedback_scaling`"),
        (lambda: ks.cells.EchoStateCell(4, distribution="cauchy"), "`distribution`"),
        (lambda: ks.cells.EchoStateGenerator(ks.cells.EchoStateCell(4)), "feedback_size >= 1"),
        (lambda: ks.cells.fit_readout(np.ones((3, 2)), np.ones((3, 1)), solver="qr"), "`solver`"),
        (
            lambda: ks.cells.teacher_forcing_inputs(np.ones((2, 3, 1)), noise=-1.0),
            "teacher_forcing_inputs: `noise`",
        ),
        (lambda: ks.cells.DeepTransitionCell(4, skip=True), "DeepTransitionCell: `skip"),
        (lambda: ks.cells.OutputFeedbackCell(4, 0), "`output_units`"),
        (lambda: ks.initializers.SpectralRadius(-1.0), "SpectralRadius: `radius`"),
        (lambda: ks.initializers.SpectralRadius(1.0, sparsity=1.0), "`sparsity`"),
        (lambda: ks.layers.ConditionedRecurrent(ks.cells.ElmanCell(2), "bias"), "`conditioning`"),
    ],
)
def test_bad_arguments_are_named(factory, match):
    with pytest.raises(ValueError, match=match):
        factory()
