"""NumPy float64 references written directly from each cell's equations."""

import numpy as np


def sigmoid(a):
    return 1.0 / (1.0 + np.exp(-a))


def run_reference(cell_name, x, weights, mask=None, states=None):
    """Run a cell over ``x`` (batch, time, features) in float64.

    ``weights`` is the dict returned by ``cell_weights``; masked steps keep the
    state and output zeros. Returns ``(outputs, final_states)``.
    """
    batch, time, _ = x.shape
    units = weights["recurrent_kernel"].shape[0]
    if states is None:
        n_states = 2 if cell_name == "LSTMCell" else 1
        states = [np.zeros((batch, units)) for _ in range(n_states)]
    states = [np.array(s, dtype=np.float64) for s in states]
    outputs = np.zeros((batch, time, units))
    step = STEPS[cell_name]
    for t in range(time):
        out, new = step(x[:, t], states, weights)
        keep = np.ones((batch, 1)) if mask is None else mask[:, t : t + 1]
        states = [np.where(keep > 0, n, s) for n, s in zip(new, states)]
        outputs[:, t] = np.where(keep > 0, out, 0.0)
    return outputs, states


def _affine(x, w):
    z = x @ w["kernel"]
    if w.get("bias") is not None:
        z = z + w["bias"]
    return z


def elman(x, states, w):
    (h,) = states
    h = np.tanh(_affine(x, w) + h @ w["recurrent_kernel"])
    return h, [h]


def lstm(x, states, w):
    h, c = states
    u = w["recurrent_kernel"].shape[0]
    a = _affine(x, w) + h @ w["recurrent_kernel"]
    a_i, a_f, a_g, a_o = (a[:, k * u : (k + 1) * u] for k in range(4))
    p = w.get("peephole_kernel")
    if p is not None:
        a_i = a_i + p[0] * c
        a_f = a_f + p[1] * c
    i, f = sigmoid(a_i), sigmoid(a_f)
    c_new = f * c + i * np.tanh(a_g)
    if p is not None:
        a_o = a_o + p[2] * c_new
    h_new = sigmoid(a_o) * np.tanh(c_new)
    return h_new, [h_new, c_new]


def gru(x, states, w):
    (h,) = states
    u = w["recurrent_kernel"].shape[0]
    r_k = w["recurrent_kernel"]
    bias = w.get("bias")
    if w.get("reset_after", bias is not None and bias.ndim == 2):
        # Keras/cuDNN/PyTorch form: bias rows are (input, recurrent).
        b_in, b_rec = (0.0, 0.0) if bias is None else (bias[0], bias[1])
        z = x @ w["kernel"] + b_in
        a = h @ r_k + b_rec
        upd = sigmoid(z[:, :u] + a[:, :u])
        rst = sigmoid(z[:, u : 2 * u] + a[:, u : 2 * u])
        cand = np.tanh(z[:, 2 * u :] + rst * a[:, 2 * u :])
    else:
        z = _affine(x, w)
        upd = sigmoid(z[:, :u] + h @ r_k[:, :u])
        rst = sigmoid(z[:, u : 2 * u] + h @ r_k[:, u : 2 * u])
        cand = np.tanh(z[:, 2 * u :] + (rst * h) @ r_k[:, 2 * u :])
    h_new = upd * h + (1 - upd) * cand
    return h_new, [h_new]


def gated(x, states, w):
    (s,) = states
    u = w["recurrent_kernel"].shape[0]
    a = _affine(x, w) + s @ w["recurrent_kernel"]
    g = sigmoid(a[:, :u])
    s_new = (1 - g) * s + g * np.tanh(a[:, u:])
    return s_new, [s_new]


STEPS = {"ElmanCell": elman, "LSTMCell": lstm, "GRUCell": gru, "GatedCell": gated}


def cell_weights(cell):
    """Read a built cell's weights back as float64 arrays, keyed by name."""
    out = {}
    for v in cell.weights:
        out[v.path.split("/")[-1]] = np.asarray(v.numpy(), dtype=np.float64)
    if hasattr(cell, "reset_after"):
        out["reset_after"] = np.asarray(cell.reset_after)
    return out
