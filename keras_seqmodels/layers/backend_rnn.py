"""Backend library kernels for ``Recurrent`` with an LSTM, reset-after GRU or Elman cell.

The first kernel ``Recurrent`` tries (``kernels.LibraryKernel``): where
``kind`` names one, ``compute`` runs a fused kernel of the backend's own
library; elsewhere the runner goes on with its own loops. The kernels:

- **JAX, LSTM only, when asked for:** ``jax.experimental.rnn.lstm`` (cuDNN),
  when ``jax.default_backend() == "gpu"``, the compute dtype is float32 and
  the kernels were made with ``cudnn_training`` (training calls) or
  ``cudnn_inference`` (inference calls); ``kernels.tune`` gives one layer
  these. By default JAX runs the runner's own fused loop in training and in
  inference, so that ``fit`` and ``evaluate`` (and a saved model on any
  device) compute one function with the same code: an LSTM trained through
  cuDNN on an H200 (81 units, 784 steps, chrono-initialised biases) reached
  98.4% training accuracy while the fused loop, with the same weights, gave
  10.5% on the validation images. cuDNN was 0.98-1.03x the hoisted fused
  loop in training on an H100 (BENCHMARKS.md), and 0.63-0.91x in inference.
  ``benchmarks/gpu_check_jax_lstm.py`` compares cuDNN with its plain-JAX
  reference and with the fused loop on a GPU.
  ``jax.experimental.rnn`` has no GRU, so ``GRUCell`` keeps the runner's
  loop on JAX. Within ``jax_reference()`` the same code runs on any device
  with ``jax.experimental.rnn.lstm_ref`` (the same computation in plain JAX,
  with the same packed weights, unpacked by ``unpack_lstm_weights``), so the
  packing, the lengths and the state handling are tested against the
  generic loop on CPU.
- **TensorFlow, LSTM and reset-after GRU:** cuDNN (``tf.raw_ops.CudnnRNNV3``
  with one length per sequence, through the weight packing of Keras's own
  ``keras.layers.LSTM`` / ``GRU``), when TensorFlow sees a GPU, in training
  and inference (as Keras's layers). Not run on a GPU by this project's
  tests so far: the GPU machines it had lacked TensorFlow. Within
  ``tf_reference()`` this path is taken on any device; the tests then
  replace ``CudnnRNNV3`` by a plain TensorFlow version of cuDNN's
  equations, so the packing, the lengths, the state handling and the
  fallback are tested against the generic loop on CPU.
- **PyTorch, LSTM, reset-after GRU and Elman:** ``torch.lstm`` /
  ``torch.gru`` / ``torch.rnn_tanh`` (the functions behind ``torch.nn.LSTM``
  / ``torch.nn.GRU`` / ``torch.nn.RNN``: native code on CPU, cuDNN on a CUDA
  device), with a right-padded mask through
  ``torch.nn.utils.rnn.pack_padded_sequence``.

Which cells qualify (``kind``): those whose declared fused form
(``keras_seqmodels.cells.forms.fused_form``) is ``"lstm"`` without
peepholes or ``"gru_after"`` (exactly ``LSTMCell`` and
``GRUCell(reset_after=True)``, not subclasses), and on PyTorch also
``"elman"`` (``ElmanCell``), with ``tanh`` and ``sigmoid``, float32 or float64 (float32
only on the GPU for JAX), no recurrent dropout while training (input
dropout is applied to the inputs before the kernel, with the cell's mask),
``unroll=False``, ``fused=True``.

Masks: the kernels take one length per sequence, so they give the generic
loop's result for right-padded masks (each row some True steps, then only
False), including rows with no True step (they keep their initial states
and output zeros). A mask with holes (a False step before a True one) goes
to the runner's own loop: on PyTorch, and on JAX or TensorFlow when the mask
is a concrete array, this is decided in Python; inside a traced function
(``jit``, ``tf.function``, ``model.fit``) the choice is made at run time, by
``lax.cond`` between the cuDNN call and a masked ``lax.scan`` of the same
step on JAX, by ``tf.cond`` between the cuDNN call and the runner's fused
loop on TensorFlow (both branches are compiled).

``go_backwards`` reverses each sequence within its length before the kernel
and puts the outputs back in the order the generic loop returns them (the
reversed order, padding first), so outputs, final states and their
gradients are those of the generic loop.
"""

import contextlib

import keras
from keras import ops

from keras_seqmodels.cells.forms import fused_form

# Switched only by the context managers below: ``jax_reference()``,
# ``tf_reference()`` (tests) and ``portable()`` (exports).
_JAX_REFERENCE = False
_TF_REFERENCE = False
_PORTABLE = False

_DTYPES = ("float32", "float64")


def kind(layer, training, cudnn_inference=False, cudnn_training=False):
    """The library kernel for this layer and call: ``"lstm"``, ``"gru"``,
    ``"rnn_tanh"`` (the Elman cell, PyTorch only) or ``None``.
    ``cudnn_training`` / ``cudnn_inference``: let the JAX LSTM take cuDNN in
    training / in inference (both off by default, see the module docstring;
    benchmarks and the GPU check time and compare that choice on a GPU)."""
    if not layer.fused or layer.unroll:
        return None
    backend = keras.backend.backend()
    if backend not in ("jax", "torch", "tensorflow"):
        return None
    cell = layer.cell
    name = {"lstm": "lstm", "gru_after": "gru", "elman": "rnn_tanh"}.get(fused_form(cell))
    if name is None or (name == "lstm" and getattr(cell, "use_peepholes", False)):
        return None
    if name == "rnn_tanh" and backend != "torch":
        return None
    if training and getattr(cell, "recurrent_dropout", 0) > 0:
        return None
    dtype = cell.compute_dtype
    if dtype not in _DTYPES:
        return None
    if backend == "tensorflow":
        if _PORTABLE or not (_TF_REFERENCE or _tf_sees_gpu()):
            return None
    if backend == "jax":
        if name != "lstm":
            return None
        if _JAX_REFERENCE:
            return name
        import jax

        if jax.default_backend() != "gpu" or dtype != "float32":
            return None
        if not (cudnn_training if training else cudnn_inference):
            # The runner's own fused loop, in training and in inference: one
            # function for fit and evaluate. With the input product hoisted
            # it measured 0.97-1.02x cuDNN in training and faster in
            # inference on an H100 (2,872k vs 1,817k tokens/s at batch 32,
            # 5,826k vs 5,325k at batch 128; BENCHMARKS.md).
            return None
    return name


@contextlib.contextmanager
def _switched(name):
    saved = globals()[name]
    globals()[name] = True
    try:
        yield
    finally:
        globals()[name] = saved


def portable():
    """Within this context TensorFlow traces no cuDNN kernel: the runner's own
    loop runs instead, so a SavedModel traced on a GPU also runs on CPU
    servers (``CudnnRNNV3`` has no CPU kernel). The package's exports trace
    their signatures in it."""
    return _switched("_PORTABLE")


def jax_reference():
    """Tests: within this context the JAX path runs on any device, with
    ``jax.experimental.rnn.lstm_ref`` in place of cuDNN's ``lstm``."""
    return _switched("_JAX_REFERENCE")


def tf_reference():
    """Tests: within this context the TensorFlow path is taken on any device
    (the test supplies ``tf.raw_ops.CudnnRNNV3`` where there is no GPU)."""
    return _switched("_TF_REFERENCE")


def blocks_xla(layer):
    """Whether ``layer`` may run a kernel that XLA cannot compile (cuDNN on
    TensorFlow: ``CudnnRNNV3`` has no XLA kernel). ``Recurrent.build`` then
    sets ``supports_jit = False``, as Keras's own LSTM and GRU do, so that
    ``model.compile(jit_compile="auto")`` leaves XLA off."""
    return keras.backend.backend() == "tensorflow" and kind(layer, False) is not None


def compute(name, cell, x, states, mask, go_backwards, zero_output):
    """One layer of the backend's kernel ``name`` (``kind``) over ``x``.

    Args:
        name: ``"lstm"``, ``"gru"`` or ``"rnn_tanh"``.
        cell: the cell whose weights it uses.
        x: ``(batch, time, features)`` in the compute dtype, at least one
            step, the cell's input dropout already applied.
        states: the list of initial states in the compute dtype.
        mask: ``None`` or a boolean ``(batch, time)`` mask, right-padded
            (on JAX a traced mask may have holes: ``lax.cond`` decides).
        go_backwards, zero_output: the runner's ``go_backwards`` and
            ``zero_output_for_mask``.

    Returns:
        ``(outputs, final_states, last_output)`` as the generic loop gives
        them, outputs batch-major.
    """
    backend = keras.backend.backend()
    if backend == "jax":
        return _jax_lstm(cell, x, states, mask, go_backwards, zero_output)
    if backend == "tensorflow":
        return _tf_cudnn(name, cell, x, states, mask, go_backwards, zero_output)
    return _torch_rnn(name, cell, x, states, mask, go_backwards, zero_output)


# Shared pieces (keras.ops) -------------------------------------------------


def concrete(mask):
    """Whether the mask's values are known here (not traced)."""
    backend = keras.backend.backend()
    if backend == "jax":
        import jax

        return not isinstance(mask, jax.core.Tracer)
    if backend == "tensorflow":
        import tensorflow as tf

        return not tf.is_symbolic_tensor(mask)
    return True


def right_padded(mask):
    """``(is_right_padded, lengths)`` of a boolean ``(batch, time)`` mask."""
    lengths = ops.cast(ops.sum(ops.cast(mask, "int32"), axis=1), "int32")
    steps = ops.arange(ops.shape(mask)[1], dtype="int32")
    expected = ops.expand_dims(steps, 0) < ops.expand_dims(lengths, 1)
    return ops.all(ops.equal(mask, expected)), lengths


def right_padded_concrete(mask):
    return bool(ops.convert_to_numpy(right_padded(mask)[0]))


def _row_gather(x, index):
    """``x[b, index[b, t]]`` for ``x`` ``(batch, time, width)``."""
    index = ops.broadcast_to(ops.expand_dims(index, -1), ops.shape(x))
    return ops.take_along_axis(x, index, axis=1)


def _reverse_within(x, lengths):
    """Each row's first ``lengths[b]`` steps reversed (the rest rotated)."""
    steps = ops.shape(x)[1]
    t = ops.expand_dims(ops.arange(steps, dtype="int32"), 0)
    index = ops.mod(ops.expand_dims(lengths, 1) - 1 - t, steps)
    return _row_gather(x, index)


def _prepare(x, mask, go_backwards):
    """Kernel inputs and clamped lengths (``None`` lengths: every row full)."""
    if mask is None:
        return (ops.flip(x, 1) if go_backwards else x), None
    _, lengths = right_padded(mask)
    if go_backwards:
        x = _reverse_within(x, lengths)
    return x, lengths


def _finish_outputs(y, finals, init, lengths, go_backwards, zero_output):
    """The generic loop's outputs, final states and last output.

    ``y`` is the kernel's output sequence (processing order, each row's
    valid steps first); rows of length 0 ran one step and get their initial
    states back.
    """
    if lengths is None:
        return y, finals, finals[0]
    steps = ops.shape(y)[1]
    t = ops.expand_dims(ops.arange(steps, dtype="int32"), 0)
    length = ops.expand_dims(lengths, 1)
    empty = length == 0
    finals = [ops.where(empty, s0, s) for s, s0 in zip(finals, init)]
    last = ops.where(empty, ops.zeros_like(finals[0]), finals[0])
    if go_backwards:
        # The generic loop meets the padding first: the output of real step k
        # sits at position steps - length + k, before it only zeros.
        shift = steps - length
        y = _row_gather(y, ops.mod(t - shift, steps))
        valid = t >= shift
        return ops.where(ops.expand_dims(valid, -1), y, ops.zeros_like(y)), finals, last
    valid = ops.expand_dims(t < length, -1)
    fill = ops.zeros_like(y) if zero_output else ops.expand_dims(last, 1)
    return ops.where(valid, y, fill), finals, last


# JAX ---------------------------------------------------------------------


def _jax_lstm(cell, x, states, mask, go_backwards, zero_output):
    import jax
    import jax.numpy as jnp

    dtype = x.dtype
    kernel = ops.cast(cell.kernel, dtype)
    recurrent = ops.cast(cell.recurrent_kernel, dtype)
    bias = cell.bias
    bias = jnp.zeros((kernel.shape[1],), dtype) if bias is None else ops.cast(bias, dtype)
    h0, c0 = states

    def library(x, h0, c0, kernel, recurrent, bias, mask):
        x_in, lengths = _prepare(x, mask, go_backwards)
        if lengths is None:
            seq_lengths = jnp.full((x.shape[0],), x.shape[1], jnp.int32)
        else:
            seq_lengths = jnp.maximum(lengths, 1).astype(jnp.int32)
        y, h, c = _jax_library_lstm(x_in, h0, c0, kernel, recurrent, bias, seq_lengths)
        return _finish_outputs(y, [h, c], [h0, c0], lengths, go_backwards, zero_output)

    args = (x, h0, c0, kernel, recurrent, bias)
    if mask is None or concrete(mask):
        return library(*args, mask)

    def with_holes(x, h0, c0, kernel, recurrent, bias, mask):
        return _jax_masked_scan(x, h0, c0, kernel, recurrent, bias, mask, go_backwards, zero_output)

    right, _ = right_padded(mask)
    return jax.lax.cond(right, library, with_holes, *args, mask)


def _jax_library_lstm(x, h0, c0, kernel, recurrent, bias, seq_lengths):
    """One forward LSTM layer of ``jax.experimental.rnn`` (batch first)."""
    import jax.numpy as jnp
    from jax.experimental import rnn

    features, units = kernel.shape[0], recurrent.shape[0]
    # cuDNN's packed layout: W_ih (4u, in), W_hh (4u, u), b_ih, b_hh, gates
    # [i, f, g, o] as Keras; the second bias is zero.
    weights = jnp.concatenate(
        [kernel.T.ravel(), recurrent.T.ravel(), bias.ravel(), jnp.zeros_like(bias)]
    )
    args = (features, units, 1, 0.0, False)
    if _JAX_REFERENCE:
        w_ih, w_hh, b_ih, b_hh = rnn.unpack_lstm_weights(weights, *args[:3], False)
        y, h, c = rnn.lstm_ref(x, h0[None], c0[None], w_ih, w_hh, b_ih, b_hh, seq_lengths, *args)
    else:
        y, h, c = rnn.lstm(x, h0[None], c0[None], weights, seq_lengths, *args)
    return y, h[0], c[0]


def _jax_masked_scan(x, h0, c0, kernel, recurrent, bias, mask, go_backwards, zero_output):
    """The generic loop's LSTM for any mask (the ``lax.cond`` branch for holes)."""
    import jax
    import jax.numpy as jnp

    xs = jnp.swapaxes(x, 0, 1)
    ms = jnp.swapaxes(mask, 0, 1)[..., None]
    if go_backwards:
        xs, ms = xs[::-1], ms[::-1]
    zs = xs @ kernel + bias
    units = h0.shape[-1]

    def step(carry, inputs):
        h, c, kept = carry
        z, m = inputs
        a = z + h @ recurrent
        i = jax.nn.sigmoid(a[:, :units])
        f = jax.nn.sigmoid(a[:, units : 2 * units])
        g = jnp.tanh(a[:, 2 * units : 3 * units])
        o = jax.nn.sigmoid(a[:, 3 * units :])
        c_new = f * c + i * g
        h_new = o * jnp.tanh(c_new)
        kept = jnp.where(m, h_new, kept)
        out = jnp.where(m, h_new, jnp.zeros_like(h_new)) if zero_output else kept
        return (jnp.where(m, h_new, h), jnp.where(m, c_new, c), kept), out

    (h, c, last), ys = jax.lax.scan(step, (h0, c0, jnp.zeros_like(h0)), (zs, ms))
    return jnp.swapaxes(ys, 0, 1), [h, c], last


# TensorFlow --------------------------------------------------------------


def _tf_sees_gpu():
    import tensorflow as tf

    return bool(tf.config.list_logical_devices("GPU"))


def _tf_cudnn(name, cell, x, states, mask, go_backwards, zero_output):
    """One cuDNN layer through Keras's own wrappers (batch first)."""
    import tensorflow as tf

    from keras_seqmodels._compat import tensorflow_cudnn_rnn

    keras_rnn = tensorflow_cudnn_rnn()
    dtype = x.dtype
    kernel = ops.cast(cell.kernel, dtype)
    recurrent = ops.cast(cell.recurrent_kernel, dtype)
    bias = cell.bias
    if bias is None:
        # cuDNN always adds biases: zeros give the cell without them.
        shape = (kernel.shape[1],) if name == "lstm" else (2, kernel.shape[1])
        bias = tf.zeros(shape, dtype)
    else:
        bias = ops.cast(bias, dtype)
    init = list(states)
    x_in, lengths = _prepare(x, mask, go_backwards)
    # Keras's wrappers take the lengths as a right-padded mask; cuDNN rejects
    # length 0, so empty rows run one step and get their states back after.
    kernel_mask = None
    if lengths is not None:
        kernel_mask = tf.sequence_mask(tf.maximum(lengths, 1), tf.shape(x)[1])
    if name == "lstm":
        args = (x_in, init[0], init[1], kernel, recurrent, bias, kernel_mask)
        _, y, finals = keras_rnn._cudnn_lstm(*args, False, False, True)
    else:
        args = (x_in, init[0], kernel, recurrent, bias, kernel_mask)
        _, y, finals = keras_rnn._cudnn_gru(*args, False, False, True)
    return _finish_outputs(y, list(finals), init, lengths, go_backwards, zero_output)


# PyTorch -----------------------------------------------------------------


def _torch_gates(name, w):
    """Keras gate blocks along the last axis to PyTorch's, rows per gate."""
    import torch

    if name == "gru":
        # Keras [z, r, h] -> PyTorch [r, z, n].
        z, r, n = torch.chunk(w, 3, dim=-1)
        w = torch.cat([r, z, n], dim=-1)
    return w.T.contiguous() if w.dim() == 2 else w.contiguous()


def _torch_rnn(name, cell, x, states, mask, go_backwards, zero_output):
    import torch
    from torch.nn.utils import rnn as torch_rnn

    # On Keras's device (a CUDA device where there is one), as the weights:
    # Keras's own ops move tensors there, torch's functions do not.
    x = ops.convert_to_tensor(x)
    states = [ops.convert_to_tensor(s) for s in states]
    dtype = x.dtype
    params = [
        _torch_gates(name, ops.cast(cell.kernel, dtype)),
        _torch_gates(name, ops.cast(cell.recurrent_kernel, dtype)),
    ]
    bias = cell.bias
    if bias is not None:
        bias = ops.cast(bias, dtype)
        if name == "gru":
            params += [_torch_gates(name, bias[0]), _torch_gates(name, bias[1])]
        else:
            params += [_torch_gates(name, bias), torch.zeros_like(bias)]
    has_bias = bias is not None
    init = list(states)
    hx = [s.unsqueeze(0).contiguous() for s in init]
    op = {"lstm": torch.lstm, "gru": torch.gru, "rnn_tanh": torch.rnn_tanh}[name]
    hx_arg = tuple(hx) if name == "lstm" else hx[0]
    x_in, lengths = _prepare(x, mask, go_backwards)
    # ``train``: cuDNN keeps what its backward pass needs only in training
    # mode (a backward after ``train=False`` fails on a CUDA device); with no
    # dropout the outputs are the same, so it follows whether autograd records.
    train = torch.is_grad_enabled()
    if lengths is None:
        result = op(x_in.contiguous(), hx_arg, params, has_bias, 1, 0.0, train, False, True)
        y, finals = result[0], [s[0] for s in result[1:]]
        return _finish_outputs(y, finals, init, None, go_backwards, zero_output)
    packed = torch_rnn.pack_padded_sequence(
        x_in,
        torch.clamp(lengths, min=1).to("cpu", torch.int64),
        batch_first=True,
        enforce_sorted=False,
    )
    order, unorder = packed.sorted_indices, packed.unsorted_indices
    if name == "lstm":
        hx_arg = tuple(s.index_select(1, order) for s in hx)
    else:
        hx_arg = hx[0].index_select(1, order)
    result = op(packed.data, packed.batch_sizes, hx_arg, params, has_bias, 1, 0.0, train, False)
    y, _ = torch_rnn.pad_packed_sequence(
        torch_rnn.PackedSequence(result[0], packed.batch_sizes, order, unorder),
        batch_first=True,
        total_length=x.shape[1],
    )
    finals = [s[0].index_select(0, unorder) for s in result[1:]]
    return _finish_outputs(y, finals, init, lengths, go_backwards, zero_output)
