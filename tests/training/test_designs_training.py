"""Scheduled sampling, non-finite gradient handling, the gradient-flow
regularizer and the sequence-length helpers."""

import math

import keras
import numpy as np
import pytest
from keras import ops

import keras_seqmodels as ks
from keras_seqmodels.testing import compute_gradients
from keras_seqmodels.training import sequence_length as sl

F64 = keras.backend.backend() == "tensorflow"
DTYPE = "float64" if F64 else "float32"


# Scheduled sampling ---------------------------------------------------------


def test_schedules_follow_their_formulas():
    p = ks.training.teacher_forcing_probability
    for i in (0, 3, 50):
        assert p("linear", i, k=1.0, c=0.1) == pytest.approx(max(0.0, 1 - 0.1 * i))
        assert p("exponential", i, k=0.9) == pytest.approx(0.9**i)
        assert p("inverse_sigmoid", i, k=10.0) == pytest.approx(10.0 / (10.0 + math.exp(i / 10.0)))
    assert p("linear", 100, k=1.0, c=0.1, minimum=0.2) == 0.2
    assert p("inverse_sigmoid", 10**6, k=5.0) < 1e-300  # no overflow
    with pytest.raises(ValueError, match="`schedule`"):
        p("cosine", 1)
    with pytest.raises(ValueError, match="k < 1"):
        ks.training.ScheduledSampling("exponential", k=2.0)


def _feedback_model(scheduled=True):
    x_in, y_in = keras.Input((5, 2)), keras.Input((5, 1))
    layer = ks.layers.OutputFeedback(
        ks.cells.OutputFeedbackCell(4, 1), scheduled_sampling=scheduled, seed=0
    )
    model = keras.Model([x_in, y_in], layer([x_in, y_in]))
    model.compile("adam", "mse")
    return model, layer


@pytest.mark.slow
def test_scheduled_sampling_callback_sets_the_probability_in_fit():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((8, 5, 2)).astype("float32")
    y = rng.standard_normal((8, 5, 1)).astype("float32")
    model, layer = _feedback_model()
    cb = ks.training.ScheduledSampling("exponential", k=0.5)
    history = model.fit([x, y], y, epochs=3, batch_size=4, verbose=0, callbacks=[cb])
    assert history.history["teacher_probability"] == [1.0, 0.5, 0.25]
    assert float(ops.convert_to_numpy(layer.teacher_probability)) == 0.25
    assert np.all(np.isfinite(history.history["loss"]))
    cb = ks.training.ScheduledSampling("linear", k=1.0, c=0.25, per="batch")
    model.fit([x, y], y, epochs=2, batch_size=4, verbose=0, callbacks=[cb])
    # Four batches: ε = 1, 0.75, 0.5, 0.25 was set before the last one.
    assert float(ops.convert_to_numpy(layer.teacher_probability)) == 0.25
    plain, _ = _feedback_model(scheduled=False)
    with pytest.raises(ValueError, match="no OutputFeedback layer"):
        plain.fit([x, y], y, epochs=1, verbose=0, callbacks=[ks.training.ScheduledSampling()])


# Non-finite gradients -------------------------------------------------------


def _dense_model(seed=0):
    keras.utils.set_random_seed(seed)
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2)])
    return model


def _data():
    rng = np.random.default_rng(1)
    return (
        rng.standard_normal((8, 3)).astype("float32"),
        rng.standard_normal((8, 2)).astype("float32"),
    )


@pytest.mark.slow
def test_guard_is_transparent_for_finite_gradients():
    x, y = _data()
    results = []
    for wrap in (False, True):
        model = _dense_model()
        inner = keras.optimizers.SGD(0.1, clipnorm=0.05)
        model.compile(ks.training.NonFiniteGuard(inner) if wrap else inner, loss="mse")
        model.fit(x, y, epochs=2, batch_size=4, shuffle=False, verbose=0)
        results.append([ops.convert_to_numpy(v) for v in model.trainable_weights])
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("action", ["skip", "random_step"])
def test_guard_skips_or_takes_a_random_step_and_counts(action):
    x, y = _data()
    y_bad = y.copy()
    y_bad[0, 0] = np.nan
    model = _dense_model()
    opt = ks.training.NonFiniteGuard(
        keras.optimizers.SGD(0.1, clipnorm=1.0), action=action, step_norm=0.3, seed=2
    )
    model.compile(opt, loss="mse")
    model.fit(x, y, epochs=1, batch_size=8, verbose=0)  # builds, one finite step
    before = [ops.convert_to_numpy(v).copy() for v in model.trainable_weights]
    history = model.fit(
        x,
        y_bad,
        epochs=2,
        batch_size=8,
        verbose=0,
        callbacks=[ks.training.NonFiniteGradientLogger()],
    )
    after = [ops.convert_to_numpy(v) for v in model.trainable_weights]
    assert history.history["nonfinite_steps"] == [1, 2]
    assert int(ops.convert_to_numpy(opt.nonfinite_steps)) == 2
    assert all(np.all(np.isfinite(a)) for a in after)
    moved = math.sqrt(sum(np.sum((a - b) ** 2) for a, b in zip(after, before)))
    if action == "skip":
        assert moved == 0.0
    else:
        # Two random steps of norm 0.3: 0 < distance <= 0.6.
        assert 0.05 < moved <= 0.6 + 1e-6
    config = opt.get_config()
    clone = ks.training.NonFiniteGuard.from_config(config)
    assert clone.action == action and clone.step_norm == 0.3
    assert clone.inner_optimizer.clipnorm == 1.0


def test_single_random_step_has_norm_v():
    x, y = _data()
    y[0, 0] = np.inf
    model = _dense_model()
    opt = ks.training.NonFiniteGuard(keras.optimizers.SGD(0.1), step_norm=0.25)
    model.compile(opt, loss="mse")
    model.build((None, 3))
    before = [ops.convert_to_numpy(v).copy() for v in model.trainable_weights]
    model.fit(x, y, epochs=1, batch_size=8, verbose=0)
    after = [ops.convert_to_numpy(v) for v in model.trainable_weights]
    moved = math.sqrt(sum(np.sum((a - b) ** 2) for a, b in zip(after, before)))
    assert moved == pytest.approx(0.25, rel=1e-5)


# Gradient-flow regularizer --------------------------------------------------


def _numpy_elman_backward(x, kernel, w, bias, proj):
    """Forward h(t), a(t) and the total gradients v(t) = dL/dh(t) of
    L = Σ proj ⊙ h, by hand, in float64."""
    batch, time, _ = x.shape
    h = np.zeros((batch, w.shape[0]))
    hs, fps = [], []
    for t in range(time):
        h = np.tanh(x[:, t] @ kernel + bias + h @ w)
        hs.append(h)
        fps.append(1 - h**2)
    v = [None] * time
    v[time - 1] = proj[:, time - 1]
    for t in range(time - 2, -1, -1):
        v[t] = proj[:, t] + (v[t + 1] * fps[t + 1]) @ w.T
    return v, fps


def _omega(w, v, fps):
    total = 0.0
    for vt, fp in zip(v, fps):
        u = (vt * fp) @ w.T
        ratio = np.linalg.norm(u, axis=1) / np.linalg.norm(vt, axis=1)
        total += np.mean((ratio - 1) ** 2)
    return total


def test_gradient_flow_regularizer_adds_strength_times_grad_omega():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 5, 2)).astype(DTYPE)
    proj = rng.standard_normal((2, 5, 3)).astype(DTYPE)
    strength = 0.7

    def grads_for(cell):
        layer = ks.layers.Recurrent(cell, return_sequences=True, dtype=DTYPE)
        layer.build(x.shape)
        rng_w = np.random.default_rng(4)
        for var in layer.weights:
            var.assign(rng_w.uniform(-0.8, 0.8, var.shape).astype(DTYPE))
        variables = layer.trainable_weights
        return variables, compute_gradients(lambda: ops.sum(layer(x) * proj), variables)

    plain_vars, plain = grads_for(ks.cells.ElmanCell(3, dtype=DTYPE))
    zero_vars, zero = grads_for(
        ks.training.GradientFlowRegularizer(ks.cells.ElmanCell(3, dtype=DTYPE), 0.0)
    )
    reg_vars, reg = grads_for(
        ks.training.GradientFlowRegularizer(ks.cells.ElmanCell(3, dtype=DTYPE), strength)
    )
    tol = dict(atol=1e-10, rtol=1e-9) if F64 else dict(atol=2e-5, rtol=2e-5)
    for a, b in zip(plain, zero):  # the hand-written backward pass is exact
        np.testing.assert_allclose(a, b, **tol)
    names = [v.path.split("/")[-1] for v in reg_vars]
    wv = {n: np.asarray(ops.convert_to_numpy(v), np.float64) for n, v in zip(names, reg_vars)}
    v, fps = _numpy_elman_backward(
        x.astype(np.float64), wv["kernel"], wv["recurrent_kernel"], wv["bias"], proj
    )
    eps = 1e-6
    numeric = np.zeros((3, 3))
    for idx in np.ndindex(3, 3):
        wp, wm = wv["recurrent_kernel"].copy(), wv["recurrent_kernel"].copy()
        wp[idx] += eps
        wm[idx] -= eps
        numeric[idx] = (_omega(wp, v, fps) - _omega(wm, v, fps)) / (2 * eps)
    for name, g_reg, g_plain in zip(names, reg, plain):
        extra = strength * numeric if name == "recurrent_kernel" else 0.0
        np.testing.assert_allclose(
            g_reg, g_plain + extra, **(dict(atol=1e-7) if F64 else dict(atol=1e-4))
        )
    omega, _, _ = ks.training.gradient_flow_terms(v[1], fps[1], 0.0, wv["recurrent_kernel"])
    assert float(omega) == pytest.approx(_omega(wv["recurrent_kernel"], [v[1]], [fps[1]]))


def test_gradient_flow_regularizer_on_a_leaky_cell_keeps_alpha_gradients():
    rng = np.random.default_rng(5)
    x = rng.standard_normal((2, 4, 2)).astype("float32")
    results = []
    for wrap in (False, True):
        cell = ks.cells.LeakyCell(3, alpha_mode="learned", seed=1)
        if wrap:
            cell = ks.training.GradientFlowRegularizer(cell, strength=0.0)
        layer = ks.layers.Recurrent(cell, return_sequences=True)
        layer.build(x.shape)
        keras.utils.set_random_seed(0)
        for var in layer.weights:
            var.assign(np.random.default_rng(6).uniform(-0.5, 0.5, var.shape))
        results.append(
            compute_gradients(lambda layer=layer: ops.sum(layer(x) ** 2), layer.trainable_weights)
        )
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, atol=1e-5)


@pytest.mark.slow
def test_gradient_flow_regularizer_in_fit_with_norm_clipping():
    rng = np.random.default_rng(7)
    x = rng.standard_normal((8, 12, 2)).astype("float32")
    y = x[:, 0, :1]
    cell = ks.training.GradientFlowRegularizer(ks.cells.ElmanCell(6), strength=2.0)
    model = keras.Sequential(
        [keras.Input((12, 2)), ks.layers.Recurrent(cell), keras.layers.Dense(1)]
    )
    model.compile(keras.optimizers.SGD(0.05, clipnorm=1.0), "mse")
    history = model.fit(x, y, epochs=2, batch_size=4, verbose=0)
    assert np.all(np.isfinite(history.history["loss"]))
    clone = ks.training.GradientFlowRegularizer.from_config(cell.get_config())
    assert clone.strength == 2.0 and isinstance(clone.cell, ks.cells.ElmanCell)
    with pytest.raises(ValueError, match="GradientFlowRegularizer: supports"):
        ks.training.GradientFlowRegularizer(ks.cells.LSTMCell(3))


# Sequence length ------------------------------------------------------------


def test_end_symbol_helpers():
    rng = np.random.default_rng(8)
    ids = rng.integers(3, 9, (4, 6))
    lengths = np.array([0, 2, 5, 3])
    out = ops.convert_to_numpy(sl.append_end_symbol(ids, lengths, end_id=2, pad_id=0))
    for b, n in enumerate(lengths):
        np.testing.assert_array_equal(out[b, :n], ids[b, :n])
        assert out[b, n] == 2 and np.all(out[b, n + 1 :] == 0)
    np.testing.assert_array_equal(
        ops.convert_to_numpy(sl.lengths_from_end_symbol(out, 2)), lengths + 1
    )
    no_end = np.full((1, 4), 5)
    assert int(ops.convert_to_numpy(sl.lengths_from_end_symbol(no_end, 2))[0]) == 4


def test_halt_and_remaining_steps_helpers():
    lengths = np.array([1, 3, 4])
    targets = ops.convert_to_numpy(sl.halt_targets(lengths, 4))[..., 0]
    expected = np.zeros((3, 4))
    expected[np.arange(3), lengths - 1] = 1
    np.testing.assert_array_equal(targets, expected)
    probs = np.array([[0.1, 0.7, 0.9, 0.2], [0.1, 0.2, 0.3, 0.4], [0.6, 0, 0, 0]])
    np.testing.assert_array_equal(ops.convert_to_numpy(sl.lengths_from_halt(probs)), [2, 4, 1])
    left = ops.convert_to_numpy(sl.remaining_steps(lengths, 5))[..., 0]
    for b, n in enumerate(lengths):
        for t in range(5):
            assert left[b, t] == max(n - t, 0)
    x = np.zeros((3, 5, 2), "float32")
    extended = ops.convert_to_numpy(sl.append_remaining_steps(x, lengths, normalize=5))
    np.testing.assert_allclose(extended[..., 2], left / 5)
    mask = ops.convert_to_numpy(sl.sequence_mask(lengths, 5))
    np.testing.assert_array_equal(mask, np.arange(5)[None] < lengths[:, None])
