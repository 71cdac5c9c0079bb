"""NumPy references of the recursive layers that walk one tree recursively.

Written from the equations (Pollack 1990 / Socher et al. 2011 and 2013;
Tai et al. 2015), independently of the layers' batched level loop.
"""

import numpy as np


def sigmoid(a):
    return 1.0 / (1.0 + np.exp(-a))


def _walk(tree, node, fn, memo):
    # Recursion over the tree itself: each node from its children.
    kids = [_walk(tree, k, fn, memo) for k in tree.children[node]]
    memo[node] = fn(node, kids)
    return memo[node]


def recursive_nn(tree, x, w, arity):
    """x: (n, d) node inputs; w: dict kernel (K d, d), bias (d,)."""
    d = x.shape[1]

    def fn(node, kids):
        if not kids:
            return x[node]
        cat = np.zeros(arity * d)
        for j, h in enumerate(kids):
            cat[j * d : (j + 1) * d] = h
        return np.tanh(cat @ w["kernel"] + w["bias"])

    memo = {}
    root = _walk(tree, tree.root, fn, memo)
    return np.stack([memo[i] for i in range(len(tree))]), root


def rntn(tree, x, w, arity):
    d = x.shape[1]

    def fn(node, kids):
        if not kids:
            return x[node]
        c = np.zeros(arity * d)
        for j, h in enumerate(kids):
            c[j * d : (j + 1) * d] = h
        bilinear = np.array(
            [c @ w["tensor_kernel"][:, :, k] @ c for k in range(d)]
        )
        return np.tanh(bilinear + c @ w["kernel"] + w["bias"])

    memo = {}
    root = _walk(tree, tree.root, fn, memo)
    return np.stack([memo[i] for i in range(len(tree))]), root


def tree_lstm(tree, x, w, arity, variant):
    """Returns per-node h (n, u) and root h; w: kernel, recurrent_kernel, bias."""
    u = w["bias"].shape[0] // 4
    kern, rec, bias = w["kernel"], w["recurrent_kernel"], w["bias"]

    def fn(node, kids):
        z = x[node] @ kern + bias
        zi, zf, zg, zo = z[:u], z[u : 2 * u], z[2 * u : 3 * u], z[3 * u :]
        hs = [h for h, _ in kids]
        cs = [c for _, c in kids]
        if variant == "n_ary":
            hcat = np.zeros(arity * u)
            for j, h in enumerate(hs):
                hcat[j * u : (j + 1) * u] = h
            a = hcat @ rec
            i = sigmoid(zi + a[:u])
            fs = [sigmoid(zf + a[(1 + j) * u : (2 + j) * u]) for j in range(len(cs))]
            g = np.tanh(zg + a[(arity + 1) * u : (arity + 2) * u])
            o = sigmoid(zo + a[(arity + 2) * u :])
        else:
            hsum = np.sum(hs, axis=0) if hs else np.zeros(u)
            a = hsum @ rec
            i = sigmoid(zi + a[:u])
            fs = [sigmoid(zf + h @ rec[:, u : 2 * u]) for h in hs]
            g = np.tanh(zg + a[2 * u : 3 * u])
            o = sigmoid(zo + a[3 * u :])
        c = i * g + sum((f * ck for f, ck in zip(fs, cs)), np.zeros(u))
        return o * np.tanh(c), c

    memo = {}
    root = _walk(tree, tree.root, fn, memo)
    return np.stack([memo[i][0] for i in range(len(tree))]), root[0]


def run_reference(kind, tree, x, weights, arity):
    if kind == "RecursiveNN":
        return recursive_nn(tree, x, weights, arity)
    if kind == "RNTN":
        return rntn(tree, x, weights, arity)
    if kind == "TreeLSTM":
        return tree_lstm(tree, x, weights, arity, "n_ary")
    if kind == "TreeLSTM_child_sum":
        return tree_lstm(tree, x, weights, arity, "child_sum")
    raise ValueError(kind)
