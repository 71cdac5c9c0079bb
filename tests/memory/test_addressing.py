"""The pure addressing, read and write functions against NumPy and by hand."""

import keras
import numpy as np
import reference_memory as ref
from keras import ops

from keras_seqmodels.memory import addressing
from keras_seqmodels.testing import compute_gradients

F64 = keras.backend.backend() == "tensorflow"
DTYPE = "float64" if F64 else "float32"
ATOL = 1e-10 if F64 else 2e-6


def np_(x):
    return ops.convert_to_numpy(x)


def t(x):
    return ops.convert_to_tensor(np.asarray(x, DTYPE))


def simplex(rng, shape):
    return ref.softmax(rng.standard_normal(shape) * 2)


def test_content_address_matches_numpy():
    rng = np.random.default_rng(0)
    memory = rng.standard_normal((2, 6, 4))
    keys = rng.standard_normal((2, 3, 4))
    beta = rng.uniform(0, 5, (2, 3))
    got = addressing.content_address(t(memory), t(keys), t(beta))
    np.testing.assert_allclose(np_(got), ref.content(memory, keys, beta), atol=ATOL)
    np.testing.assert_allclose(np_(got).sum(-1), 1.0, atol=ATOL)


def test_interpolate_shift_sharpen_match_numpy():
    rng = np.random.default_rng(1)
    wc, prev = simplex(rng, (2, 3, 7)), simplex(rng, (2, 3, 7))
    g = rng.uniform(0, 1, (2, 3))
    s = simplex(rng, (2, 3, 5))
    gamma = 1 + rng.uniform(0, 3, (2, 3))
    wg = addressing.interpolate(t(wc), t(prev), t(g))
    np.testing.assert_allclose(np_(wg), g[:, :, None] * wc + (1 - g[:, :, None]) * prev, atol=ATOL)
    shifted = addressing.shift(wg, t(s))
    np.testing.assert_allclose(np_(shifted), ref.shift(np_(wg), s), atol=ATOL)
    sharp = addressing.sharpen(shifted, t(gamma))
    np.testing.assert_allclose(np_(sharp), ref.sharpen(np_(shifted), gamma), atol=ATOL)
    for w in (wg, shifted, sharp):
        np.testing.assert_allclose(np_(w).sum(-1), 1.0, atol=ATOL)


def test_shift_by_hand():
    w = t([[[0.0, 1.0, 0.0, 0.0]]])
    forward = addressing.shift(w, t([[[0.0, 0.0, 1.0]]]))
    np.testing.assert_allclose(np_(forward), [[[0, 0, 1, 0]]], atol=ATOL)
    wrap = addressing.shift(t([[[0.0, 0.0, 0.0, 1.0]]]), t([[[0.0, 0.0, 1.0]]]))
    np.testing.assert_allclose(np_(wrap), [[[1, 0, 0, 0]]], atol=ATOL)
    blur = addressing.shift(w, t([[[0.25, 0.5, 0.25]]]))
    np.testing.assert_allclose(np_(blur), [[[0.25, 0.5, 0.25, 0]]], atol=ATOL)


def test_sharpen_by_hand():
    # (0.75^2, 0.25^2) / (0.625) = (0.9, 0.1).
    w = addressing.sharpen(t([[[0.75, 0.25]]]), t([[2.0]]), epsilon=0.0)
    np.testing.assert_allclose(np_(w), [[[0.9, 0.1]]], atol=1e-6)


def test_read_and_write_by_hand():
    memory = t([[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]])
    weights = t([[[0.5, 0.5, 0.0]]])
    np.testing.assert_allclose(np_(addressing.read(memory, weights)), [[[2.0, 3.0]]])
    erase = t([[[1.0, 0.0]]])
    add = t([[[10.0, 20.0]]])
    new = addressing.write(memory, weights, erase, add)
    # Slot 0: (1*(1-0.5), 2) + (5, 10); slot 2 untouched.
    expected = [[[5.5, 12.0], [6.5, 14.0], [5.0, 6.0]]]
    np.testing.assert_allclose(np_(new), expected, atol=1e-6)


def test_write_two_heads_erase_before_add():
    rng = np.random.default_rng(3)
    memory = rng.standard_normal((2, 5, 3))
    w = simplex(rng, (2, 2, 5))
    e = rng.uniform(0, 1, (2, 2, 3))
    a = rng.standard_normal((2, 2, 3))
    got = addressing.write(t(memory), t(w), t(e), t(a))
    np.testing.assert_allclose(np_(got), ref.write(memory, w, e, a), atol=ATOL)


def test_full_address_matches_numpy():
    rng = np.random.default_rng(4)
    memory = rng.standard_normal((2, 8, 4))
    prev = simplex(rng, (2, 1, 8))
    k = rng.standard_normal((2, 1, 4))
    beta, g = rng.uniform(0, 5, (2, 1)), rng.uniform(0, 1, (2, 1))
    s, gamma = simplex(rng, (2, 1, 3)), 1 + rng.uniform(0, 3, (2, 1))
    got = addressing.address(*(t(v) for v in (memory, prev, k, beta, g, s, gamma)))
    np.testing.assert_allclose(np_(got), ref.address(memory, prev, k, beta, g, s, gamma), atol=ATOL)


def test_zero_keys_and_zero_memory_stay_finite_with_finite_gradients():
    memory = keras.Variable(np.zeros((1, 4, 3), DTYPE))
    keys = keras.Variable(np.zeros((1, 2, 3), DTYPE))
    beta = t([[2.0, 50.0]])
    prev = t(np.eye(4)[None, :2])
    s = t([[[0.0, 1.0, 0.0]] * 2])
    gamma = t([[1.0, 20.0]])
    w = addressing.address(memory, prev, keys, beta, t([[1.0, 0.5]]), s, gamma)
    w = np_(w)
    assert np.all(np.isfinite(w))
    np.testing.assert_allclose(w.sum(-1), 1.0, atol=1e-6)
    # A zero key on zero memory has no preference: uniform content weights.
    np.testing.assert_allclose(w[0, 0], 0.25, atol=1e-6)

    def loss():
        w = addressing.address(memory, prev, keys, beta, t([[1.0, 0.5]]), s, gamma)
        r = addressing.read(memory, w)
        return ops.sum(w * t(np.arange(4.0))) + ops.sum(r)

    for grad in compute_gradients(loss, [memory, keys]):
        assert np.all(np.isfinite(grad))


def test_masked_softmax():
    scores = t([[1.0, 2.0, 1e6], [3.0, -1.0, 0.0]])
    mask = np.array([[True, True, False], [False, False, False]])
    got = np_(addressing.masked_softmax(scores, mask))
    np.testing.assert_allclose(got[0], ref.softmax(np.array([1.0, 2.0])).tolist() + [0], atol=ATOL)
    np.testing.assert_allclose(got[1], 0.0)


def test_addressing_gradients_match_finite_differences():
    rng = np.random.default_rng(5)
    memory = rng.standard_normal((1, 5, 3))
    prev = simplex(rng, (1, 1, 5))
    k0 = rng.standard_normal((1, 1, 3))
    beta, g = np.array([[1.5]]), np.array([[0.7]])
    s, gamma = simplex(rng, (1, 1, 3)), np.array([[1.8]])
    proj = rng.standard_normal((1, 1, 5))
    key = keras.Variable(k0.astype(DTYPE))

    def loss():
        w = addressing.address(t(memory), t(prev), key, t(beta), t(g), t(s), t(gamma))
        return ops.sum(w * t(proj))

    (grad,) = compute_gradients(loss, [key])
    eps = 1e-6 if F64 else 1e-3
    numeric = np.zeros_like(k0)
    for idx in np.ndindex(k0.shape):
        plus, minus = k0.copy(), k0.copy()
        plus[idx] += eps
        minus[idx] -= eps
        f = lambda kk: (ref.address(memory, prev, kk, beta, g, s, gamma) * proj).sum()  # noqa: E731
        numeric[idx] = (f(plus) - f(minus)) / (2 * eps)
    np.testing.assert_allclose(
        grad, numeric, atol=1e-7 if F64 else 1e-4, rtol=1e-5 if F64 else 1e-2
    )
