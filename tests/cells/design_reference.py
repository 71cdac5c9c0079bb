"""NumPy float64 references of the chapter's other recurrent designs.

Each ``*_ref(x, w, ...)`` runs one design over ``x`` (batch, time, features)
from its equation, with ``w`` the dict returned by ``weights_of`` and an
optional 0/1 ``mask`` (batch, time): masked steps keep the state and output
zeros. They return the output sequence.
"""

import numpy as np


def sigmoid(a):
    return 1.0 / (1.0 + np.exp(-a))


def weights_of(cell):
    """A built cell's weights as float64 arrays keyed by their path in the cell."""
    out = {}
    for v in cell.weights:
        key = v.path.split(cell.name + "/", 1)[-1]
        out[key] = np.asarray(v.numpy(), dtype=np.float64)
    return out


def _run(x, mask, state, step):
    batch, time, _ = x.shape
    outs = []
    for t in range(time):
        out, new = step(x[:, t], state, t)
        keep = np.ones((batch, 1)) if mask is None else mask[:, t : t + 1]
        state = [np.where(keep > 0, n, s) for n, s in zip(new, state)]
        outs.append(np.where(keep > 0, out, 0.0))
    return np.stack(outs, 1)


def _z(x, w):
    return x @ w["kernel"] + w.get("bias", 0.0)


def leaky_ref(x, w, mask=None):
    alpha = w["alpha"] if "alpha" in w else sigmoid(w["alpha_logit"])
    units = w["recurrent_kernel"].shape[0]

    def step(xt, state, t):
        (h,) = state
        h = alpha * h + (1 - alpha) * np.tanh(_z(xt, w) + h @ w["recurrent_kernel"])
        return h, [h]

    return _run(x, mask, [np.zeros((x.shape[0], units))], step)


def esn_ref(x, w, leak_rate, mask=None):
    return leaky_ref(x, {**w, "alpha": np.full(w["bias"].shape, 1 - leak_rate)}, mask)


def delayed_ref(x, w, delay, mask=None):
    units = w["recurrent_kernel"].shape[0]

    def step(xt, state, t):
        past = state  # past[k] = h(t-1-k)
        h = np.tanh(
            _z(xt, w) + past[0] @ w["recurrent_kernel"] + past[delay - 1] @ w["delayed_kernel"]
        )
        return h, [h] + past[:-1]

    return _run(x, mask, [np.zeros((x.shape[0], units)) for _ in range(delay)], step)


def clockwork_ref(x, w, periods, mask=None):
    units = w["recurrent_kernel"].shape[0]
    size = units // len(periods)
    unit_period = np.repeat(periods, size)
    batch = x.shape[0]

    def step(xt, state, _):
        h, t = state
        new = np.array(h)
        for i in range(units):  # unit by unit, straight from the definition
            for b in range(batch):
                if int(t[b, 0]) % unit_period[i] == 0:
                    a = _z(xt, w)[b, i] + sum(
                        h[b, j] * w["recurrent_kernel"][j, i]
                        for j in range(units)
                        if unit_period[j] >= unit_period[i]
                    )
                    new[b, i] = np.tanh(a)
        return new, [new, t + 1]

    return _run(x, mask, [np.zeros((batch, units)), np.zeros((batch, 1))], step)


def deep_transition_ref(x, w, n_input, n_transition, n_output, skip, mask=None):
    units = w["recurrent_kernel"].shape[0]

    def dense(a, name, act=np.tanh):
        return act(a @ w[f"{name}/kernel"] + w[f"{name}/bias"])

    def step(xt, state, _):
        (h,) = state
        xi = xt
        for i in range(n_input):
            xi = dense(xi, f"input_{i}")
        a = np.tanh(xi @ w["kernel"] + h @ w["recurrent_kernel"] + w["bias"])
        for i in range(n_transition):
            pre = a @ w[f"transition_{i + 1}/kernel"] + w[f"transition_{i + 1}/bias"]
            if skip and i == n_transition - 1:
                pre = pre + h @ w["skip_kernel"]
            a = np.tanh(pre)
        o = a
        for i in range(n_output):
            o = dense(o, f"output_{i}", (lambda v: v) if i == n_output - 1 else np.tanh)
        return o, [a]

    return _run(x, mask, [np.zeros((x.shape[0], units))], step)


def output_feedback_ref(x, w, y=None, mask=None, coins=None):
    """Closed loop (y None), teacher forced (y given) or mixed by ``coins``
    (batch, time): 1 feeds y(t-1), 0 feeds o(t-1)."""
    units = w["feedback_kernel"].shape[1]
    n_out = w["output_kernel"].shape[1]
    hidden = "recurrent_kernel" in w
    batch = x.shape[0]

    def step(xt, state, t):
        h, o = state
        fb = o
        if y is not None:
            truth = np.zeros((batch, n_out)) if t == 0 else y[:, t - 1]
            fb = truth if coins is None else np.where(coins[:, t : t + 1] > 0, truth, o)
        a = _z(xt, w) + fb @ w["feedback_kernel"]
        if hidden:
            a = a + h @ w["recurrent_kernel"]
        h = np.tanh(a)
        o = h @ w["output_kernel"] + w["output_bias"]
        return o, [h, o]

    return _run(x, mask, [np.zeros((batch, units)), np.zeros((batch, n_out))], step)
