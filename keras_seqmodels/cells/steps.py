"""Pure step functions of the recurrent cells.

Each function takes the input projection of one time step already computed
(``z = x W + b``, so the runner can compute it for all steps in one matrix
product before the loop) and the previous state(s), and returns the new
state(s). The cells, the fused runner and the tree and memory layers all call
these, and tests check them directly against NumPy. The ``*_gates`` forms
also return the gate values, which the fused loop's hand-written backward
pass reads (``keras_seqmodels/layers/fused_rnn.py``): one place holds each
cell's equations (``keras_seqmodels.cells.forms`` names them).
"""

from keras import ops


def split_blocks(a, k):
    """The last axis of ``a`` as ``k`` equal gate blocks, in one split (the
    cells' steps)."""
    return ops.split(a, k, axis=-1)


def slice_blocks(a, k):
    """The same ``k`` gate blocks as slices of a ``(batch, k units)`` array:
    what the fused loops trace (the same values, other graph operations)."""
    n = a.shape[-1] // k
    parts = [a[:, :n]]
    parts += [a[:, i * n : (i + 1) * n] for i in range(1, k - 1)]
    return parts + [a[:, (k - 1) * n :]]


def elman_step(z, h, recurrent_kernel, activation):
    """Elman (hidden-to-hidden) step: h(t) = f(z(t) + W h(t-1)).

    Args:
        z: input projection ``b + U x(t)``, shape ``(batch, units)``.
        h: previous hidden state, ``(batch, units)``.
        recurrent_kernel: ``W``, ``(units, units)``.
        activation: the element-wise non-linearity ``f``.

    Returns:
        ``h(t)``, ``(batch, units)``.

    Example:

    >>> import numpy as np
    >>> h = elman_step(np.ones((1, 2)), np.ones((1, 2)), np.eye(2), ops.tanh)
    >>> np.round(np.asarray(h), 4).tolist()
    [[0.964, 0.964]]
    """
    return activation(z + ops.matmul(h, recurrent_kernel))


def lstm_step(
    z,
    h,
    c,
    recurrent_kernel,
    activation,
    recurrent_activation,
    peephole_kernels=None,
):
    """LSTM step with optional peepholes.

    With gate pre-activations split as ``[i, f, g, o]``:
    i = σ(z_i + U_i h + p_i ⊙ c), f = σ(z_f + U_f h + p_f ⊙ c),
    c' = f ⊙ c + i ⊙ tanh(z_g + U_g h), o = σ(z_o + U_o h + p_o ⊙ c'),
    h' = o ⊙ tanh(c').

    Args:
        z: input projection, ``(batch, 4 * units)``.
        h, c: previous hidden and cell states, ``(batch, units)``.
        recurrent_kernel: ``(units, 4 * units)``.
        activation: the cell's non-linearity (``tanh``).
        recurrent_activation: the gates' non-linearity (``sigmoid``).
        peephole_kernels: ``None`` or ``(3, units)``: p_i, p_f, p_o.

    Returns:
        ``(h', c')``.

    Example:

    >>> import numpy as np
    >>> zeros = np.zeros((1, 1))
    >>> z = np.array([[0.0, 0.0, 1.0, 0.0]])  # gates at 0.5, candidate tanh(1)
    >>> h, c = lstm_step(z, zeros, zeros, np.zeros((1, 4)), ops.tanh, ops.sigmoid)
    >>> round(float(c[0, 0]), 4), round(float(h[0, 0]), 4)
    (0.3808, 0.1817)
    """
    states, _ = lstm_step_gates(
        z, h, c, recurrent_kernel, activation, recurrent_activation, peephole_kernels
    )
    return states


def lstm_step_gates(
    z,
    h,
    c,
    recurrent_kernel,
    activation,
    recurrent_activation,
    peephole_kernels=None,
    blocks=split_blocks,
):
    """``lstm_step`` and its gates: ``((h', c'), (i, f, g, o))``, ``g`` the
    candidate ``tanh(z_g + U_g h)``; ``blocks`` cuts the gate blocks
    (``split_blocks`` or ``slice_blocks``)."""
    a = z + ops.matmul(h, recurrent_kernel)
    a_i, a_f, a_g, a_o = blocks(a, 4)
    if peephole_kernels is not None:
        a_i = a_i + peephole_kernels[0] * c
        a_f = a_f + peephole_kernels[1] * c
    i = recurrent_activation(a_i)
    f = recurrent_activation(a_f)
    g = activation(a_g)
    c_new = f * c + i * g
    if peephole_kernels is not None:
        a_o = a_o + peephole_kernels[2] * c_new
    o = recurrent_activation(a_o)
    return (o * activation(c_new), c_new), (i, f, g, o)


def gru_step(z, h, recurrent_kernel, activation, recurrent_activation, h_dropped=None):
    """GRU step with the reset gate applied to h(t-1) before the matrix.

    u = σ(z_u + U_u h), r = σ(z_r + U_r h),
    h̃ = tanh(z_h + U_h (r ⊙ h)), h' = u ⊙ h + (1 - u) ⊙ h̃.

    Args:
        z: input projection ``[z_u, z_r, z_h]``, ``(batch, 3 * units)``.
        h: previous state, ``(batch, units)``.
        recurrent_kernel: ``[U_u, U_r, U_h]``, ``(units, 3 * units)``.
        activation: the candidate's non-linearity (``tanh``).
        recurrent_activation: the gates' non-linearity (``sigmoid``).
        h_dropped: ``h`` after recurrent dropout, used inside the matrix
            products only (the leak term keeps the undropped state).

    Returns:
        ``h(t)``, ``(batch, units)``.

    Example:

    >>> import numpy as np
    >>> z = np.array([[0.0, 0.0, 2.0]])  # u = 0.5, candidate tanh(2)
    >>> h = gru_step(z, np.ones((1, 1)), np.zeros((1, 3)), ops.tanh, ops.sigmoid)
    >>> round(float(h[0, 0]), 4)
    0.982
    """
    units = recurrent_kernel.shape[0]
    u_ur, u_h = recurrent_kernel[:, : 2 * units], recurrent_kernel[:, 2 * units :]
    h_new, _ = gru_step_gates(z, h, u_ur, u_h, activation, recurrent_activation, h_dropped)
    return h_new


def gru_step_gates(
    z, h, u_ur, u_h, activation, recurrent_activation, h_dropped=None, blocks=split_blocks
):
    """``gru_step`` with the recurrent kernel given as its two blocks
    ``U_ur`` ``(units, 2 * units)`` and ``U_h`` ``(units, units)`` (sliced
    once, outside a loop), and its gates: ``(h', (u, r, h̃))``."""
    hd = h if h_dropped is None else h_dropped
    n = u_h.shape[0]
    ur = recurrent_activation(z[:, : 2 * n] + ops.matmul(hd, u_ur))
    u, r = blocks(ur, 2)
    h_tilde = activation(z[:, 2 * n :] + ops.matmul(r * hd, u_h))
    return u * h + (1.0 - u) * h_tilde, (u, r, h_tilde)


def gru_reset_after_step(
    z,
    h,
    recurrent_kernel,
    recurrent_bias,
    activation,
    recurrent_activation,
    h_dropped=None,
):
    """GRU step with the reset gate applied after the recurrent product.

    With ``a = U h + rb`` split as ``[a_u, a_r, a_h]``:
    u = σ(z_u + a_u), r = σ(z_r + a_r),
    h̃ = tanh(z_h + r ⊙ a_h), h' = u ⊙ h + (1 - u) ⊙ h̃.

    This is the form of ``keras.layers.GRU`` (``reset_after=True``, its
    default), cuDNN and ``torch.nn.GRU``: the whole recurrent product is one
    matrix product, and the recurrent bias ``rb`` of the candidate is inside
    the reset gate, so it cannot be folded into the input bias.

    Args:
        z: input projection ``x W + b_input`` as ``[z_u, z_r, z_h]``,
            ``(batch, 3 * units)``.
        h: previous state, ``(batch, units)``.
        recurrent_kernel: ``[U_u, U_r, U_h]``, ``(units, 3 * units)``.
        recurrent_bias: ``rb``, ``(3 * units,)``, or ``None`` for none.
        activation: the candidate's non-linearity (``tanh``).
        recurrent_activation: the gates' non-linearity (``sigmoid``).
        h_dropped: ``h`` after recurrent dropout, used inside the matrix
            product only (the leak term keeps the undropped state).

    Returns:
        ``h(t)``, ``(batch, units)``.

    Example:

    >>> import numpy as np
    >>> z = np.array([[0.0, 0.0, 2.0]])  # u = r = 0.5
    >>> rb = np.array([0.0, 0.0, 2.0])  # candidate tanh(2 + 0.5 * 2)
    >>> h = gru_reset_after_step(
    ...     z, np.ones((1, 1)), np.zeros((1, 3)), rb, ops.tanh, ops.sigmoid)
    >>> round(float(h[0, 0]), 4)
    0.9975
    """
    h_new, _ = gru_reset_after_step_gates(
        z, h, recurrent_kernel, recurrent_bias, activation, recurrent_activation, h_dropped
    )
    return h_new


def gru_reset_after_step_gates(
    z,
    h,
    recurrent_kernel,
    recurrent_bias,
    activation,
    recurrent_activation,
    h_dropped=None,
    blocks=split_blocks,
):
    """``gru_reset_after_step`` and its gates: ``(h', (u, r, h̃, a_h))``,
    ``a_h = U_h h + rb_h`` the recurrent part the reset gate scales."""
    n = recurrent_kernel.shape[0]
    a = ops.matmul(h if h_dropped is None else h_dropped, recurrent_kernel)
    if recurrent_bias is not None:
        a = a + recurrent_bias
    ur = recurrent_activation(z[:, : 2 * n] + a[:, : 2 * n])
    u, r = blocks(ur, 2)
    z_h, a_h = z[:, 2 * n :], a[:, 2 * n :]
    h_tilde = activation(z_h + r * a_h)
    return u * h + (1.0 - u) * h_tilde, (u, r, h_tilde, a_h)


def gated_step(z, s, recurrent_kernel, activation, recurrent_activation, s_dropped=None):
    """Single-gate unit: s' = (1 - g) ⊙ s + g ⊙ f(W x + W' s + b).

    g = σ(z_g + U_g s) with ``z = [z_g, z_f]``, ``recurrent_kernel = [U_g, W']``.

    Args:
        z: input projection ``[z_g, z_f]``, ``(batch, 2 * units)``.
        s: previous state, ``(batch, units)``.
        recurrent_kernel: ``[U_g, W']``, ``(units, 2 * units)``.
        activation: the candidate's non-linearity ``f`` (``tanh``).
        recurrent_activation: the gate's non-linearity (``sigmoid``).
        s_dropped: ``s`` after recurrent dropout; it enters the matrix
            product only.

    Returns:
        ``s(t)``, ``(batch, units)``.

    Example:

    >>> import numpy as np
    >>> z = np.array([[0.0, 2.0]])  # g = 0.5, candidate tanh(2)
    >>> s = gated_step(z, np.ones((1, 1)), np.zeros((1, 2)), ops.tanh, ops.sigmoid)
    >>> round(float(s[0, 0]), 4)
    0.982
    """
    s_new, _ = gated_step_gates(z, s, recurrent_kernel, activation, recurrent_activation, s_dropped)
    return s_new


def gated_step_gates(
    z, s, recurrent_kernel, activation, recurrent_activation, s_dropped=None, blocks=split_blocks
):
    """``gated_step`` and its gate and candidate: ``(s', (g, f))``."""
    a = z + ops.matmul(s if s_dropped is None else s_dropped, recurrent_kernel)
    a_g, a_f = blocks(a, 2)
    g = recurrent_activation(a_g)
    f = activation(a_f)
    return (1.0 - g) * s + g * f, (g, f)
