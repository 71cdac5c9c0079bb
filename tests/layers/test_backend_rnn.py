"""``Recurrent`` through the backend library's fused kernels (``backend_rnn``)
against its generic loop (``fused=False``).

JAX: ``jax.experimental.rnn`` runs cuDNN only on a GPU; within
``backend_rnn.jax_reference()`` the same code runs with ``lstm_ref`` on CPU.
TensorFlow: cuDNN (``tf.raw_ops.CudnnRNNV3``) runs only on a GPU; within
``backend_rnn.tf_reference()`` the tests replace it by
``cudnn_rnn_v3_reference``, cuDNN's equations in plain TensorFlow ops.
PyTorch: ``torch.lstm`` / ``torch.gru`` run on CPU; from another backend the
PyTorch tests run in a subprocess with ``KERAS_BACKEND=torch``.
"""

import importlib.util
import os
import subprocess
import sys

import keras
import numpy as np
import pytest
from keras import ops
from recurrent_grads import exact_tanh, np_, value_and_grads

import keras_seqmodels as ks
from keras_seqmodels.layers import backend_rnn, kernels

BACKEND = keras.backend.backend()
HAS_TORCH = importlib.util.find_spec("torch") is not None

jax_only = pytest.mark.skipif(BACKEND != "jax", reason="JAX backend kernel")
tf_only = pytest.mark.skipif(BACKEND != "tensorflow", reason="TensorFlow backend kernel")
torch_only = pytest.mark.skipif(BACKEND != "torch", reason="PyTorch backend kernel")


@pytest.fixture(autouse=True)
def full_float32_on_cuda():
    """Full float32 products in cuDNN's RNN kernels on a CUDA device.

    PyTorch lets cuDNN use TF32 products by default
    (``torch.backends.cudnn.allow_tf32``), which moves results by about
    1e-5; the equality tests compare full float32 on both sides, as the JAX
    cuDNN test does with ``jax.default_matmul_precision("highest")``.
    """
    if BACKEND != "torch":
        yield
        return
    import torch

    saved = torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32
    torch.backends.cudnn.allow_tf32 = torch.backends.cuda.matmul.allow_tf32 = False
    yield
    torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32 = saved


def torch_float32_atol():
    """Tolerance of the PyTorch kernel against the generic loop in float32.

    1e-5 on a CPU (measured differences there are below 1e-6). On a CUDA
    device, cuDNN sums the gate products in another order than the generic
    loop (blocked GEMMs over the four gates, the input and recurrent products
    fused) even with TF32 off: float32 rounding (eps 1.2e-7) of sums of about
    30 terms, carried through 7 recurrent steps, reached 2.6e-5 on an H100
    (JAX 0.11.2, torch 2.11, 2026-11-27: 6 of 24 cases over 1e-5). 5e-5
    leaves a margin of 2 and stays 20x below what a wrong gate order, bias
    or mask produces (above 1e-3 on these inputs)."""
    import torch

    return 5e-5 if torch.cuda.is_available() else 1e-5


def torch_float32_tolerance():
    """``assert_allclose``'s tolerances for the PyTorch kernel in float32."""
    return {"atol": torch_float32_atol(), "rtol": torch_float32_rtol()}


def torch_float32_rtol():
    """Relative tolerance added on a CUDA device (0 on a CPU). The gradients
    reach 8 in magnitude, where float32 rounding over 7 steps scales with the
    value: on an H200 (torch 2.11, 2026-11-27) an Elman input gradient of
    -8.2736 differed by 7.3e-5 (relative 9e-6; largest relative difference
    among the elements over 5e-5: 9.2e-5, on a value of 0.80). 1e-4 with the
    5e-5 above allows 1.3e-4 there; a wrong gate, bias or mask is off by more
    than 1e-3 absolute on values below 1."""
    import torch

    return 1e-4 if torch.cuda.is_available() else 0.0


# Right padding with a full row, a one-step row and a row of length 0.
LENGTHS = np.array([7, 4, 1, 0])
PADDED = np.arange(7)[None, :] < LENGTHS[:, None]
HOLES = PADDED.copy()
HOLES[0, 2] = False  # a masked step before unmasked ones


def make_pair(kind, dtype, seed=0, cell_kw=None, cudnn_training=False, **layer_kw):
    """A layer taking the library kernel and a generic one, same weights
    (``cudnn_training``: the first takes JAX's cuDNN LSTM in training)."""
    layers = []
    for fused in (True, False):
        kw = dict(cell_kw or {})
        if not fused and dtype == "float64":
            kw["activation"] = exact_tanh()
        if kind == "lstm":
            cell = ks.cells.LSTMCell(5, dtype=dtype, **kw)
        elif kind == "elman":
            cell = ks.cells.ElmanCell(5, dtype=dtype, **kw)
        else:
            cell = ks.cells.GRUCell(5, reset_after=True, dtype=dtype, **kw)
        layer = ks.layers.Recurrent(cell, fused=fused, dtype=dtype, **layer_kw)
        layer.build((None, 7, 3))
        layers.append(layer)
    if cudnn_training:
        kernels.tune(layers[0], cudnn_training=True)
    rng = np.random.default_rng(seed)
    values = [rng.uniform(-0.7, 0.7, w.shape) for w in layers[0].weights]
    for layer in layers:
        for var, value in zip(layer.weights, values):
            var.assign(value.astype(var.dtype))
    return layers


def assert_pair_equal(kind, dtype, atol, mask, rtol=0.0, **layer_kw):
    fused, generic = make_pair(kind, dtype, **layer_kw)
    rng = np.random.default_rng(3)
    x = rng.standard_normal((4, 7, 3)).astype(dtype)
    n_states = 2 if kind == "lstm" else 1
    states = [rng.standard_normal((4, 5)).astype(dtype) for _ in range(n_states)]
    shapes = fused.compute_output_shape((4, 7, 3))
    shapes = shapes if isinstance(shapes, list) else [shapes]
    proj = [rng.standard_normal(s).astype(dtype) for s in shapes]
    outs_f, grads_f = value_and_grads(fused, x, states, mask, proj)
    outs_g, grads_g = value_and_grads(generic, x, states, mask, proj)
    assert len(outs_f) == len(outs_g) and len(grads_f) == len(grads_g)
    for a, b in zip(outs_f, outs_g):
        np.testing.assert_allclose(a, b, atol=atol, rtol=rtol)
    for a, b in zip(grads_f, grads_g):
        assert np.abs(b).max() > 0  # not a comparison between zeros
        np.testing.assert_allclose(a, b, atol=atol, rtol=rtol)


def kind(cell, training=False, **layer_kw):
    """``backend_rnn.kind`` for a ``Recurrent`` of ``cell``."""
    return backend_rnn.kind(ks.layers.Recurrent(cell, **layer_kw), training)


def assert_holes_skip_library(kind, counter):
    """A concrete mask with holes runs the runner's own loop (``counter`` of
    the library call stays 0), with the generic loop's results."""
    fused, generic = make_pair(kind, "float64", return_sequences=True, return_state=True)
    x = np.random.default_rng(1).standard_normal((4, 7, 3))
    got = fused(x, mask=HOLES)
    assert counter.calls == 0
    for a, b in zip(got, generic(x, mask=HOLES)):
        np.testing.assert_allclose(np_(a), np_(b), atol=1e-9, rtol=0)


class Counter:
    """Counts the calls of a module function while passing them on."""

    def __init__(self, monkeypatch, name):
        self.calls = 0
        original = getattr(backend_rnn, name)

        def wrapped(*args, **kwargs):
            self.calls += 1
            return original(*args, **kwargs)

        monkeypatch.setattr(backend_rnn, name, wrapped)


CASES = [
    # (mask, go_backwards, zero_output_for_mask, return_sequences)
    (None, False, True, True),
    (None, True, True, True),
    ("padded", False, True, True),
    ("padded", False, False, True),
    ("padded", True, True, True),
    ("padded", True, False, False),
]
MASKS = {None: None, "padded": PADDED, "holes": HOLES}


def assert_case_equal(kind, dtype, atol, case, rtol=0.0, **kw):
    """``assert_pair_equal`` for one of ``CASES``, with ``return_state``."""
    mask, go_backwards, zero_output, return_sequences = case
    assert_pair_equal(
        kind,
        dtype,
        atol,
        MASKS[mask],
        rtol=rtol,
        return_state=True,
        return_sequences=return_sequences,
        go_backwards=go_backwards,
        zero_output_for_mask=zero_output,
        **kw,
    )


# JAX ----------------------------------------------------------------------


@pytest.fixture
def jax_reference(monkeypatch):
    with backend_rnn.jax_reference():
        yield Counter(monkeypatch, "_jax_library_lstm")


@jax_only
@pytest.mark.parametrize("case", CASES)
def test_jax_lstm_reference_equals_generic(jax_reference, case):
    assert_case_equal("lstm", "float64", 1e-9, case)
    assert jax_reference.calls > 0  # the library path ran


@jax_only
def test_jax_concrete_mask_with_holes_runs_generic_loop(jax_reference):
    assert_holes_skip_library("lstm", jax_reference)


@jax_only
@pytest.mark.parametrize("go_backwards", [False, True])
def test_jax_traced_mask_chooses_at_run_time(jax_reference, go_backwards):
    """Under jit the mask is not known: ``lax.cond`` picks the library call
    for right padding and the masked scan for holes; both give the generic
    loop's outputs, states and gradients."""
    import jax

    fused, generic = make_pair(
        "lstm",
        "float64",
        return_sequences=True,
        return_state=True,
        go_backwards=go_backwards,
        zero_output_for_mask=not go_backwards,
    )
    x = np.random.default_rng(2).standard_normal((4, 7, 3))

    def loss(layer):
        variables = layer.cell.trainable_weights

        def f(values, x, mask):
            with keras.StatelessScope(state_mapping=list(zip(variables, values))):
                outs = layer(x, mask=mask)
            return sum(ops.sum(o * o) for o in outs), outs

        return jax.jit(jax.value_and_grad(f, argnums=(0, 1), has_aux=True)), variables

    f_fused, v_fused = loss(fused)
    f_generic, v_generic = loss(generic)
    for mask in (PADDED, HOLES):
        (_, outs_f), (dw_f, dx_f) = f_fused([v.value for v in v_fused], x, mask)
        (_, outs_g), (dw_g, dx_g) = f_generic([v.value for v in v_generic], x, mask)
        for a, b in zip(list(outs_f) + list(dw_f) + [dx_f], list(outs_g) + list(dw_g) + [dx_g]):
            np.testing.assert_allclose(np_(a), np_(b), atol=1e-9, rtol=0)
    assert jax_reference.calls > 0


@jax_only
def test_jax_kind():
    import jax

    with backend_rnn.jax_reference():
        assert kind(ks.cells.LSTMCell(3)) == "lstm"
        # jax.experimental.rnn has an LSTM only.
        assert kind(ks.cells.GRUCell(3)) is None
        assert kind(ks.cells.LSTMCell(3, use_peepholes=True)) is None
        assert kind(ks.cells.LSTMCell(3, activation="relu")) is None
        assert kind(ks.cells.LSTMCell(3), fused=False) is None
        assert kind(ks.cells.LSTMCell(3), unroll=True) is None
        assert kind(ks.cells.LSTMCell(3, recurrent_dropout=0.5), training=True) is None
        assert kind(ks.cells.LSTMCell(3, recurrent_dropout=0.5), training=False) == "lstm"
    assert not backend_rnn._JAX_REFERENCE  # the context undoes its switch
    on_gpu = jax.default_backend() == "gpu"
    # cuDNN only when asked for: by default training and inference run the
    # same fused loop (tests/layers/test_library_kernel_jax.py).
    assert kind(ks.cells.LSTMCell(3), training=True) is None
    assert kind(ks.cells.LSTMCell(3), training=False) is None
    layer = ks.layers.Recurrent(ks.cells.LSTMCell(3))
    assert backend_rnn.kind(layer, True, cudnn_training=True) == ("lstm" if on_gpu else None)
    assert backend_rnn.kind(layer, False, cudnn_inference=True) == ("lstm" if on_gpu else None)


@jax_only
def test_jax_cudnn_equals_generic():
    import jax

    if jax.default_backend() != "gpu":
        pytest.skip("jax.experimental.rnn.lstm (cuDNN) needs a GPU; JAX runs on CPU here")
    # Full float32 products on both sides (cuDNN would otherwise use TF32).
    with jax.default_matmul_precision("highest"):
        for case in CASES:
            assert_case_equal("lstm", "float32", 1e-5, case, cudnn_training=True)


# TensorFlow ---------------------------------------------------------------


def cudnn_rnn_v3_reference(
    *, input, input_h, input_c, params, is_training, rnn_mode, sequence_lengths, time_major
):
    """``tf.raw_ops.CudnnRNNV3`` for one batch-major layer, in plain ops.

    cuDNN's canonical layout: per gate the input matrix (units x features)
    then per gate the recurrent matrix (units x units), row-major, then the
    input biases and the recurrent biases. Gates ``i, f, c, o`` (LSTM) and
    ``r, z, h`` (GRU, reset gate applied after the recurrent product) on a
    CUDA build; Keras packs MIOpen's orders on other builds, which this
    follows too. Steps at or past a row's length output zeros and leave its
    states unchanged.
    """
    import tensorflow as tf

    assert not time_major and is_training
    lstm = rnn_mode == "lstm"
    steps, features = input.shape[1], input.shape[2]
    units = input_h.shape[-1]
    n = 4 if lstm else 3
    parts = tf.split(params, [units * features] * n + [units * units] * n + [units] * (2 * n))
    w = [tf.reshape(p, (units, features)) for p in parts[:n]]
    r = [tf.reshape(p, (units, units)) for p in parts[n : 2 * n]]
    bw, br = parts[2 * n : 3 * n], parts[3 * n :]
    build = tf.sysconfig.get_build_info()
    if lstm:
        order = "ifoc" if build.get("is_rocm_build") else "ifco"
    else:
        order = "rzh" if build.get("is_cuda_build") else "zrh"

    def part(gate, x_t, h):
        k = order.index(gate)
        return (
            tf.matmul(x_t, w[k], transpose_b=True) + bw[k],
            tf.matmul(h, r[k], transpose_b=True) + br[k],
        )

    h = input_h[:, 0]
    c = input_c[:, 0] if lstm else None
    outputs = []
    for t in range(steps):
        x_t = input[:, t]
        if lstm:
            i, f, g, o = (sum(part(gate, x_t, h)) for gate in "ifco")
            c_new = tf.sigmoid(f) * c + tf.sigmoid(i) * tf.tanh(g)
            h_new = tf.sigmoid(o) * tf.tanh(c_new)
        else:
            reset = tf.sigmoid(sum(part("r", x_t, h)))
            update = tf.sigmoid(sum(part("z", x_t, h)))
            x_h, h_h = part("h", x_t, h)
            h_new = (1 - update) * tf.tanh(x_h + reset * h_h) + update * h
        valid = (t < sequence_lengths)[:, None]
        h = tf.where(valid, h_new, h)
        if lstm:
            c = tf.where(valid, c_new, c)
        outputs.append(tf.where(valid, h_new, tf.zeros_like(h_new)))
    c_out = c[:, None] if lstm else tf.zeros_like(h[:, None])
    return tf.stack(outputs, 1), h[:, None], c_out, None, None


@pytest.fixture
def tf_reference(monkeypatch):
    import tensorflow as tf

    monkeypatch.setattr(tf.raw_ops, "CudnnRNNV3", cudnn_rnn_v3_reference)
    with backend_rnn.tf_reference():
        yield Counter(monkeypatch, "_tf_cudnn")


@tf_only
@pytest.mark.parametrize("kind", ["lstm", "gru"])
@pytest.mark.parametrize("case", CASES)
def test_tf_reference_equals_generic(tf_reference, kind, case):
    assert_case_equal(kind, "float64", 1e-9, case)
    assert tf_reference.calls > 0  # the library path ran


@tf_only
@pytest.mark.parametrize("kind", ["lstm", "gru"])
def test_tf_without_bias(tf_reference, kind):
    assert_pair_equal(
        kind, "float64", 1e-9, PADDED, cell_kw={"use_bias": False}, return_sequences=True
    )
    assert tf_reference.calls > 0


@tf_only
def test_tf_export_traces_no_cudnn(tf_reference, tmp_path):
    """A SavedModel traced on a GPU must serve on CPU too (CudnnRNNV3 has no
    CPU kernel): exports trace the runner's own loop."""
    from keras_seqmodels.export.generic import export_model

    inputs = keras.Input((7, 3), name="x")
    model = keras.Model(inputs, ks.layers.Recurrent(ks.cells.GRUCell(5, reset_after=True))(inputs))
    x = np.random.default_rng(0).standard_normal((2, 7, 3)).astype("float32")
    expected = np_(model(x))
    assert tf_reference.calls == 1  # the cuDNN path outside an export
    export_model(model, str(tmp_path / "saved"))
    assert tf_reference.calls == 1
    import tensorflow as tf

    served = tf.saved_model.load(str(tmp_path / "saved")).signatures["serving_default"]
    np.testing.assert_allclose(np_(served(x=tf.constant(x))["output_0"]), expected, atol=1e-5)


@tf_only
def test_tf_cudnn_turns_off_auto_xla():
    """CudnnRNNV3 has no XLA kernel: ``jit_compile="auto"`` must resolve to
    False, as for Keras's own LSTM on a GPU."""
    with backend_rnn.tf_reference():
        inputs = keras.Input((7, 3))
        layer = ks.layers.Recurrent(ks.cells.LSTMCell(5))
        model = keras.Model(inputs, layer(inputs))
        model.compile("sgd", "mse", jit_compile="auto")
        assert layer.supports_jit is False and model.jit_compile is False
        # Without the cuDNN path the layer stays compilable.
        other = ks.layers.Recurrent(ks.cells.GRUCell(5, reset_after=False))
        other.build((None, 7, 3))
        assert other.supports_jit is True


@tf_only
def test_tf_eager_mask_with_holes_runs_generic_loop(tf_reference):
    assert_holes_skip_library("gru", tf_reference)


@tf_only
@pytest.mark.parametrize("kind", ["lstm", "gru"])
@pytest.mark.parametrize("go_backwards", [False, True])
def test_tf_graph_mask_chooses_at_run_time(tf_reference, kind, go_backwards):
    """In a ``tf.function`` the mask is not known: ``tf.cond`` picks cuDNN for
    right padding and the runner's fused loop for holes; both give the
    generic loop's outputs, states and gradients."""
    import tensorflow as tf

    fused, generic = make_pair(
        kind,
        "float64",
        return_sequences=True,
        return_state=True,
        go_backwards=go_backwards,
        zero_output_for_mask=not go_backwards,
    )
    x = tf.constant(np.random.default_rng(2).standard_normal((4, 7, 3)))

    def run(layer):
        @tf.function
        def f(x, mask):
            variables = [v.value for v in layer.cell.trainable_weights]
            with tf.GradientTape() as tape:
                tape.watch(x)
                outs = layer(x, mask=mask)
                loss = sum(tf.reduce_sum(o * o) for o in outs)
            return outs, tape.gradient(loss, [x] + variables)

        return f

    f_fused, f_generic = run(fused), run(generic)
    for mask in (PADDED, HOLES):
        outs_f, grads_f = f_fused(x, tf.constant(mask))
        outs_g, grads_g = f_generic(x, tf.constant(mask))
        for a, b in zip(list(outs_f) + grads_f, list(outs_g) + grads_g):
            np.testing.assert_allclose(np_(a), np_(b), atol=1e-9, rtol=0)
    assert tf_reference.calls > 0


@tf_only
def test_tf_kind():
    import tensorflow as tf

    with backend_rnn.tf_reference():
        assert kind(ks.cells.LSTMCell(3)) == "lstm"
        assert kind(ks.cells.GRUCell(3, reset_after=True), training=True) == "gru"
        assert kind(ks.cells.GRUCell(3, reset_after=False)) is None
        assert kind(ks.cells.LSTMCell(3, use_peepholes=True)) is None
        assert kind(ks.cells.ElmanCell(3)) is None
        assert kind(ks.cells.LSTMCell(3, recurrent_dropout=0.5), training=True) is None
        assert kind(ks.cells.LSTMCell(3), fused=False) is None
        with backend_rnn.portable():  # exports trace no cuDNN
            assert kind(ks.cells.LSTMCell(3)) is None
    assert not backend_rnn._TF_REFERENCE  # the context undoes its switch
    on_gpu = bool(tf.config.list_logical_devices("GPU"))
    assert kind(ks.cells.LSTMCell(3)) == ("lstm" if on_gpu else None)


@tf_only
def test_tf_cudnn_equals_generic():
    import tensorflow as tf

    if not tf.config.list_logical_devices("GPU"):
        pytest.skip("CudnnRNNV3 (cuDNN) needs a GPU; TensorFlow sees none here")
    for kind in ("lstm", "gru"):
        for case in CASES:
            assert_case_equal(kind, "float32", 1e-5, case)


# PyTorch ------------------------------------------------------------------


@torch_only
@pytest.mark.parametrize("kind", ["lstm", "gru", "elman"])
@pytest.mark.parametrize("case", CASES)
def test_torch_library_equals_generic(monkeypatch, kind, case):
    counter = Counter(monkeypatch, "_torch_rnn")
    assert_case_equal(kind, "float32", case=case, **torch_float32_tolerance())
    assert counter.calls > 0


@torch_only
@pytest.mark.parametrize("kind", ["lstm", "gru", "elman"])
def test_torch_without_bias_and_default_states(monkeypatch, kind):
    counter = Counter(monkeypatch, "_torch_rnn")
    fused, generic = make_pair(
        kind, "float32", cell_kw={"use_bias": False}, return_sequences=True, return_state=True
    )
    x = np.random.default_rng(4).standard_normal((4, 7, 3)).astype("float32")
    for a, b in zip(fused(x, mask=PADDED), generic(x, mask=PADDED)):
        np.testing.assert_allclose(np_(a), np_(b), **torch_float32_tolerance())
    assert counter.calls == 1


@torch_only
def test_torch_stateful_carries_states_between_calls(monkeypatch):
    counter = Counter(monkeypatch, "_torch_rnn")
    layers = []
    for fused in (True, False):
        inputs = keras.Input((7, 3), batch_size=4)
        layer = ks.layers.Recurrent(ks.cells.LSTMCell(5), stateful=True, fused=fused)
        keras.Model(inputs, layer(inputs))
        layers.append(layer)
    layers[1].set_weights(layers[0].get_weights())
    rng = np.random.default_rng(6)
    for _ in range(2):
        x = rng.standard_normal((4, 7, 3)).astype("float32")
        a, b = (np_(layer(x, mask=PADDED)) for layer in layers)
        np.testing.assert_allclose(a, b, **torch_float32_tolerance())
    for a, b in zip(layers[0].states, layers[1].states):
        assert np.abs(np_(b.value)).max() > 0
        np.testing.assert_allclose(np_(a.value), np_(b.value), **torch_float32_tolerance())
    assert counter.calls >= 2


@torch_only
def test_torch_mask_with_holes_runs_generic_loop(monkeypatch):
    counter = Counter(monkeypatch, "_torch_rnn")
    fused, generic = make_pair("gru", "float32", return_sequences=True)
    x = np.random.default_rng(5).standard_normal((4, 7, 3)).astype("float32")
    np.testing.assert_allclose(
        np_(fused(x, mask=HOLES)), np_(generic(x, mask=HOLES)), atol=1e-6, rtol=0
    )
    assert counter.calls == 0


@torch_only
def test_torch_kind():
    assert kind(ks.cells.LSTMCell(3)) == "lstm"
    assert kind(ks.cells.GRUCell(3)) == "gru"
    assert kind(ks.cells.GRUCell(3, reset_after=False)) is None
    assert kind(ks.cells.LSTMCell(3, use_peepholes=True)) is None
    assert kind(ks.cells.ElmanCell(3)) == "rnn_tanh"
    assert kind(ks.cells.ElmanCell(3, activation="relu")) is None
    assert kind(ks.cells.ElmanCell(3, recurrent_dropout=0.5), training=True) is None
    assert kind(ks.cells.GRUCell(3, recurrent_dropout=0.5), training=True) is None
    assert kind(ks.cells.GRUCell(3, dtype="float16")) is None


@pytest.mark.skipif(BACKEND == "torch", reason="runs in this process on PyTorch")
@pytest.mark.skipif(not HAS_TORCH, reason="PyTorch is not installed")
def test_torch_backend_in_subprocess():
    env = dict(os.environ, KERAS_BACKEND="torch")
    result = subprocess.run(
        [sys.executable, "-m", "pytest", __file__, "-q", "-p", "no:cacheprovider", "-k", "torch_"],
        env=env,
        capture_output=True,
        text=True,
        timeout=1200,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert " passed" in result.stdout and "failed" not in result.stdout


@pytest.mark.skipif(
    BACKEND in ("jax", "torch", "tensorflow"), reason="backend with a library kernel"
)
def test_other_backends_have_no_library_kernel():
    layer = ks.layers.Recurrent(ks.cells.LSTMCell(3))
    assert backend_rnn.kind(layer, False) is None
