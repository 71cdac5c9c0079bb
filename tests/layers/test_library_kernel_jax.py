"""The JAX LSTM's library path (``jax.experimental.rnn.lstm``: cuDNN on a GPU)
at the size of the pixel-MNIST LSTM: 81 units, chrono-initialised biases, long
sequences, a batch unlike the number of steps.

On CPU the tests make ``backend_rnn.kind`` see a GPU (``jax.default_backend``
patched) and replace the cuDNN primitive ``jax.experimental.rnn.lstm`` by
``jax.experimental.rnn.lstm_ref`` on the same flat weights (unpacked by
``unpack_lstm_weights``): everything of the package's own path runs (packing,
lengths, ``go_backwards``, last-step selection, gradients), only the kernel
is JAX's plain reference. On a GPU the same tests run the real cuDNN kernel
(in full float32: the suite's conftest asks for it), and
``test_cudnn_equals_fused_loop_on_gpu`` (skipped elsewhere) adds the
pixel-MNIST length and cuDNN's default math;
``benchmarks/gpu_check_jax_lstm.py`` prints such comparisons with more sizes
and both precisions.
"""

import keras
import numpy as np
import pytest
from keras import ops
from recurrent_grads import np_

import keras_seqmodels as ks
from keras_seqmodels.layers import kernels
from keras_seqmodels.zoo.models.pixel_mnist.network import chrono_biases

pytestmark = pytest.mark.skipif(keras.backend.backend() != "jax", reason="JAX library kernel")

UNITS, FEATURES, STEPS, BATCH = 81, 13, 100, 6


def on_gpu():
    import jax

    return jax.default_backend() == "gpu"


@pytest.fixture
def seen_as_gpu(monkeypatch):
    """On a CPU: ``kind`` sees a GPU and ``rnn.lstm`` runs ``lstm_ref`` on the
    flat weights it is given. On a GPU: the real cuDNN kernel. Returns the
    list of the calls' sizes."""
    import jax
    from jax.experimental import rnn

    calls = []
    cudnn = rnn.lstm

    def lstm(x, h0, c0, weights, seq_lengths, input_size, hidden_size, layers, dropout, bidi, *a):
        calls.append((x.shape, input_size, hidden_size, weights.shape[0]))
        args = (seq_lengths, input_size, hidden_size, layers, dropout, bidi)
        if gpu:
            return cudnn(x, h0, c0, weights, *args, *a)
        unpacked = rnn.unpack_lstm_weights(weights, input_size, hidden_size, layers, bidi)
        return rnn.lstm_ref(x, h0, c0, *unpacked, *args)

    gpu = on_gpu()
    if not gpu:
        monkeypatch.setattr(jax, "default_backend", lambda: "gpu")
    monkeypatch.setattr(rnn, "lstm", lstm)
    return calls


def chrono_lstm(features=FEATURES, units=UNITS, steps=STEPS, **layer_kw):
    """``ks.layers.LSTM`` with the pixel-MNIST chrono biases (time constants up
    to ``steps``: forget biases up to log(steps - 2), input biases their
    negatives) and seeded matrices."""
    layer = ks.layers.LSTM(units, **layer_kw)
    layer.build((None, steps, features))
    rng = np.random.default_rng(0)
    kernel, recurrent, bias = layer.get_weights()
    kernel = rng.uniform(-0.3, 0.3, kernel.shape).astype("float32")
    recurrent = rng.uniform(-0.15, 0.15, recurrent.shape).astype("float32")
    bias = chrono_biases("lstm", bias, units, rng, t_max=steps)
    # The other gates' biases nonzero too, so a bias in the wrong block shows.
    bias[2 * units :] = rng.uniform(-0.5, 0.5, 2 * units)
    layer.set_weights([kernel, recurrent, bias.astype("float32")])
    return layer


def jitted_value_and_grads(layer, x, states, mask, proj):
    """Outputs, and the gradients of ``sum(outputs * proj)`` with respect to
    the input, the initial states and the weights, in one compiled call."""
    import jax

    variables = layer.trainable_weights

    def loss(values, x, states):
        with keras.StatelessScope(state_mapping=list(zip(variables, values))):
            outs = layer(x, initial_state=list(states), mask=mask, training=True)
        return sum(ops.sum(o * p) for o, p in zip(outs, proj)), outs

    grad = jax.jit(jax.value_and_grad(loss, argnums=(0, 1, 2), has_aux=True))
    (_, outs), (dw, dx, dstates) = grad([v.value for v in variables], x, states)
    return [np_(o) for o in outs], [np_(g) for g in [dx, *dstates, *dw]]


def plan_kernel(layer, x, training):
    return type(kernels.plan_of(layer, x, training=training)).__name__


def test_fit_and_evaluate_run_one_kernel_where_cudnn_is_available(seen_as_gpu):
    """By default the JAX LSTM runs the same fused loop in training (``fit``)
    and in inference (``evaluate``, ``predict``, a saved model on a CPU):
    cuDNN in training only made a model trained to 98.4% accuracy score
    10.5% in inference on an H200. Compiled as ``fit`` and ``evaluate`` run
    it, the layer never calls cuDNN and both modes give the same outputs."""
    import jax

    layer = chrono_lstm(return_sequences=True)
    x = np.random.default_rng(1).standard_normal((BATCH, STEPS, FEATURES)).astype("float32")
    assert plan_kernel(layer, x, training=True) == "FusedPlan"
    assert plan_kernel(layer, x, training=False) == "FusedPlan"
    variables = layer.trainable_weights

    def run(values, x, training):
        with keras.StatelessScope(state_mapping=list(zip(variables, values))):
            return layer(x, training=training)

    run = jax.jit(run, static_argnums=2)
    values = [v.value for v in variables]
    trained, inferred = np_(run(values, x, True)), np_(run(values, x, False))
    assert seen_as_gpu == []  # cuDNN's primitive never ran
    np.testing.assert_allclose(trained, inferred, atol=1e-6, rtol=0)


def test_cudnn_kernels_are_opt_in(seen_as_gpu):
    layer = kernels.tune(chrono_lstm(), cudnn_training=True)
    x = np.zeros((BATCH, STEPS, FEATURES), "float32")
    assert plan_kernel(layer, x, training=True) == "LibraryPlan"
    assert plan_kernel(layer, x, training=False) == "FusedPlan"
    kernels.tune(layer, cudnn_inference=True)
    assert plan_kernel(layer, x, training=True) == "FusedPlan"
    assert plan_kernel(layer, x, training=False) == "LibraryPlan"


@pytest.mark.parametrize(
    "return_sequences, go_backwards, masked",
    [(True, False, False), (False, True, True)],
)
def test_cudnn_path_equals_fused_loop_at_pixel_mnist_size(
    seen_as_gpu, return_sequences, go_backwards, masked
):
    """The opt-in cuDNN path (``lstm_ref`` in cuDNN's place) against the fused
    loop: outputs, final states and the gradients of the input, the initial
    states and the three weights, at 81 units (not a multiple of 8), 13
    features (not the number of units, so a transposed matrix cannot fit),
    100 steps, batch 6, chrono biases; last-step output with a right-padded
    mask and ``go_backwards`` in the second case."""
    kw = dict(return_sequences=return_sequences, go_backwards=go_backwards, return_state=True)
    library = kernels.tune(chrono_lstm(**kw), cudnn_training=True)
    fused = chrono_lstm(**kw)
    rng = np.random.default_rng(2)
    x = rng.standard_normal((BATCH, STEPS, FEATURES)).astype("float32")
    states = [rng.standard_normal((BATCH, UNITS)).astype("float32") * 0.5 for _ in range(2)]
    mask = None
    if masked:
        lengths = np.array([STEPS, STEPS - 1, 57, 1, 0, STEPS])
        mask = np.arange(STEPS)[None, :] < lengths[:, None]
    shapes = library.compute_output_shape((BATCH, STEPS, FEATURES))
    proj = [rng.standard_normal(s).astype("float32") for s in shapes]
    outs_l, grads_l = jitted_value_and_grads(library, x, states, mask, proj)
    assert seen_as_gpu == [((BATCH, STEPS, FEATURES), FEATURES, UNITS, 4 * UNITS * 94 + 8 * UNITS)]
    outs_f, grads_f = jitted_value_and_grads(fused, x, states, mask, proj)
    assert len(seen_as_gpu) == 1  # the fused layer did not call it
    for a, b in zip(outs_l, outs_f):
        np.testing.assert_allclose(a, b, atol=2e-5, rtol=0)
    for a, b in zip(grads_l, grads_f):
        scale = np.abs(b).max()
        assert scale > 0
        np.testing.assert_allclose(a, b, atol=2e-5 * max(1.0, scale), rtol=0)


@pytest.mark.skipif("not on_gpu()", reason="cuDNN (jax.experimental.rnn.lstm) needs a GPU")
@pytest.mark.parametrize("precision", ["highest", "tensorfloat32"])
def test_cudnn_equals_fused_loop_on_gpu(precision):
    """The real cuDNN kernel against the fused loop at the pixel-MNIST LSTM's
    size (81 units and features, 784 steps, batch 128, chrono biases),
    forward; in full float32 and in cuDNN's default math (TF32 products
    allowed, as in training without a precision set; the test suite's
    conftest otherwise asks for "highest"). A misplaced weight block or bias
    moves outputs by more than 0.1; TF32 rounding by about 1e-3."""
    import jax

    steps, features = 784, UNITS
    library = kernels.tune(
        chrono_lstm(features, steps=steps, return_sequences=True), cudnn_training=True
    )
    fused = chrono_lstm(features, steps=steps, return_sequences=True)
    x = np.random.default_rng(3).standard_normal((128, steps, features)).astype("float32")
    assert plan_kernel(library, x, training=True) == "LibraryPlan"
    with jax.default_matmul_precision(precision):
        a = np_(library(x, training=True))
        b = np_(fused(x, training=True))
    atol = 1e-4 if precision == "highest" else 2e-2
    np.testing.assert_allclose(a, b, atol=atol, rtol=0)
    assert np.abs(ops.convert_to_numpy(a)).max() > 0.1  # not a comparison of near-zeros
