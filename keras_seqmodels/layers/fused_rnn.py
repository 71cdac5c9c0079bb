"""Fused time loops with a hand-written backward pass for the standard cells.

``Recurrent`` uses these automatically (``kernels.FusedKernel``) for the
cells whose declared form has a fused loop (``keras_seqmodels.cells.forms.fused_form``):
``ElmanCell``, ``LSTMCell`` (with or without peepholes), ``GRUCell`` (both
forms) and ``GatedCell`` with their standard non-linearities. The kernel calls
``recurrent_loop`` with the time-major input; the loop takes the input
projection ``x(t) W + b`` one step at a time, or (``hoist``, which the runner
picks at small batch sizes) computes ``Z = X W + b`` for all steps before
the loop, one large product per gate, so the loop carries only the recurrent
product. The loop reads each gate's ``(time, batch, units)`` sequence: an
XLA loop that reads column slices of one ``(time, batch, k units)`` sequence
ran its element-wise work several times slower on a CPU.

The backward pass is written out: a reverse loop carries only ``dh`` (and
``dc``) and emits, per step, the gradient of the gate pre-activations
``dA(t)``; after it, the recurrent weight gradient is one large product,
``dU = H(t-1)^T dA`` over all steps and rows, and ``dZ = dA`` flows back
through the projection, so automatic differentiation of ``Z = X W + b`` gives
``dW = X^T dZ``, ``db = sum dZ`` and ``dX = dZ W^T`` as single products too.
Automatic differentiation of a generic loop instead does four products per
step (``dh``, ``dU``, ``dW``, ``dX``) and stacks every intermediate.

Layout, as Keras's own ``backend/<name>/rnn.py``: the step maths is shared
(``keras.ops``): the forward step is the cells' own step functions
(``keras_seqmodels.cells.steps``, their ``*_gates`` forms, which also return
what the backward pass reads), the backward step and the weight gradients
are in ``fused_grads``; the loop and the custom gradient are one
small kernel per backend (``jax.custom_vjp`` + ``lax.scan`` on JAX,
``tf.custom_gradient`` + ``tf.scan`` on TensorFlow). Other backends have no
kernel and the runner uses its generic loop. On TensorFlow the forward and
the backward loop can each be compiled with XLA (``jit``): the loop then
runs as one compiled kernel, instead of one graph operation per gate and
step, which is what a graph-mode loop spends most of its time on at small
batch sizes.

On a CPU, the JAX loop of the GRU and the LSTM carries a small batch as two
blocks of rows with a recurrent product each (``row_groups``), which XLA
runs on two cores at once.

Masks: a step whose mask is False keeps the states (``h(t) = h(t-1)``); the
loop returns the states after that selection, and the runner derives the
outputs (zeros or the last output) from them and the mask.
"""

import functools

import keras
from keras import ops

from keras_seqmodels.cells import steps
from keras_seqmodels.cells.forms import FORMS, fused_form
from keras_seqmodels.layers.fused_grads import (
    _add_grads,
    _backward_step,
    _chunk_grads,
    _chunks,
    _steps,
)

_BACKENDS = ("tensorflow", "jax")


def fused_kind(cell):
    """The fused kernel for ``cell`` on this backend, or ``None`` if there is none.

    Args:
        cell: a cell instance.

    Returns:
        ``fused_form(cell)`` (``keras_seqmodels.cells.forms``) on
        TensorFlow and JAX, else ``None``.
    """
    if keras.backend.backend() not in _BACKENDS:
        return None
    return fused_form(cell)


def row_groups(kind, batch, units, groups):
    """How many blocks of rows the JAX loop runs side by side in each step.

    The rows of a batch are independent, so the loop can carry them as
    ``groups`` separate blocks, each with its own recurrent product, in one
    loop body. XLA's CPU runtime runs independent operations of a loop body
    concurrently, so the blocks' products can run on two cores at once.
    Measured on a 2-core CPU (``benchmarks/row_groups.py``, BENCHMARKS.md):
    at batch 32 x 100, 128 -> 256 units, 2 blocks made the GRU's forward +
    backward pass 7-15% faster and its inference 27% faster, the LSTM's
    inference 12-20% faster and its training 0-5%; at batch 128 x 512 units
    they lost 3-4% (the products are large enough for both cores), and the
    Elman cell gained nothing in training. So the GRU kinds and the LSTM use
    2 blocks on a CPU for an even batch of at least 16 rows with batch x
    units at most 16384. With another job busy on the cores, 2 blocks were
    slower than 1. Each row's arithmetic is unchanged, so the results are
    those of one block.

    Args:
        kind: a key of ``FORMS`` (``keras_seqmodels.cells.forms``).
        batch: the static batch size, or ``None``.
        units: the cell's state width.
        groups: the number of blocks wanted.

    Returns:
        ``groups`` where it applies, else 1.
    """
    if groups <= 1 or kind not in ("gru", "gru_after", "lstm") or batch is None:
        return 1
    if batch < 8 * groups or batch % groups or batch * units > 16384:
        return 1
    return groups if on_jax_cpu() else 1


def on_jax_cpu():
    """Whether the backend is JAX and it computes on a CPU."""
    return _jax_platform() == "cpu"


def on_jax_gpu():
    """Whether the backend is JAX and it computes on a GPU."""
    return _jax_platform() == "gpu"


def _jax_platform():
    if keras.backend.backend() != "jax":
        return None
    import jax

    return jax.default_backend()


def cell_params(kind, cell, dtype):
    """The cell's weights the loop needs, cast to the compute dtype.

    Returns:
        A dict with the input kernel ``W``, the input bias ``b`` (if any), the
        recurrent kernel ``U`` and, where the cell has them, the peepholes
        ``P`` (``(3, units)``) and the recurrent bias ``rb``.
    """
    bias = getattr(cell, "bias", None)
    params = {"W": ops.cast(cell.kernel, dtype), "U": ops.cast(cell.recurrent_kernel, dtype)}
    if bias is not None:
        bias = ops.cast(bias, dtype)
        if kind == "gru_after":
            # Keras's layout: bias (2, 3 units) = [input bias; recurrent bias].
            bias, params["rb"] = bias[0], bias[1]
        params["b"] = bias
    if kind == "lstm" and getattr(cell, "peephole_kernel", None) is not None:
        params["P"] = ops.cast(cell.peephole_kernel, dtype)
    return params


# Step maths, shared by the backends ---------------------------------------


def _forward_step(kind, z, states, params, tanh, sigmoid):
    """One step of the cell's own equations (``cells/steps.py``, gate blocks
    cut as slices): the new states (unmasked) and the gate values the
    backward pass keeps."""
    h, cut = states[0], steps.slice_blocks
    if kind == "elman":
        return (steps.elman_step(z, h, params["U"], tanh),), ()
    if kind == "lstm":
        c, p = states[1], params.get("P")
        return steps.lstm_step_gates(z, h, c, params["U"], tanh, sigmoid, p, blocks=cut)
    if kind == "gated":
        h_new, saved = steps.gated_step_gates(z, h, params["U"], tanh, sigmoid, blocks=cut)
    elif kind == "gru":
        u_ur, u_h = params["U_ur"], params["U_h"]
        h_new, saved = steps.gru_step_gates(z, h, u_ur, u_h, tanh, sigmoid, blocks=cut)
    else:  # gru_after (Keras's and cuDNN's GRU): the reset gate scales U_h h + rb_h.
        rb = params.get("rb")
        h_new, saved = steps.gru_reset_after_step_gates(
            z, h, params["U"], rb, tanh, sigmoid, blocks=cut
        )
    return (h_new,), saved


def _prepare(kind, params):
    """Slices and transposes of the weights, taken once outside the loop."""
    params = dict(params)
    u_ = params["U"]
    n = u_.shape[0]
    if kind == "gru":
        params["U_ur"], params["U_h"] = u_[:, : 2 * n], u_[:, 2 * n :]
        params["U_ur_T"] = ops.transpose(params["U_ur"])
        params["U_h_T"] = ops.transpose(params["U_h"])
    else:
        params["U_T"] = ops.transpose(u_)
    return params


def _project(x_t, params):
    """``z(t)``: the input itself, or ``x(t) W + b`` when the loop projects."""
    if "W" not in params:
        return x_t
    z = ops.matmul(x_t, params["W"])
    return z + params["b"] if "b" in params else z


def _project_gates(kind, x, params):
    """``x W + b`` of all steps as one product per gate, before a loop.

    Returns the ``(time, batch, units)`` parts in the gate order of ``W`` and
    the parameters without ``W`` and ``b``; the loop concatenates one step's
    parts, which XLA reads back from the parts themselves (reading column
    slices of one ``(time, batch, k units)`` sequence ran a CPU loop's
    element-wise work several times slower).
    """
    params = dict(params)
    w, b = params.pop("W"), params.pop("b", None)
    n = params["U"].shape[0]
    flat = ops.reshape(x, (-1, x.shape[-1]))
    parts = []
    for g in range(FORMS[kind]):
        part = ops.matmul(flat, w[:, g * n : (g + 1) * n])
        if b is not None:
            part = part + b[g * n : (g + 1) * n]
        parts.append(ops.reshape(part, ops.shape(x)[:2] + (n,)))
    return tuple(parts), params


def _select(m, new, old):
    return tuple(ops.where(m, a, b) for a, b in zip(new, old))


# Backend kernels ------------------------------------------------------------


def recurrent_loop(
    kind,
    x,
    states,
    params,
    mask=None,
    unroll=1,
    hoist=False,
    differentiable=True,
    jit=False,
    groups=1,
    chunks=1,
):
    """Run the recurrence of ``kind`` over a time-major input.

    Args:
        kind: a key of ``FORMS`` (``keras_seqmodels.cells.forms``).
        x: ``(time, batch, features)`` input.
        states: tuple of initial states, ``(h0,)`` or ``(h0, c0)`` for the LSTM.
        params: dict from ``cell_params``.
        mask: optional boolean ``(time, batch, 1)``.
        unroll: steps per loop iteration (JAX).
        hoist: compute ``x W + b`` for all steps before the loop (one
            product per gate) instead of one step at a time inside it (the
            gradients are single products over all steps either way).
        differentiable: False runs a forward loop that keeps no gate values
            (TensorFlow). Without ``jit`` its gradients come from automatic
            differentiation of that loop; with ``jit`` the custom gradient
            runs the forward loop again to get the gates.
        jit: TensorFlow: compile the forward and the backward loop each with
            XLA (``tf.function(jit_compile=True)``); the loop then runs as
            one compiled kernel instead of one graph op dispatch per step
            and operation. JAX always compiles.
        groups: JAX: carry the batch as this many blocks of rows, each with
            its own recurrent product, in the same loop (``row_groups``);
            the batch must be a multiple of it.
        chunks: JAX: run the reverse loop over this many chunks of steps,
            the weight gradients of each chunk as soon as its loop ends
            (XLA's CPU runtime can run them beside the next chunk's loop).

    Returns:
        ``(h_seq, final_states)``: the hidden state after every step,
        ``(time, batch, units)``, and the tuple of final states.
    """
    backend = keras.backend.backend()
    params = dict(params)
    if backend == "tensorflow":
        return _tf_loop(
            kind, x, tuple(states), params, mask, differentiable, jit, hoist, chunks
        )
    if backend == "jax":
        kernel = _jax_kernel(kind, mask is not None, unroll, groups, hoist, chunks)
        return kernel(x, tuple(states), params, mask)
    raise NotImplementedError(f"recurrent_loop: no fused kernel for the {backend} backend")


# JAX: lax.scan + jax.custom_vjp.


@functools.cache
def _jax_kernel(kind, has_mask, unroll, groups=1, hoist=False, chunks=1):
    """The loop of ``kind`` on JAX; ``groups`` > 1 runs that many blocks of
    rows side by side in each step (see ``row_groups``); ``hoist`` projects
    the input before the loop, one product per gate, as on TensorFlow;
    ``chunks`` > 1 runs the reverse loop as that many loops over consecutive
    chunks of steps, each chunk's weight gradients computed as soon as its
    loop ends, so that XLA can overlap them with the next loop."""
    import jax
    from jax import lax

    jnp = jax.numpy
    two_states = kind == "lstm"
    # jnp's own: keras.ops.tanh returns float32 for float64 input on JAX.
    nonlinear = (jnp.tanh, jax.nn.sigmoid)

    def split(a):
        # Row blocks of a time-major (time, batch, ...) array.
        return tuple(jnp.split(a, groups, axis=1)) if groups > 1 else (a,)

    def join(parts):
        return jnp.concatenate(parts, axis=1) if groups > 1 else parts[0]

    def split_states(states):
        # A tuple over row blocks of the (batch, units) states.
        if groups == 1:
            return (tuple(states),)
        parts = [jnp.split(s, groups, axis=0) for s in states]
        return tuple(tuple(p[g] for p in parts) for g in range(groups))

    def join_states(blocks):
        if groups == 1:
            return tuple(blocks[0])
        return tuple(jnp.concatenate(parts, axis=0) for parts in zip(*blocks))

    def forward(z, states, params, mask, save):
        if hoist and "W" in params:
            z, params = _project_gates(kind, z, params)
        prepared = _prepare(kind, params)

        def step(carry, xs):
            new_carry, ys = [], []
            for g in range(groups):
                z_t, m_t = (xs[0][g], xs[1][g]) if has_mask else (xs[g], None)
                if isinstance(z_t, tuple):
                    z_t = jnp.concatenate(z_t, axis=-1)
                z_t = _project(z_t, params)
                new, saved = _forward_step(kind, z_t, carry[g], prepared, *nonlinear)
                if has_mask:
                    new = _select(m_t, new, carry[g])
                out = (new[0], new[1] if two_states else None)
                new_carry.append(tuple(new))
                ys.append((out, saved) if save else out)
            return tuple(new_carry), tuple(ys)

        zs = split(z) if not isinstance(z, tuple) else tuple(zip(*(split(p) for p in z)))
        xs = (zs, split(mask)) if has_mask else zs
        finals, ys = lax.scan(step, split_states(states), xs, unroll=unroll)
        # ys: per row block, ((h_seq, c_seq), saved) or (h_seq, c_seq).
        return join_states(finals), ys

    def sequences(ys, save):
        outs = [y[0] for y in ys] if save else list(ys)
        h_seq = join([o[0] for o in outs])
        c_seq = join([o[1] for o in outs]) if two_states else None
        return h_seq, c_seq

    @jax.custom_vjp
    def run(z, states, params, mask):
        finals, ys = forward(z, states, params, mask, save=False)
        return sequences(ys, False)[0], finals

    def run_fwd(z, states, params, mask):
        finals, ys = forward(z, states, params, mask, save=True)
        # The backward pass works block by block: the residuals keep each
        # block's states and gate values, never joined and split again.
        return (sequences(ys, True)[0], finals), (z, states, params, mask, ys)

    def run_bwd(res, cts):
        z, states, params, mask, ys = res
        dh_seq, dfinals = cts
        prepared = _prepare(kind, params)
        h_blocks = tuple(y[0][0] for y in ys)
        c_blocks = tuple(y[0][1] for y in ys) if two_states else (None,) * groups
        saved = tuple(y[1] for y in ys)
        initial = split_states(states)

        def shifted(first, seq):
            # The states before each step: the initial one, then seq[:-1].
            return None if seq is None else jnp.concatenate([first[None], seq[:-1]], axis=0)

        h_prev = tuple(shifted(s[0], h) for s, h in zip(initial, h_blocks))
        c_prev = tuple(
            shifted(s[1] if two_states else None, c) for s, c in zip(initial, c_blocks)
        )

        def step(carry, xs):
            new_carry, das = [], []
            for g in range(groups):
                dh, dc = carry[g]
                dh_t, saved_t, hp, cp, h_t, c_t, m_t = (
                    None if x is None else x[g] for x in xs
                )
                dh_prev, dc_prev, da = _backward_step(
                    kind, dh + dh_t, dc, saved_t, hp, cp, h_t, c_t, m_t, prepared, nonlinear[0]
                )
                new_carry.append((dh_prev, dc_prev))
                das.append(da)
            return tuple(new_carry), tuple(das)

        xs = (
            split(dh_seq),
            saved,
            h_prev,
            c_prev if two_states else None,
            h_blocks,
            c_blocks if two_states else None,
            split(mask) if has_mask else None,
        )
        dfin = (dfinals[0], dfinals[1]) if two_states else (dfinals[0],)
        carry = tuple(s + (None,) * (2 - len(s)) for s in split_states(dfin))
        z_blocks = split(z)
        grads, dz = {}, [[] for _ in range(groups)]
        # The reverse loop runs over a few chunks of steps, last chunk first;
        # the weight gradients of a chunk depend only on it, so XLA can run
        # them while the loop goes on with the earlier chunk.
        for a, b in _chunks(z.shape[0], chunks):
            chunk = jax.tree_util.tree_map(lambda v, a=a, b=b: v[a:b], xs)
            carry, das = lax.scan(step, carry, chunk, reverse=True, unroll=unroll)
            for g in range(groups):
                c0 = initial[g][1] if two_states else None
                dz_g, part = _chunk_grads(
                    kind, params, das[g], z_blocks[g], h_blocks[g], initial[g][0],
                    c_blocks[g], c0, saved[g], a, b,
                )
                dz[g].insert(0, dz_g)
                grads = _add_grads(grads, part)
        dz = join([jnp.concatenate(parts, axis=0) for parts in dz])
        dstates = join_states(tuple(b[: len(states)] for b in carry))
        dmask = None if mask is None else jnp.zeros_like(mask)
        return dz, dstates, {k: grads[k] for k in params}, dmask

    run.defvjp(run_fwd, run_bwd)
    return run


# TensorFlow: tf.scan + tf.custom_gradient.


@functools.cache
def _tf_scans(kind, n_states, has_mask, save, jit):
    """The forward and the backward loop of ``kind`` on TensorFlow.

    Built once per configuration; the weights are arguments, so with ``jit``
    each loop is compiled by XLA once per input shape and dtype.
    """
    import tensorflow as tf

    two_states = kind == "lstm"
    nonlinear = (tf.tanh, tf.sigmoid)

    def forward(xs, init, params):
        prepared = _prepare(kind, params)

        # tf.scan stacks its whole accumulator, so the kept gate values ride
        # along in it (each is (batch, units)).
        def step(acc, xs_t):
            carry = acc[:n_states]
            z_t, m_t = xs_t if has_mask else (xs_t, None)
            if isinstance(z_t, (tuple, list)):
                # Projected per gate (see _tf_loop's hoist); XLA reads the
                # slices of this concatenation from the parts themselves.
                z_t = tf.concat(list(z_t), axis=-1)
            z_t = _project(z_t, params)
            new, saved = _forward_step(kind, z_t, carry, prepared, *nonlinear)
            if has_mask:
                new = _select(m_t, new, carry)
            return tuple(new) + (tuple(saved) if save else ())

        return tf.scan(step, xs, initializer=init)

    def backward(xs, init, params):
        # A while loop rather than tf.scan: only dA is stacked (tf.scan would
        # stack dh and dc too), and the final carry is the states' gradient.
        prepared = _prepare(kind, params)
        n_saved = len(xs) - 3 - (2 if two_states else 0) - (1 if has_mask else 0)
        steps = tf.shape(xs[0])[0]
        das = tf.TensorArray(init[-1].dtype, size=steps, element_shape=init[-1].shape)

        def body(i, dh, dc, das):
            t = steps - 1 - i
            x = [a[t] for a in xs]
            dh_t, hp, h_t = x[0], x[1], x[2]
            saved_t = tuple(x[3 : 3 + n_saved])
            rest = x[3 + n_saved :]
            cp, c_t = (rest[0], rest[1]) if two_states else (None, None)
            m_t = rest[-1] if has_mask else None
            dh_prev, dc_prev, da = _backward_step(
                kind, dh + dh_t, dc, saved_t, hp, cp, h_t, c_t, m_t, prepared, nonlinear[0]
            )
            if not two_states:
                dc_prev = dc
            return i + 1, dh_prev, dc_prev, das.write(t, da)

        dc0 = init[1] if two_states else tf.zeros([], init[0].dtype)
        _, dh, dc, das = tf.while_loop(
            lambda i, *_: i < steps, body, (tf.constant(0), init[0], dc0, das)
        )
        return (dh, dc, das.stack()) if two_states else (dh, das.stack())

    if jit:
        forward = tf.function(forward, jit_compile=True, autograph=False)
        backward = tf.function(backward, jit_compile=True, autograph=False)
    return forward, backward


def _tf_loop(
    kind, z, states, params, mask, differentiable, jit=False, hoist=False, chunks=1
):
    """The TensorFlow kernel. With ``hoist`` the input projection of all
    steps is computed before the loop (``_project_gates``); its gradient is
    that of the in-loop projection (``dW = X^T dA`` after the loop)."""
    import tensorflow as tf

    two_states = kind == "lstm"
    names = sorted(params)
    n_states = len(states)
    has_mask = mask is not None
    n_saved = {"elman": 0, "gated": 2, "lstm": 4, "gru": 3, "gru_after": 4}[kind]

    def forward(z, states, params, mask, save=True, custom=False):
        run_scan = _tf_scans(kind, n_states, has_mask, save, jit)[0]
        if hoist and "W" in params:
            z, params = _project_gates(kind, z, params)
        init = tuple(states)
        if save:
            init += tuple(tf.zeros_like(states[0]) for _ in range(n_saved))
        args = ((z, mask) if has_mask else z, init, params)
        if custom:
            # Under the custom gradient the loop itself is never
            # differentiated; hide it from an eager tape, which would
            # otherwise try to keep its intermediates (not possible across
            # the XLA boundary).
            args = tf.nest.map_structure(tf.stop_gradient, args)
        seqs = run_scan(*args)
        return tuple(seqs[:n_states]), tuple(seqs[n_states:])

    if not differentiable and not jit:
        # A plain forward loop; gradients, if asked for, by automatic
        # differentiation of it.
        state_seqs, _ = forward(z, states, params, mask, save=False)
        return state_seqs[0], tuple(s[-1] for s in state_seqs)

    @tf.custom_gradient
    def run(z, *flat):
        st = tuple(flat[:n_states])
        pr = dict(zip(names, flat[n_states : n_states + len(names)]))
        m = flat[-1] if has_mask else None
        # Inference keeps no gate values; its gradient, if asked for, runs
        # the forward loop again to get them.
        state_seqs, saved = forward(z, st, pr, m, save=differentiable, custom=True)
        h_seq = state_seqs[0]
        c_seq = state_seqs[1] if two_states else None
        finals = tuple(s[-1] for s in state_seqs)

        def grad(dh_seq, *dfinals):
            gates = saved
            if not differentiable:
                gates = forward(z, st, pr, m, save=True, custom=True)[1]
            h0 = st[0]
            c0 = st[1] if two_states else None
            h_prev = tf.concat([h0[None], h_seq[:-1]], axis=0)
            c_prev = tf.concat([c0[None], c_seq[:-1]], axis=0) if two_states else None
            dfin = [d if d is not None else tf.zeros_like(s) for d, s in zip(dfinals, st)]
            if dh_seq is None:
                dh_seq = tf.zeros_like(h_seq)
            xs = [dh_seq, h_prev, h_seq] + list(gates)
            if two_states:
                xs += [c_prev, c_seq]
            if has_mask:
                xs.append(m)
            k = FORMS[kind]
            da0 = tf.zeros(tf.concat([tf.shape(h0)[:1], [k * h0.shape[-1]]], 0), h0.dtype)
            init = (dfin[0], dfin[1], da0) if two_states else (dfin[0], da0)
            backward = _tf_scans(kind, n_states, has_mask, True, jit)[1]
            grads, dz = {}, []
            # Last chunk of steps first; each chunk's weight gradients depend
            # only on it, so TensorFlow can run them beside the next loop.
            for a, b in _chunks(h_seq.shape[0], chunks):
                result = backward(tuple(_steps(x, a, b) for x in xs), init, pr)
                da = result[-1]
                init = tuple(result[:-1]) + (da0,)
                dz_c, part = _chunk_grads(kind, pr, da, z, h_seq, h0, c_seq, c0, gates, a, b)
                dz.insert(0, dz_c)
                grads = _add_grads(grads, part)
            dstates = list(init[:-1])
            dz = dz[0] if len(dz) == 1 else tf.concat(dz, axis=0)
            out = [dz] + dstates + [grads[k] for k in names]
            if has_mask:
                out.append(None)
            return out

        return (h_seq,) + finals, grad

    flat = list(states) + [params[k] for k in names] + ([mask] if has_mask else [])
    outs = run(z, *flat)
    return outs[0], tuple(outs[1:])
