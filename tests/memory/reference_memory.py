"""NumPy references of the memory layers, written from the papers' equations
with explicit loops (over heads, slots and shifts) rather than the layers'
vectorised forms."""

import numpy as np

EPS = 1e-6


def softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def softplus(x):
    return np.log1p(np.exp(x))


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def cosine(memory, keys):
    b, h, _ = keys.shape
    n = memory.shape[1]
    out = np.zeros((b, h, n))
    for i in range(b):
        for j in range(h):
            for s in range(n):
                k, m = keys[i, j], memory[i, s]
                out[i, j, s] = k @ m / (np.sqrt(k @ k + EPS) * np.sqrt(m @ m + EPS))
    return out


def content(memory, keys, beta):
    return softmax(beta[:, :, None] * cosine(memory, keys))


def shift(w, s):
    n = w.shape[-1]
    radius = s.shape[-1] // 2
    out = np.zeros_like(w)
    for i in range(n):
        for k, offset in enumerate(range(-radius, radius + 1)):
            out[..., i] += s[..., k] * w[..., (i - offset) % n]
    return out


def sharpen(w, gamma):
    p = (w + EPS) ** gamma[:, :, None]
    return p / p.sum(-1, keepdims=True)


def address(memory, prev, k, beta, g, s, gamma):
    wc = content(memory, k, beta)
    wg = g[:, :, None] * wc + (1 - g[:, :, None]) * prev
    return sharpen(shift(wg, s), gamma)


def write(memory, w, e, a):
    out = memory.copy()
    for h in range(w.shape[1]):
        out = out * (1 - w[:, h, :, None] * e[:, h, None, :])
    for h in range(w.shape[1]):
        out = out + w[:, h, :, None] * a[:, h, None, :]
    return out


def split_head(p, m, shift_range, write_head):
    sizes = [m, 1, 1, 2 * shift_range + 1, 1] + ([m, m] if write_head else [])
    parts = np.split(p, np.cumsum(sizes)[:-1], axis=-1)
    out = dict(
        k=np.tanh(parts[0]),
        beta=softplus(parts[1][..., 0]),
        g=sigmoid(parts[2][..., 0]),
        s=softmax(parts[3]),
        gamma=1 + softplus(parts[4][..., 0]),
    )
    if write_head:
        out["e"], out["a"] = sigmoid(parts[5]), np.tanh(parts[6])
    return out


def ntm_forward(x, w, n, m, r, wh, shift_range, units, controller="lstm", focus=8.0):
    """Run an NTM with weights ``w`` (dict by variable name) over ``x``."""
    b = x.shape[0]
    memory = np.broadcast_to(w["initial_memory"], (b, n, m)).copy()
    onehot = (np.arange(n) == 0) * focus
    rw = np.broadcast_to(softmax(w["initial_read_logits"] + onehot), (b, r, n)).copy()
    ww = np.broadcast_to(softmax(w["initial_write_logits"] + onehot), (b, wh, n)).copy()
    reads = np.einsum("bhn,bnm->bhm", rw, memory).reshape(b, -1)
    h = np.zeros((b, units))
    c = np.zeros((b, units))
    rsize = m + 3 + 2 * shift_range + 1
    outs = []
    for t in range(x.shape[1]):
        z = x[:, t] @ w["kernel"] + w["bias"] + reads @ w["read_kernel"]
        if controller == "lstm":
            a = z + h @ w["recurrent_kernel"]
            i, f, g, o = np.split(a, 4, axis=-1)
            c = sigmoid(f) * c + sigmoid(i) * np.tanh(g)
            h = sigmoid(o) * np.tanh(c)
        else:
            h = np.tanh(z)
        p = h @ w["head_kernel"] + w["head_bias"]
        rp = p[:, : r * rsize].reshape(b, r, rsize)
        wp = p[:, r * rsize :].reshape(b, wh, -1)
        rp = split_head(rp, m, shift_range, False)
        wp = split_head(wp, m, shift_range, True)
        ww = address(memory, ww, wp["k"], wp["beta"], wp["g"], wp["s"], wp["gamma"])
        memory = write(memory, ww, wp["e"], wp["a"])
        rw = address(memory, rw, rp["k"], rp["beta"], rp["g"], rp["s"], rp["gamma"])
        reads = np.einsum("bhn,bnm->bhm", rw, memory).reshape(b, -1)
        outs.append(np.concatenate([h, reads], -1))
    return np.stack(outs, 1), dict(memory=memory, read_w=rw, write_w=ww, reads=reads)


def memn2n_forward(
    stories, queries, emb, temporal, hops, softmax_on=True, code_form=False, memory_size=None
):
    """MemN2N with PE, TE and adjacent tying, from the paper's equations.

    ``code_form``: the authors' MATLAB code instead (build_model.m, train.m):
    l_kj = 1 + 4 (k - (d+1)/2)(j - (J+1)/2)/(d J) with J = sentence length
    + 1, the temporal embedding weighted as word J and only in used slots,
    and empty slots (up to ``memory_size``) attended with score 0.
    """
    d = emb.shape[-1]
    big_j_code = stories.shape[-1] + 1

    def weights(j, big_j):
        k = np.arange(1, d + 1)
        if code_form:
            return 1 + 4 * (k - (d + 1) / 2) * (j - (big_j_code + 1) / 2) / (d * big_j_code)
        return (1 - j / big_j) - (k / d) * (1 - 2 * j / big_j)

    def encode(tokens, e):
        out = np.zeros(tokens.shape[:-1] + (d,))
        for idx in np.ndindex(tokens.shape[:-1]):
            words = [t for t in tokens[idx] if t != 0]
            for j, tok in enumerate(words, 1):
                out[idx] += weights(j, len(words)) * e[tok]
        return out

    u = encode(queries, emb[0])
    used = (stories != 0).any(-1)
    absent = (memory_size or stories.shape[1]) - stories.shape[1]
    time_weight = weights(big_j_code, None) if code_form else 1.0
    atts = []
    for k in range(hops):
        t_a, t_c = (time_weight * temporal[i][None, : stories.shape[1]] for i in (k, k + 1))
        if code_form:
            t_a, t_c = t_a * used[..., None], t_c * used[..., None]
        m = encode(stories, emb[k]) + t_a
        c = encode(stories, emb[k + 1]) + t_c
        scores = np.einsum("bsd,bd->bs", m, u)
        if code_form and softmax_on:
            top = np.maximum(scores.max(-1, keepdims=True), 0.0)
            p = np.exp(scores - top)
            p = p / (p.sum(-1, keepdims=True) + absent * np.exp(-top))
        elif code_form:
            p = scores
        elif softmax_on:
            s = np.where(used, scores, -np.inf)
            p = np.exp(s - s.max(-1, keepdims=True))
            p = p / p.sum(-1, keepdims=True)
        else:
            p = scores * used
        u = u + np.einsum("bs,bsd->bd", p, c)
        atts.append(p)
    return u @ emb[hops].T, np.stack(atts, 1)
