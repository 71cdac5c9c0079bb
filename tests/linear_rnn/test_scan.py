"""The linear scans against a float64 NumPy loop, every kernel against the
generic one, and the numerics at 16,384 steps."""

import keras
import numpy as np
import pytest
from keras import ops

from keras_seqmodels.linear_rnn import scan
from keras_seqmodels.linear_rnn.scan import complex_linear_scan, linear_scan, use_kernels


def reference(a, b, h0=None, reverse=False):
    if reverse:
        return reference(a[:, ::-1], b[:, ::-1], h0)[:, ::-1]
    h = np.zeros(b[:, 0].shape, b.dtype) if h0 is None else h0
    out = []
    for t in range(b.shape[1]):
        h = a[:, t] * h + b[:, t]
        out.append(h)
    return np.stack(out, 1)


def _f32(x):
    return np.asarray(x, "float32")


def _native():
    """The kernel this backend and device choose (not the generic one)."""
    call = scan.ScanCall((ops.ones((1, 2, 1)),), (ops.ones((1, 2, 1)),))
    return scan.plan_of(call).kernel.name


def _kernel_names():
    names = [k.name for k in scan.KERNELS if k.name != "generic"]
    return [n for n in names if _plans(n)]


def _plans(name):
    kernel = next(k for k in scan.KERNELS if k.name == name)
    return kernel.plan(scan.ScanCall((ops.ones((1, 2, 1)),), (ops.ones((1, 2, 1)),))) is not None


@pytest.mark.parametrize("length", [1, 7, 33, 1000])
@pytest.mark.parametrize("kernel", ["native", "generic"])
def test_real_scan_matches_reference(length, kernel):
    rng = np.random.default_rng(length)
    a = rng.uniform(0, 1, (3, length, 2, 4))  # features of rank 2
    b = rng.normal(size=a.shape)
    h0 = rng.normal(size=(3, 2, 4))
    names = (_native(),) if kernel == "native" else ("generic",)
    with use_kernels(*names):
        h = linear_scan(_f32(a), _f32(b), _f32(h0))
        back = linear_scan(_f32(a), _f32(b), reverse=True)
    np.testing.assert_allclose(np.asarray(h), reference(a, b, h0), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(np.asarray(back), reference(a, b, reverse=True), rtol=1e-5,
                               atol=1e-5)  # fmt: skip


@pytest.mark.parametrize("kernel", ["native", "generic"])
def test_complex_scan_matches_reference(kernel):
    rng = np.random.default_rng(1)
    shape = (2, 37, 5)
    a = rng.uniform(0, 1, shape) * np.exp(1j * rng.uniform(-np.pi, np.pi, shape))
    b = rng.normal(size=shape) + 1j * rng.normal(size=shape)
    h0 = rng.normal(size=(2, 5)) + 1j * rng.normal(size=(2, 5))
    names = (_native(),) if kernel == "native" else ("generic",)
    with use_kernels(*names):
        h_re, h_im = complex_linear_scan(
            _f32(a.real), _f32(a.imag), _f32(b.real), _f32(b.imag), (_f32(h0.real), _f32(h0.imag))
        )
    h = np.asarray(h_re) + 1j * np.asarray(h_im)
    np.testing.assert_allclose(h, reference(a, b, h0), rtol=1e-5, atol=1e-5)


def test_every_kernel_of_this_backend_equals_the_generic_one():
    names = _kernel_names()
    assert names, "no backend kernel plans here"
    rng = np.random.default_rng(2)
    a, b = _f32(rng.uniform(0, 1, (2, 50, 3))), _f32(rng.normal(size=(2, 50, 3)))
    with use_kernels("generic"):
        expected = np.asarray(linear_scan(a, b))
    for name in names:
        with use_kernels(name):
            np.testing.assert_allclose(np.asarray(linear_scan(a, b)), expected, rtol=1e-6,
                                       atol=1e-6, err_msg=name)  # fmt: skip


def test_gradient_matches_the_reverse_scan():
    # dL/db(t) = g(t), g(t) = dL/dh(t) + a(t+1) g(t+1); dL/da(t) = g(t) h(t-1).
    rng = np.random.default_rng(3)
    a, b = rng.uniform(0, 1, (2, 9, 3)), rng.normal(size=(2, 9, 3))
    w = rng.normal(size=a.shape)
    va, vb = keras.Variable(_f32(a)), keras.Variable(_f32(b))
    from keras_seqmodels.testing.layer_test import compute_gradients

    ga, gb = compute_gradients(lambda: ops.sum(linear_scan(va, vb) * w), [va, vb])
    h = reference(a, b)
    shifted = np.concatenate([a[:, 1:], np.zeros_like(a[:, :1])], 1)
    g = reference(shifted, w, reverse=True)
    h_prev = np.concatenate([np.zeros_like(h[:, :1]), h[:, :-1]], 1)
    np.testing.assert_allclose(gb, g, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(ga, g * h_prev, rtol=1e-5, atol=1e-5)


def test_long_scan_with_gates_near_zero_and_one_stays_finite_and_exact():
    rng = np.random.default_rng(4)
    length = 16_384
    # Half the features forget almost nothing, half almost everything.
    a = np.concatenate([1 - rng.uniform(0, 1e-6, (2, length, 3)),
                        rng.uniform(0, 1e-6, (2, length, 3))], -1)  # fmt: skip
    a, b = _f32(a), _f32(rng.normal(size=a.shape) * 1e-3)
    h = np.asarray(linear_scan(a, b))
    assert np.all(np.isfinite(h))
    expected = reference(a.astype("float64"), b.astype("float64"))
    # With a near 1 the recurrence is a running sum of 16,384 terms, and
    # float32 rounding alone moves it by ~1e-5 relative: the kernel must be
    # as exact as the float32 sequential loop (within 2x), and within 1e-4.
    error = np.abs(h - expected).max() / np.abs(expected).max()
    loop_error = np.abs(reference(a, b) - expected).max() / np.abs(expected).max()
    assert error <= max(2 * loop_error, 1e-6), (error, loop_error)
    assert error < 1e-4


def test_use_kernels_names_unknown_kernels():
    with pytest.raises(ValueError, match="use_kernels: kernels must be among"):
        with use_kernels("cuda_magic"):
            pass


@pytest.mark.tf_only
def test_tensorflow_kernel_traces_with_unknown_batch_and_length():
    import tensorflow as tf

    spec = tf.TensorSpec((None, None, 4), tf.float32)
    rng = np.random.default_rng(5)
    a, b = _f32(rng.uniform(0, 1, (3, 21, 4))), _f32(rng.normal(size=(3, 21, 4)))
    for jit in (False, True):
        fn = tf.function(lambda a, b: linear_scan(a, b), input_signature=[spec, spec],
                         jit_compile=jit)  # fmt: skip
        np.testing.assert_allclose(fn(a, b).numpy(), reference(a, b), rtol=1e-5, atol=1e-5)


@pytest.mark.tf_only
def test_export_kernel_blocks_match_the_reference_at_any_length():
    # The export form (blocks of 16 steps, their ends in blocks of 16, a
    # loop over the rest) traced once at an unknown batch and length, then
    # run at lengths that end inside a block, on a block's edge and past the
    # second level's (256 steps); real and complex, with an initial state.
    import tensorflow as tf

    spec = tf.TensorSpec((None, None, 3), tf.float32)
    rng = np.random.default_rng(6)

    def scan_fn(n):
        def run(a, b, h0):
            with use_kernels("tf_export"):
                return scan.scan_tuples(a, b, h0)

        pair = (spec,) * n
        state = (tf.TensorSpec((None, 3), tf.float32),) * n
        return tf.function(run, input_signature=[pair, pair, state])

    real, complex_ = scan_fn(1), scan_fn(2)
    for length in (1, 7, 16, 17, 256, 300):
        shape = (2, length, 3)
        a = rng.uniform(0, 1, shape) * np.exp(1j * rng.uniform(-np.pi, np.pi, shape))
        b = rng.normal(size=a.shape) + 1j * rng.normal(size=a.shape)
        h0 = rng.normal(size=(2, 3)) + 1j * rng.normal(size=(2, 3))
        (h,) = real((_f32(a.real),), (_f32(b.real),), (_f32(h0.real),))
        expected = reference(a.real, b.real, h0.real)
        np.testing.assert_allclose(h.numpy(), expected, rtol=1e-5, atol=1e-5, err_msg=length)
        h_re, h_im = complex_(*[(_f32(x.real), _f32(x.imag)) for x in (a, b, h0)])
        h = h_re.numpy() + 1j * h_im.numpy()
        np.testing.assert_allclose(h, reference(a, b, h0), rtol=1e-5, atol=1e-5, err_msg=length)
    # A known length of one step (a streaming file's) is that step itself.
    with use_kernels("tf_export"):
        one = linear_scan(_f32(a[:, :1].real), _f32(b[:, :1].real), _f32(h0.real))
    np.testing.assert_allclose(np.asarray(one), reference(a[:, :1].real, b[:, :1].real, h0.real),
                               rtol=1e-6, atol=1e-6)  # fmt: skip


@pytest.mark.skipif(keras.backend.backend() != "jax", reason="a JAX kernel")
def test_jax_associative_kernel_equals_the_reference_on_this_device():
    # It plans only on an accelerator; its computation runs on any device.
    rng = np.random.default_rng(6)
    shape = (2, 45, 3)
    a = rng.uniform(0, 1, shape) * np.exp(1j * rng.uniform(-np.pi, np.pi, shape))
    b = rng.normal(size=shape) + 1j * rng.normal(size=shape)
    kernel = scan.JaxAssociativeScan()
    for pair in ((a.real, b.real), (a, b)):
        x, y = pair
        parts = (
            (lambda v: (_f32(v),))
            if x.dtype.kind == "f"
            else (lambda v: (_f32(v.real), _f32(v.imag)))
        )  # noqa: E731
        h = kernel.run(scan.Plan(kernel, scan.ScanCall(parts(x), parts(y))))
        h = np.asarray(h[0]) if len(h) == 1 else np.asarray(h[0]) + 1j * np.asarray(h[1])
        np.testing.assert_allclose(h, reference(x, y), rtol=1e-5, atol=1e-5)


def test_complex_gradients_of_the_native_kernel_equal_the_generic_ones():
    from keras_seqmodels.testing.layer_test import compute_gradients

    rng = np.random.default_rng(7)
    shape = (2, 11, 3)
    values = [rng.uniform(-0.6, 0.6, shape), rng.uniform(-0.6, 0.6, shape)]
    values += [rng.normal(size=shape), rng.normal(size=shape)]
    coeffs = [keras.Variable(_f32(v)) for v in values]
    init = [keras.Variable(_f32(rng.normal(size=(2, 3)))) for _ in range(2)]
    w_re, w_im = rng.normal(size=shape), rng.normal(size=shape)

    def loss():
        h_re, h_im = complex_linear_scan(*coeffs, initial=init)
        return ops.sum(h_re * w_re + h_im * w_im)

    grads = []
    for names in [(_native(),), ("generic",)]:
        with use_kernels(*names):
            grads.append(compute_gradients(loss, coeffs + init))
    for native, generic in zip(*grads):
        np.testing.assert_allclose(native, generic, rtol=1e-5, atol=1e-5)
