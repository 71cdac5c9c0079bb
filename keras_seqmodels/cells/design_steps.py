"""Pure step functions of the chapter's other recurrent designs.

As in ``steps.py``, each function takes the input projection of one step
(``z = x U + b``) and the previous state(s) and returns the new state(s);
the cells call them and the tests check them against NumPy.
"""

from keras import ops


def leaky_step(z, h, recurrent_kernel, alpha, activation, h_dropped=None):
    """Leaky unit: h(t) = α ⊙ h(t-1) + (1 - α) ⊙ f(z + h(t-1) W).

    Args:
        z: input projection ``b + x U``, ``(batch, units)``.
        h: previous state, ``(batch, units)``.
        recurrent_kernel: ``W``, ``(units, units)``.
        alpha: ``(units,)`` leak coefficients in [0, 1).
        activation: ``f``.
        h_dropped: ``h`` after recurrent dropout, used in the matrix product
            only (the leak keeps the undropped state).
    """
    hd = h if h_dropped is None else h_dropped
    return alpha * h + (1.0 - alpha) * activation(z + ops.matmul(hd, recurrent_kernel))


def delayed_step(z, buffer, recurrent_kernel, delayed_kernel, activation):
    """Recurrence with delays 1 and d: h(t) = f(z + h(t-1) W + h(t-d) W_d).

    Args:
        z: input projection, ``(batch, units)``.
        buffer: ``(batch, d * units)``, the last d states, newest first:
            ``[h(t-1), h(t-2), ..., h(t-d)]``.
        recurrent_kernel: ``W``, ``(units, units)``; delayed_kernel: ``W_d``.

    Returns:
        ``(h(t), new_buffer)`` with ``new_buffer = [h(t), ..., h(t-d+1)]``.
    """
    units = recurrent_kernel.shape[0]
    h_prev = buffer[:, :units]
    h_delayed = buffer[:, buffer.shape[1] - units :]
    h = activation(z + ops.matmul(h_prev, recurrent_kernel) + ops.matmul(h_delayed, delayed_kernel))
    new_buffer = ops.concatenate([h, buffer[:, : buffer.shape[1] - units]], axis=-1)
    return h, new_buffer


def clockwork_step(z, h, t, recurrent_kernel, connectivity, periods, activation):
    """Clockwork step: module i is updated only when t mod T_i = 0.

    h_new = f(z + h (W ⊙ M)); h(t) = where(active, h_new, h(t-1)).

    Args:
        z: input projection, ``(batch, units)``.
        h: previous state, ``(batch, units)``.
        t: ``(batch, 1)`` float step counter (0 at the first step).
        recurrent_kernel: ``W``, ``(units, units)``.
        connectivity: ``M``, ``(units, units)`` 0/1 mask: row j (source)
            to column i (target) is 1 when T_j >= T_i (slower feeds faster).
        periods: ``(units,)`` float, the period T of each unit's module.
    """
    h_new = activation(z + ops.matmul(h, recurrent_kernel * connectivity))
    # floor-mod on floats: exact for the integer-valued counters used here.
    active = ops.equal(t - periods * ops.floor(t / periods), 0.0)
    return ops.where(active, h_new, h)


def output_feedback_step(z, feedback, h, feedback_kernel, recurrent_kernel, activation):
    """Output-to-hidden recurrence: h(t) = f(z + o(t-1) R [+ h(t-1) W]).

    ``feedback`` is o(t-1) (closed loop) or y(t-1) (teacher forcing);
    ``recurrent_kernel`` is None when there is no hidden-to-hidden recurrence.
    """
    a = z + ops.matmul(feedback, feedback_kernel)
    if recurrent_kernel is not None:
        a = a + ops.matmul(h, recurrent_kernel)
    return activation(a)
