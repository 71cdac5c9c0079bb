"""The backward pass of the fused loops (``fused_rnn``), written out.

The reverse loop of each backend kernel calls ``_backward_step``: it carries
only ``dh`` (and ``dc``) and emits, per step, the gradient of the gate
pre-activations ``dA(t)``, from the gate values the forward step kept
(``keras_seqmodels.cells.steps``' ``*_gates`` functions). After it, the
recurrent weight gradient is one large product over all steps and rows
(``_weight_grads``: ``dU = H(t-1)^T dA``), and ``dZ = dA`` flows back through
the input projection as single products too (``_input_grads``), a chunk of
steps at a time where the loop is chunked (``_chunk_grads``). A new fused
form adds its case to ``_backward_step`` and, if its recurrent product is
not ``h U``, to ``_weight_grads``.
"""

from keras import ops


def _backward_step(kind, dh, dc, saved, h_prev, c_prev, h_t, c_t, m, params, tanh):
    """Reverse one step (as if unmasked, then selected by ``m``).

    Returns ``(dh_prev, dc_prev, dA)`` with ``dA`` the gradient of the gate
    pre-activations that take the input projection (``(batch, k units)``).
    """
    one = 1.0

    def keep(x):
        return x if m is None else ops.where(m, x, ops.zeros_like(x))

    def pick(x, passthrough):
        return x if m is None else ops.where(m, x, passthrough)

    if kind == "elman":
        da = keep(dh * (one - h_t * h_t))
        return ops.matmul(da, params["U_T"]) + pick(ops.zeros_like(dh), dh), None, da
    if kind == "gated":
        g, f = saved
        da_g = keep(dh * (f - h_prev) * g * (one - g))
        da_f = keep(dh * g * (one - f * f))
        da = ops.concatenate([da_g, da_f], axis=-1)
        return pick(dh * (one - g), dh) + ops.matmul(da, params["U_T"]), None, da
    if kind == "lstm":
        i, f, g, o = saved
        p = params.get("P")
        tc = tanh(c_t)
        da_o = dh * tc * o * (one - o)
        dct = dc + dh * o * (one - tc * tc)
        if p is not None:
            dct = dct + da_o * p[2]
        da_i = dct * g * i * (one - i)
        da_f = dct * c_prev * f * (one - f)
        da_g = dct * i * (one - g * g)
        dc_prev = dct * f
        if p is not None:
            dc_prev = dc_prev + da_i * p[0] + da_f * p[1]
        da = keep(ops.concatenate([da_i, da_f, da_g, da_o], axis=-1))
        return ops.matmul(da, params["U_T"]) + pick(ops.zeros_like(dh), dh), pick(dc_prev, dc), da
    if kind == "gru":
        upd, r, cand = saved
        da_u = keep(dh * (h_prev - cand) * upd * (one - upd))
        da_h = keep(dh * (one - upd) * (one - cand * cand))
        dq = ops.matmul(da_h, params["U_h_T"])
        da_r = dq * h_prev * r * (one - r)
        da_ur = ops.concatenate([da_u, da_r], axis=-1)
        dh_prev = pick(dh * upd + dq * r, dh) + ops.matmul(da_ur, params["U_ur_T"])
        return dh_prev, None, ops.concatenate([da_ur, da_h], axis=-1)
    upd, r, cand, hu_h = saved
    da_z = keep(dh * (h_prev - cand) * upd * (one - upd))
    da_h = keep(dh * (one - upd) * (one - cand * cand))
    da_r = da_h * hu_h * r * (one - r)
    dhu = ops.concatenate([da_z, da_r, da_h * r], axis=-1)
    dh_prev = pick(dh * upd, dh) + ops.matmul(dhu, params["U_T"])
    return dh_prev, None, ops.concatenate([da_z, da_r, da_h], axis=-1)


def _weight_grads(kind, params, da, h_seq, h0, c_seq, c0, saved):
    """Gradients of the recurrent weights as single products over all steps."""
    n = params["U"].shape[0]
    h_prev = ops.concatenate([ops.expand_dims(h0, 0), h_seq[:-1]], axis=0)
    h_flat = ops.reshape(h_prev, (-1, n))
    da_flat = ops.reshape(da, (-1, da.shape[-1]))
    grads = {}
    if kind == "gru":
        r = saved[1]
        q_flat = ops.reshape(r * h_prev, (-1, n))
        grads["U"] = ops.concatenate(
            [
                ops.matmul(ops.transpose(h_flat), da_flat[:, : 2 * n]),
                ops.matmul(ops.transpose(q_flat), da_flat[:, 2 * n :]),
            ],
            axis=-1,
        )
    elif kind == "gru_after":
        r = ops.reshape(saved[1], (-1, n))
        dhu = ops.concatenate([da_flat[:, : 2 * n], da_flat[:, 2 * n :] * r], axis=-1)
        grads["U"] = ops.matmul(ops.transpose(h_flat), dhu)
        if "rb" in params:
            grads["rb"] = ops.sum(dhu, axis=0)
    else:
        grads["U"] = ops.matmul(ops.transpose(h_flat), da_flat)
    if "P" in params:
        c_prev = ops.concatenate([ops.expand_dims(c0, 0), c_seq[:-1]], axis=0)
        da_i, da_f, da_o = da[..., :n], da[..., n : 2 * n], da[..., 3 * n :]
        grads["P"] = ops.stack(
            [
                ops.sum(da_i * c_prev, axis=(0, 1)),
                ops.sum(da_f * c_prev, axis=(0, 1)),
                ops.sum(da_o * c_seq, axis=(0, 1)),
            ]
        )
    return grads


def _input_grads(params, x, da):
    """``dX = dA W^T``, ``dW = X^T dA``, ``db = sum dA`` (single products), or
    ``dZ = dA`` when the input was already projected."""
    if "W" not in params:
        return da, {}
    width = da.shape[-1]
    da_flat = ops.reshape(da, (-1, width))
    x_flat = ops.reshape(x, (-1, x.shape[-1]))
    grads = {"W": ops.matmul(ops.transpose(x_flat), da_flat)}
    if "b" in params:
        grads["b"] = ops.sum(da_flat, axis=0)
    dx = ops.reshape(ops.matmul(da_flat, ops.transpose(params["W"])), ops.shape(x))
    return dx, grads


def _chunks(steps, chunks):
    """``(start, end)`` of the chunks of steps the reverse loop runs, last
    chunk first; one chunk of all steps when the length is unknown or
    shorter than ``chunks``."""
    if steps is None or chunks <= 1 or steps < chunks:
        return [(0, steps)]
    bounds = [round(steps * i / chunks) for i in range(chunks + 1)]
    return [(a, b) for a, b in reversed(list(zip(bounds[:-1], bounds[1:]))) if a < b]


def _steps(v, start, end):
    """Steps ``start:end`` of a time-major sequence (``v`` itself, not a
    slice, when they are all of it or ``v`` is None)."""
    if v is None or (start == 0 and end in (None, v.shape[0])):
        return v
    return v[start:end]


def _chunk_grads(kind, params, da, x, h_seq, h0, c_seq, c0, saved, start, end):
    """The weight and input gradients of steps ``start:end``, from that
    chunk's gate gradients ``da``; the states before the chunk are read from
    the sequences. Returns ``(dx, grads)``."""

    def part(v):
        return _steps(v, start, end)

    h_before = h0 if start == 0 else h_seq[start - 1]
    c_before = c0 if start == 0 or c_seq is None else c_seq[start - 1]
    saved = tuple(part(v) for v in saved)
    grads = _weight_grads(kind, params, da, part(h_seq), h_before, part(c_seq), c_before, saved)
    dx, input_grads = _input_grads(params, part(x), da)
    grads.update(input_grads)
    return dx, grads


def _add_grads(total, part):
    return part if not total else {k: total[k] + part[k] for k in total}
