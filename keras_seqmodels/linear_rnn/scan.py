"""Linear scans ``h(t) = a(t) * h(t-1) + b(t)``, behind one kernel contract.

Every layer of ``keras_seqmodels.linear_rnn`` trains through these two
functions: ``linear_scan`` (real coefficients) and ``complex_linear_scan``
(complex coefficients as real/imaginary pairs, since ``keras.ops`` has little
complex support). Time is axis 1 of ``(batch, time, *features)`` tensors.

As ``keras_seqmodels.layers.kernels`` does for the recurrent loops, every
way of computing the scan is a kernel with two methods, tried in order:

- ``plan(call)``: a ``Plan`` if the kernel computes this ``ScanCall`` on
  this backend and device, else ``None``; it computes nothing.
- ``run(plan)``: the states ``h``, tuples of ``(batch, time, *features)``
  tensors (one for real coefficients, two for complex ones).

``KERNELS`` holds them in order:

1. ``JaxSequentialScan``: JAX on a CPU, ``jax.lax.scan`` over time-major
   tensors with ``unroll`` steps per loop iteration (measured in
   docs/linear_recurrences.md): a CPU has no parallel width for the log-depth
   scan to use, and the sequential loop does the least work.
2. ``JaxAssociativeScan``: JAX on an accelerator, ``jax.lax.associative_scan``
   (log-depth, all steps in parallel).
3. ``TFChunkedScan``: TensorFlow, ``tf.scan`` over chunks of steps (4 when
   XLA compiles it, 16 otherwise), the steps of a chunk unrolled: traces
   with an unknown batch and length, runs eagerly, in a ``tf.function``
   and under XLA.
4. ``GenericScan``: ``keras.ops.associative_scan``, any backend (PyTorch).
5. ``TFExportScan``: TensorFlow, blocks of unrolled steps around a short
   ``tf.while_loop`` with no tensor lists (work linear in the length), for
   LiteRT export only (``keras_seqmodels.export`` selects
   it while tracing; never chosen otherwise, since ``GenericScan`` always
   plans first).
6. ``TFUnrolledExportScan``: TensorFlow, the steps unrolled at a known
   length, for LiteRT's ``quantize="int8"`` only (selected likewise).

Gradients: automatic differentiation of these forms on JAX and in the
generic kernel; on TensorFlow the reverse scan (``TFChunkedScan``).

Numerics: the minGRU paper computes this recurrence in log space
(``log h(t) = logcumsumexp(log b - cumsum(log a)) + cumsum(log a)``, after
Heinsen). That form needs positive ``b`` and loses precision on long
sequences: ``cumsum(log a)`` reaches -1e5 within 16k steps of gates near 0,
and float32 keeps only 2-3 significant digits of the difference of two such
numbers. The kernels here compute the same recurrence in linear space. Every
layer of the package has ``|a(t)| <= 1``, so every product of coefficients
formed (by the sequential step ``a * h + b`` or by the associative combine
``(a1 a2, a2 b1 + b2)``) has modulus at most 1 and cannot overflow; small
products underflow to zero, which is their value to float precision. It is
the same recurrence, so the same function of the inputs; only the rounding
differs (tests check both against a float64 reference at 16,384 steps).
"""

import collections
import contextlib
import dataclasses

import keras
from keras import ops

ScanCall = collections.namedtuple("ScanCall", ["a", "b"])
ScanCall.__doc__ = """One scan: ``a`` and ``b`` tuples of ``(batch, time,
*features)`` tensors (one for real coefficients, ``(re, im)`` for complex
ones), the initial state already folded into ``b``'s first step."""


@dataclasses.dataclass
class Plan:
    """A kernel's decision for one scan: ``run()`` computes it."""

    kernel: object
    call: ScanCall

    def run(self):
        return self.kernel.run(self)


# The algebra of coefficients: a tuple of one real or two (re, im) tensors.


def _mul(x, y):
    if len(x) == 1:
        return (x[0] * y[0],)
    (xr, xi), (yr, yi) = x, y
    return (xr * yr - xi * yi, xr * yi + xi * yr)


def _conj(x):
    return x if len(x) == 1 else (x[0], -x[1])


def _add(x, y):
    return tuple(u + v for u, v in zip(x, y))


def _combine(earlier, later):
    """The composition of two steps ``(a1, b1)`` then ``(a2, b2)``."""
    (a1, b1), (a2, b2) = earlier, later
    return _mul(a2, a1), _add(_mul(a2, b1), b2)


def linear_step(a, h, b):
    """One step ``a * h + b`` on coefficient tuples (real, or ``(re, im)``)."""
    return _add(_mul(a, h), b)


def _device_kind():
    import jax

    return jax.default_backend()


# The kernels ------------------------------------------------------------------


class JaxSequentialScan:
    """``jax.lax.scan`` over time, ``unroll`` steps per iteration (JAX, CPU)."""

    name = "jax_sequential"

    def __init__(self, unroll=16):
        self.unroll = unroll

    def plan(self, call):
        if keras.backend.backend() != "jax" or _device_kind() != "cpu":
            return None
        return Plan(self, call)

    def run(self, plan):
        import jax
        import jax.numpy as jnp

        a, b = plan.call
        a_tm = tuple(jnp.swapaxes(x, 0, 1) for x in a)
        b_tm = tuple(jnp.swapaxes(x, 0, 1) for x in b)

        def step(h, ab):
            h = _add(_mul(ab[0], h), ab[1])
            return h, h

        h0 = tuple(jnp.zeros_like(x[0]) for x in b_tm)
        _, hs = jax.lax.scan(step, h0, (a_tm, b_tm), unroll=self.unroll)
        return tuple(jnp.swapaxes(h, 0, 1) for h in hs)


class JaxAssociativeScan:
    """``jax.lax.associative_scan`` (JAX on a GPU or TPU)."""

    name = "jax_associative"

    def plan(self, call):
        if keras.backend.backend() != "jax" or _device_kind() == "cpu":
            return None
        return Plan(self, call)

    def run(self, plan):
        import jax

        a, b = plan.call
        _, h = jax.lax.associative_scan(_combine, (a, b), axis=1)
        return h


class TFChunkedScan:
    """``tf.scan`` over chunks of ``chunk`` steps, each chunk unrolled
    (TensorFlow; unknown batch and length, eager, graph and XLA).

    The loop runs as a ``tf.function``, compiled with XLA when the length is
    known and ``jit`` (Keras's ``fit`` on a CPU does not compile the model;
    the loop's thousands of small ops then cost their dispatch each). Its
    gradient is the reverse scan, through the same function:
    ``g(t) = dL/dh(t) + conj(a(t+1)) g(t+1)``, ``dL/db(t) = g(t)``,
    ``dL/da(t) = g(t) conj(h(t-1))``."""

    name = "tf_chunked"

    def __init__(self, chunk=16, jit=True, jit_chunk=4):
        self.chunk = chunk
        self.jit = jit
        # Measured at 8 x 4,096 x 256 (docs/linear_recurrences.md): compiled
        # by XLA, short chunks are fastest (1-4 steps within 5%, 16 steps
        # 20% slower); as a plain graph, where every op costs its dispatch,
        # 16 steps.
        self.jit_chunk = jit_chunk
        self._graphs = {}

    def plan(self, call):
        if keras.backend.backend() != "tensorflow":
            return None
        return Plan(self, call)

    def _function(self, a, b):
        import tensorflow as tf

        jit = bool(self.jit and b[0].shape[1] is not None)
        key = (len(a), len(b[0].shape), b[0].dtype, jit)
        if key not in self._graphs:
            spec = tf.TensorSpec([None] * key[1], b[0].dtype)
            pair = (spec,) * key[0]
            chunk = self.jit_chunk if jit else self.chunk
            self._graphs[key] = tf.function(
                lambda a, b: self._chunked(a, b, chunk),
                input_signature=[pair, pair],
                jit_compile=jit,
                autograph=False,
            )
        return self._graphs[key]

    def run(self, plan):
        import tensorflow as tf

        a, b = plan.call
        n = len(a)
        scan_fn = self._function(a, b)

        @tf.custom_gradient
        def scan_with_gradient(*ab):
            # The loop's own gradient is never taken (XLA's loops cannot
            # hand their stacks back to TensorFlow): only this function's.
            ab = tuple(tf.stop_gradient(x) for x in ab)
            a, b = ab[:n], ab[n:]
            h = scan_fn(a, b)

            def grad(*dh):
                conj = _conj(a)
                a_next = tuple(tf.concat([x[:, 1:], tf.zeros_like(x[:, :1])], 1) for x in conj)
                flip = lambda xs: tuple(tf.reverse(x, [1]) for x in xs)  # noqa: E731
                dh = tuple(tf.stop_gradient(x) for x in dh)
                g = flip(scan_fn(flip(a_next), flip(dh)))
                h_prev = tuple(tf.concat([tf.zeros_like(x[:, :1]), x[:, :-1]], 1) for x in h)
                return _mul(g, _conj(h_prev)) + g

            return h, grad

        # Tensors, not variables: a variable read inside would need its own
        # gradient from the custom gradient.
        h = scan_with_gradient(*(tf.convert_to_tensor(x) for x in a + b))
        # The loop's function is traced for any shape: give the states the
        # shape of ``b`` back (a layer after this one reads its width).
        for x in h:
            x.set_shape(b[0].shape)
        return h

    def _chunked(self, a, b, c):
        import tensorflow as tf

        length = tf.shape(b[0])[1]
        pad = (-length) % c

        def chunked(x, fill):
            # (batch, time, *f) -> (chunks, c, batch, *f), padded at the end
            # with steps that keep the state (a = 1, b = 0).
            x = tf.concat([x, fill(tf.shape(x[:, :1]), pad)], axis=1)
            x = tf.reshape(x, tf.concat([tf.shape(x)[:1], [-1, c], tf.shape(x)[2:]], 0))
            rank = len(x.shape)
            return tf.transpose(x, [1, 2, 0] + list(range(3, rank)))

        def ones(shape, n):
            return tf.ones(tf.concat([shape[:1], [n], shape[2:]], 0), dtype=a[0].dtype)

        def zeros(shape, n):
            return tf.zeros(tf.concat([shape[:1], [n], shape[2:]], 0), dtype=b[0].dtype)

        b_c = tuple(chunked(x, zeros) for x in b)
        fill_a = (ones,) * len(a) if len(a) == 1 else (ones, zeros)
        a_c = tuple(chunked(x, f) for x, f in zip(a, fill_a))

        def chunk_step(carry, ab):
            h = carry[-1]
            outs = []
            for i in range(c):
                h = _add(_mul(tuple(x[i] for x in ab[0]), h), tuple(x[i] for x in ab[1]))
                outs.append(h)
            return tuple(tf.stack([o[k] for o in outs]) for k in range(len(h))), h

        h0 = tuple(tf.zeros_like(x[0, 0]) for x in b_c)
        first = tuple(tf.zeros_like(x[0]) for x in b_c)
        hs, _ = tf.scan(chunk_step, (a_c, b_c), initializer=(first, h0))

        def unchunk(x):
            rank = len(x.shape)
            x = tf.transpose(x, [2, 0, 1] + list(range(3, rank)))
            x = tf.reshape(x, tf.concat([tf.shape(x)[:1], [-1], tf.shape(x)[3:]], 0))
            return x[:, :length]

        return tuple(unchunk(h) for h in hs)


class GenericScan:
    """``keras.ops.associative_scan`` on any backend; always plans."""

    name = "generic"

    def plan(self, call):
        return Plan(self, call)

    def run(self, plan):
        a, b = plan.call
        n = len(a)

        def combine(x, y):
            left = (tuple(x[:n]), tuple(x[n:]))
            right = (tuple(y[:n]), tuple(y[n:]))
            pa, pb = _combine(left, right)
            return list(pa) + list(pb)

        out = ops.associative_scan(combine, list(a) + list(b), axis=1)
        return tuple(out[n:])


class TFExportScan:
    """The scan in blocks of steps around a short ``tf.while_loop``, for
    export (TensorFlow; LiteRT).

    Selected only while a file is written (``use_kernels("tf_export")`` in
    ``keras_seqmodels.export``), never for training. The time axis is cut
    into blocks of ``blocks[0]`` steps (the tail padded with steps that keep
    the state, ``a = 1``, ``b = 0``); within every block at once, the steps
    are unrolled: the states from a zero start ``L(i)`` and the products of
    the coefficients ``P(i) = a(i) ... a(1)``. The state entering each block
    is the scan of the blocks' last ``(P, L)``, computed the same way with
    ``blocks[1]``, and so on; the last level is a ``tf.while_loop`` of one
    step per iteration over ``length / prod(blocks)`` steps, its states
    growing by concatenation. Then ``h(i) = P(i) * h_in + L(i)``.

    Every op works on whole tensors, so the work grows linearly in the
    length (the ``WHILE`` loop runs 1/256 of the steps at ``(16, 16)``; a
    loop of one step per iteration copies its growing states at every step,
    which costs the square of the length). No tensor lists: LiteRT's
    converter writes it with builtin ops only (``STRIDED_SLICE``, ``MUL``,
    ``ADD``, ``PACK``, ``RESHAPE``, ``FILL``, ``CONCATENATION``, ``WHILE``,
    ``GATHER``), at an unknown batch and length. The same recurrence: only
    the rounding differs from the sequential loop (``P(i) * h_in + L(i)``
    for ``a(i) * (... (a(1) * h_in + b(1)) ...) + b(i)``), with every product
    of modulus at most 1. A file of known length 1 (a streaming step) is the
    step itself, no loop. No custom gradient: export traces inference only.
    """

    name = "tf_export"

    def __init__(self, blocks=(16, 16)):
        self.blocks = tuple(blocks)

    def plan(self, call):
        if keras.backend.backend() != "tensorflow":
            return None
        return Plan(self, call)

    def run(self, plan):
        a, b = plan.call
        if b[0].shape[1] == 1:
            return b  # h(0) = b(0): the initial state is folded into b
        return _blocked_scan(a, b, self.blocks)


def _pad_time(x, size, value):
    """``x`` with steps of ``value`` appended on axis 1 up to a multiple of ``size``."""
    import tensorflow as tf

    shape = tf.shape(x)
    pad = (-shape[1]) % size
    fill = tf.fill(tf.concat([shape[:1], [pad], shape[2:]], 0), tf.constant(value, x.dtype))
    return tf.concat([x, fill], 1)


def _blocked_scan(a, b, blocks):
    """``TFExportScan``'s levels: blocks of ``blocks[0]`` steps, their last
    states scanned by the next level; a loop of single steps at the last."""
    import tensorflow as tf

    if not blocks:
        return _loop_scan(a, b)
    size = blocks[0]
    length = tf.shape(b[0])[1]
    keep = (1.0,) if len(a) == 1 else (1.0, 0.0)  # a = 1 (complex: 1 + 0i), b = 0

    def split(x):  # (batch, n * size, *f) -> (batch, n, size, *f)
        shape = tf.shape(x)
        return tf.reshape(x, tf.concat([shape[:1], [-1, size], shape[2:]], 0))

    a = tuple(split(_pad_time(x, size, v)) for x, v in zip(a, keep))
    b = tuple(split(_pad_time(x, size, 0.0)) for x in b)
    local = [tuple(x[:, :, 0] for x in b)]  # L(i): the states from a zero start
    product = [tuple(x[:, :, 0] for x in a)]  # P(i) = a(i) ... a(1)
    for i in range(1, size):
        a_i = tuple(x[:, :, i] for x in a)
        local.append(linear_step(a_i, local[-1], tuple(x[:, :, i] for x in b)))
        product.append(_mul(a_i, product[-1]))
    ends = _blocked_scan(product[-1], local[-1], blocks[1:])  # (batch, n, *f)
    # The state entering each block: zero, then the previous block's end
    # (a concatenation then a slice, never an empty tensor: LiteRT sizes an
    # empty slice at a dynamic batch wrongly).
    entering = tuple(tf.concat([tf.zeros_like(x[:, :1]), x], 1)[:, : tf.shape(x)[1]] for x in ends)
    steps = [linear_step(p, entering, loc) for p, loc in zip(product, local)]
    h = tuple(tf.stack([s[k] for s in steps], 2) for k in range(len(b)))
    return tuple(
        tf.reshape(x, tf.concat([tf.shape(x)[:1], [-1], tf.shape(x)[3:]], 0))[:, :length] for x in h
    )


def _loop_scan(a, b):
    """A ``tf.while_loop`` of one step per iteration, the states growing by
    concatenation along time (static-shape state, no tensor lists)."""
    import tensorflow as tf

    length = tf.shape(b[0])[1]
    # The first step outside the loop: the states so far (time on axis 1)
    # start as one step, not as an empty tensor (LiteRT sizes an empty
    # slice at a dynamic batch wrongly). ``b`` holds the initial state in
    # its first step, so ``h(0) = b(0)``.
    h0 = tuple(x[:, 0] for x in b)
    acc0 = tuple(x[:, :1] for x in b)

    def body(t, h, acc):
        a_t = tuple(tf.gather(x, t, axis=1) for x in a)
        b_t = tuple(tf.gather(x, t, axis=1) for x in b)
        h = _add(_mul(a_t, h), b_t)
        acc = tuple(tf.concat([s, tf.expand_dims(x, 1)], 1) for s, x in zip(acc, h))
        return t + 1, h, acc

    invariants = (
        tf.TensorShape([]),
        tuple(x.shape for x in h0),
        tuple(tf.TensorShape([x.shape[0], None] + list(x.shape[2:])) for x in b),
    )
    _, _, acc = tf.while_loop(
        lambda t, h, acc: t < length,
        body,
        (tf.constant(1), h0, acc0),
        shape_invariants=invariants,
    )
    return acc


class TFUnrolledExportScan:
    """The steps one after another, unrolled at a known length, for LiteRT's
    ``quantize="int8"`` only (TensorFlow's int8 calibrator crashes the
    process on a ``WHILE`` loop): ``length`` copies of ``a * h + b``
    (``STRIDED_SLICE``, ``MUL``, ``ADD``), the states stacked along time
    (``PACK``). Plans only when the length is static; the exporter refuses
    an unknown length and bounds the copies first."""

    name = "tf_export_unrolled"

    def plan(self, call):
        if keras.backend.backend() != "tensorflow" or call.b[0].shape[1] is None:
            return None
        return Plan(self, call)

    def run(self, plan):
        a, b = plan.call
        h = tuple(x[:, 0] for x in b)  # h(0) = b(0): the initial state is folded into b
        states = [h]
        for t in range(1, b[0].shape[1]):
            h = _add(_mul(tuple(x[:, t] for x in a), h), tuple(x[:, t] for x in b))
            states.append(h)
        return tuple(ops.stack([s[k] for s in states], axis=1) for k in range(len(b)))


# ``TFExportScan`` and ``TFUnrolledExportScan`` come after ``GenericScan``,
# which always plans: they run only where named (``use_kernels("tf_export")``,
# ``use_kernels("tf_export_unrolled")``, while exporting).
KERNELS = (
    JaxSequentialScan(),
    JaxAssociativeScan(),
    TFChunkedScan(),
    GenericScan(),
    TFExportScan(),
    TFUnrolledExportScan(),
)
_active = [KERNELS]


@contextlib.contextmanager
def use_kernels(*names):
    """Run the scans inside the block with only the named kernels.

    For tests and benchmarks that check or time one kernel against another.

    Args:
        *names: kernel names (``"jax_sequential"``, ``"jax_associative"``,
            ``"tf_chunked"``, ``"generic"``, ``"tf_export"``, ``"tf_export_unrolled"``),
            tried in order; a kernel that
            does not apply to the backend or device is skipped, and
            ``"generic"`` always applies.

    Returns:
        A context manager.

    Example:

    >>> import numpy as np
    >>> with use_kernels("generic"):
    ...     h = linear_scan(np.ones((1, 3, 1), "float32"), np.ones((1, 3, 1), "float32"))
    >>> np.asarray(h)[0, :, 0]
    array([1., 2., 3.], dtype=float32)
    """
    chosen = tuple(k for name in names for k in KERNELS if k.name == name)
    if len(chosen) != len(names):
        known = [k.name for k in KERNELS]
        raise ValueError(f"use_kernels: kernels must be among {known}. Received: {names}")
    _active.append(chosen)
    try:
        yield
    finally:
        _active.pop()


def plan_of(call):
    """The plan of the first active kernel that takes ``call``."""
    for kernel in _active[-1]:
        plan = kernel.plan(call)
        if plan is not None:
            return plan
    raise ValueError("linear_scan: no kernel takes this scan (the last must be generic).")


def scan_tuples(a, b, initial=None, reverse=False):
    """``linear_scan`` on coefficient tuples (one real tensor, or ``(re, im)``)."""
    dtype = b[0].dtype
    a = tuple(ops.cast(x, dtype) for x in a)
    b = tuple(ops.convert_to_tensor(x) for x in b)
    if reverse:
        a = tuple(ops.flip(x, 1) for x in a)
        b = tuple(ops.flip(x, 1) for x in b)
    if initial is not None:
        # h(0) = a(0) h_init + b(0): the initial state enters as part of b.
        init = tuple(ops.cast(x, dtype) for x in initial)
        first = _add(_mul(tuple(x[:, 0] for x in a), init), tuple(x[:, 0] for x in b))
        b = tuple(ops.concatenate([ops.expand_dims(f, 1), x[:, 1:]], 1) for f, x in zip(first, b))
    h = plan_of(ScanCall(a, b)).run()
    if reverse:
        h = tuple(ops.flip(x, 1) for x in h)
    return h


def linear_scan(a, b, initial=None, reverse=False):
    """All states of the linear recurrence ``h(t) = a(t) * h(t-1) + b(t)``.

    Runs the fastest kernel of this module that applies to the backend and
    device (see the module docstring); the result is the same.

    Args:
        a: float tensor ``(batch, time, *features)``, the coefficients
            (``|a| <= 1`` keeps every product bounded).
        b: float tensor of the same shape, the inputs.
        initial: optional ``(batch, *features)`` state before the first step
            (default zeros).
        reverse: run from the last step to the first
            (``h(t) = a(t) * h(t+1) + b(t)``); the result keeps the input's
            time order.

    Returns:
        ``h``, a tensor of the shape of ``b``.

    Example:

    >>> import numpy as np
    >>> a = np.full((1, 4, 1), 0.5, "float32")
    >>> b = np.ones((1, 4, 1), "float32")
    >>> np.asarray(linear_scan(a, b))[0, :, 0]
    array([1.   , 1.5  , 1.75 , 1.875], dtype=float32)
    """
    init = None if initial is None else (initial,)
    return scan_tuples((a,), (b,), init, reverse)[0]


def complex_linear_scan(a_re, a_im, b_re, b_im, initial=None, reverse=False):
    """``linear_scan`` with complex coefficients, as real/imaginary pairs.

    ``h(t) = a(t) * h(t-1) + b(t)`` with ``a = a_re + i a_im`` and ``b = b_re
    + i b_im`` (complex products), ``|a| <= 1``.

    Args:
        a_re, a_im: float tensors ``(batch, time, *features)``.
        b_re, b_im: float tensors of the same shape.
        initial: optional pair ``(h_re, h_im)`` of ``(batch, *features)``.
        reverse: run from the last step to the first.

    Returns:
        ``(h_re, h_im)``.

    Example:

    >>> import numpy as np
    >>> a_re, a_im = np.zeros((1, 2, 1), "float32"), np.ones((1, 2, 1), "float32")
    >>> b_re, b_im = np.ones((1, 2, 1), "float32"), np.zeros((1, 2, 1), "float32")
    >>> h_re, h_im = complex_linear_scan(a_re, a_im, b_re, b_im)  # h(1) = i*1 + 1
    >>> np.asarray(h_re)[0, :, 0], np.asarray(h_im)[0, :, 0]
    (array([1., 1.], dtype=float32), array([0., 1.], dtype=float32))
    """
    init = None if initial is None else tuple(initial)
    return scan_tuples((a_re, a_im), (b_re, b_im), init, reverse)
