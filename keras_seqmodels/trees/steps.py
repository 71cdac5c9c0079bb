"""Pure composition functions of the recursive layers.

Each takes the states of the children of a batch of ``C`` nodes, gathered as
``(C, K, units)`` (zeros where a node has fewer than ``K`` children), and
returns the new node states. The layers call them once per level for all the
nodes of that level; tests check them directly against NumPy.
"""

from keras import ops


def recursive_step(child_h, kernel, bias, activation):
    """p = f(W [c_1; ...; c_K] + b) (Pollack 1990; Socher et al. 2011).

    Args:
        child_h: ``(C, K, units)``.
        kernel: ``W``, ``(K * units, units)``.
        bias: ``b``, ``(units,)`` or ``None``.
    """
    cat = ops.reshape(child_h, (-1, kernel.shape[0]))
    a = ops.matmul(cat, kernel)
    if bias is not None:
        a = a + bias
    return activation(a)


def rntn_step(child_h, kernel, tensor_kernel, bias, activation):
    """p = f(cᵀ V^{[1:d]} c + W c + b) with c = [c_1; ...; c_K] (Socher 2013).

    Args:
        child_h: ``(C, K, units)``.
        kernel: ``W``, ``(K * units, units)``.
        tensor_kernel: ``V``, ``(K * units, K * units, units)``; slice ``k``
            is the bilinear form of output unit ``k``.
        bias: ``(units,)`` or ``None``.
    """
    width = kernel.shape[0]
    units = kernel.shape[1]
    cat = ops.reshape(child_h, (-1, width))
    # One matrix product for the bilinear term: (c V)[j, k] = sum_i c_i V_ijk.
    cv = ops.reshape(
        ops.matmul(cat, ops.reshape(tensor_kernel, (width, width * units))),
        (-1, width, units),
    )
    bilinear = ops.sum(cv * ops.expand_dims(cat, -1), axis=1)
    a = bilinear + ops.matmul(cat, kernel)
    if bias is not None:
        a = a + bias
    return activation(a)


def nary_tree_lstm_step(
    z, child_h, child_c, recurrent_kernel, activation, recurrent_activation
):
    """N-ary Tree-LSTM node (Tai et al. 2015, eqs. 9-14).

    With ``H = [h_1; ...; h_K]`` and gate pre-activations ``z = W x + b`` in
    order ``[i, f, g, o]``:
    i = σ(z_i + U_i H), f_k = σ(z_f + U_{f,k} H) (one forget gate per child),
    g = tanh(z_g + U_g H), o = σ(z_o + U_o H),
    c = i ⊙ g + Σ_k f_k ⊙ c_k, h = o ⊙ tanh(c).

    Args:
        z: ``(C, 4 * units)``.
        child_h, child_c: ``(C, K, units)``.
        recurrent_kernel: ``(K * units, (K + 3) * units)``, columns
            ``[i, f_1 .. f_K, g, o]``.

    Returns:
        ``(h, c)``, each ``(C, units)``.
    """
    k = child_h.shape[1]
    units = child_h.shape[2]
    a = ops.matmul(ops.reshape(child_h, (-1, k * units)), recurrent_kernel)
    z_i, z_f, z_g, z_o = ops.split(z, 4, axis=-1)
    i = recurrent_activation(z_i + a[:, :units])
    a_f = ops.reshape(a[:, units : (k + 1) * units], (-1, k, units))
    f = recurrent_activation(ops.expand_dims(z_f, 1) + a_f)
    g = activation(z_g + a[:, (k + 1) * units : (k + 2) * units])
    o = recurrent_activation(z_o + a[:, (k + 2) * units :])
    c = i * g + ops.sum(f * child_c, axis=1)
    return o * activation(c), c


def child_sum_tree_lstm_step(
    z, child_h, child_c, recurrent_kernel, activation, recurrent_activation
):
    """Child-sum Tree-LSTM node (Tai et al. 2015, eqs. 2-8).

    h̃ = Σ_k h_k; i = σ(z_i + U_i h̃), f_k = σ(z_f + U_f h_k),
    g = tanh(z_g + U_g h̃), o = σ(z_o + U_o h̃),
    c = i ⊙ g + Σ_k f_k ⊙ c_k, h = o ⊙ tanh(c).
    Absent children are zero states and contribute nothing.

    Args:
        z: ``(C, 4 * units)`` in order ``[i, f, g, o]``.
        child_h, child_c: ``(C, K, units)``.
        recurrent_kernel: ``(units, 4 * units)``.

    Returns:
        ``(h, c)``.
    """
    units = child_h.shape[2]
    k = child_h.shape[1]
    a = ops.matmul(ops.sum(child_h, axis=1), recurrent_kernel)
    u_f = recurrent_kernel[:, units : 2 * units]
    a_f = ops.reshape(
        ops.matmul(ops.reshape(child_h, (-1, units)), u_f), (-1, k, units)
    )
    z_i, z_f, z_g, z_o = ops.split(z, 4, axis=-1)
    i = recurrent_activation(z_i + a[:, :units])
    f = recurrent_activation(ops.expand_dims(z_f, 1) + a_f)
    g = activation(z_g + a[:, 2 * units : 3 * units])
    o = recurrent_activation(z_o + a[:, 3 * units :])
    c = i * g + ops.sum(f * child_c, axis=1)
    return o * activation(c), c
