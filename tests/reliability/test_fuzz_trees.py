"""Property suite for the tree layers: RecursiveNN, RNTN, TreeLSTM (both variants).

Random valid trees (random dependency heads, 1-7 nodes, batches of 1-3
trees, arity up to one more than needed, padding nodes) must give finite
node and root states equal, tree by tree, to the NumPy reference that walks
each tree recursively (``tests/trees/tree_reference.py``), with padding nodes
zero. Invalid cases must raise a clear error: corrupt dependency heads
(out of range, self-head, no or two roots) from ``trees.from_heads``; encoded
trees with a child index out of range, a child not below its parent, or two
roots from the layer itself, naming it and ``children``/``levels``; and
wrong ranks or dtypes of ``x``/``children``, naming the argument.
"""

import os
import sys

import numpy as np
import pytest
from fuzz_record import fuzz_settings, record
from hypothesis import given
from hypothesis import strategies as st
from keras import ops

from keras_seqmodels import trees as T

sys.path.insert(
    0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "trees")
)
from test_tree_layers import ATOL, DTYPE, LAYERS, make, numpy_weights, x_dim  # noqa: E402
from tree_reference import run_reference  # noqa: E402

HEAD_FAULTS = ("head_out_of_range", "self_head", "no_root", "two_roots")
ENCODED_FAULTS = ("child_out_of_range", "child_not_below", "two_highest")
INPUT_FAULTS = ("x_rank", "x_int", "children_float")


@st.composite
def cases(draw):
    # A third of the cases valid, the others one fault each.
    fault = draw(st.sampled_from((None,) * 5 + HEAD_FAULTS + ENCODED_FAULTS + INPUT_FAULTS))
    sizes = draw(st.lists(st.integers(1, 7), min_size=1, max_size=3))
    return dict(
        fault=fault,
        sizes=sizes,
        extra_arity=draw(st.integers(0, 1)),
        extra_nodes=draw(st.integers(0, 2)),
        units=draw(st.sampled_from([2, 3])),
        seed=draw(st.integers(0, 2**16)),
    )


def random_heads(n, rng):
    """1-based heads of a random tree over n tokens (0 marks the root)."""
    order = rng.permutation(n)
    heads = [0] * n
    for pos in range(1, n):
        heads[order[pos]] = int(order[rng.integers(0, pos)]) + 1
    return heads


def corrupt_heads(heads, fault, rng):
    heads = list(heads)
    n = len(heads)
    i = int(rng.integers(0, n))
    if fault == "head_out_of_range":
        heads[i] = n + 1 + int(rng.integers(0, 3))
    elif fault == "self_head":
        heads[i] = i + 1
    elif fault == "no_root":
        heads[heads.index(0)] = (heads.index(0) + 1) % n + 1 if n > 1 else n + 1
    else:  # two roots
        heads[i] = 0
        if heads.count(0) == 1:
            heads.append(0)
    return heads


def corrupt_encoding(children, levels, sizes, fault, rng):
    children, levels = children.copy(), levels.copy()
    row = int(rng.integers(0, len(sizes)))
    n = children.shape[1]
    size = sizes[row]
    if fault == "child_out_of_range":
        node = int(rng.integers(0, size))
        children[row, node, 0] = n + int(rng.integers(0, 3))
    elif fault == "child_not_below":
        parents = np.flatnonzero(children[row, :size, 0] >= 0)
        if len(parents):
            p = int(parents[0])
            levels[row, children[row, p, 0]] = levels[row, p]
        else:  # a one-node tree: give the root itself as its child
            children[row, 0, 0] = 0
    else:  # two nodes at the highest level
        if size == 1:
            levels[row, 0] = -1  # the tree's only node becomes padding,
            children[row, 0, 0] = 0  # with a child: not a tree
        else:
            leaf = int(np.flatnonzero(children[row, :size, 0] < 0)[0])
            levels[row, leaf] = levels[row].max()
    return children, levels


@pytest.mark.parametrize("key", list(LAYERS))
def test_random_trees_match_the_recursive_reference(key):
    @fuzz_settings(8)
    @given(case=cases())
    def check(case):
        rng = np.random.default_rng(case["seed"])
        fault = case["fault"]
        heads = [random_heads(n, rng) for n in case["sizes"]]
        if fault in HEAD_FAULTS:
            bad = corrupt_heads(heads[0], fault, rng)
            with pytest.raises(T.TreeError) as info:
                T.from_heads(bad)
            assert str(info.value).startswith("from_heads:"), str(info.value)
            record(f"fuzz/trees {key}", "clear error")
            return
        trees = [T.from_heads(h) for h in heads]
        arity = max(t.max_arity for t in trees) + case["extra_arity"]
        nodes_n = max(case["sizes"]) + case["extra_nodes"]
        batch = T.encode(trees, arity=arity, max_nodes=nodes_n)
        children, levels = batch["children"], batch["levels"]
        arity = children.shape[-1]
        d = x_dim(key, case["units"])
        x = rng.standard_normal(levels.shape + (d,)).astype(DTYPE)
        layer = make(key, case["units"], d, arity, seed=case["seed"])
        name = type(layer).__name__
        if fault is not None:
            if fault in ENCODED_FAULTS:
                children, levels = corrupt_encoding(children, levels, case["sizes"], fault, rng)
                args, expected = [x, children, levels], "`children`/`levels`"
            elif fault == "x_rank":
                args, expected = [x[0], children, levels], "`x`"
            elif fault == "x_int":
                args, expected = [(x > 0).astype("int32"), children, levels], "`x`"
            else:
                args, expected = [x, children.astype("float32"), levels], "`children`"
            with pytest.raises((ValueError, TypeError)) as info:
                layer(args)
            message = str(info.value)
            assert name in message and expected in message, message
            record(f"fuzz/trees {key}", "clear error")
            return
        nodes, root = (ops.convert_to_numpy(t) for t in layer([x, children, levels]))
        assert np.all(np.isfinite(nodes)) and np.all(np.isfinite(root))
        w = numpy_weights(layer)
        for i, tree in enumerate(trees):
            ref_nodes, ref_root = run_reference(
                key, tree, x[i, : len(tree)].astype("float64"), w, arity
            )
            np.testing.assert_allclose(nodes[i, : len(tree)], ref_nodes, atol=ATOL)
            np.testing.assert_allclose(root[i], ref_root, atol=ATOL)
            np.testing.assert_array_equal(nodes[i, len(tree) :], 0.0)
        record(f"fuzz/trees {key}", "matches reference")

    check()
