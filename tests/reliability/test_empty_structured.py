"""Structured layers on empty batches and zero-size inputs (TensorFlow and JAX).

The sequence layers return empty results for an empty batch or zero steps;
the tree layers (RecursiveNN, RNTN, TreeLSTM), NTM, MemoryNetwork, CRF and
FourDirectional2D must do the same: the documented output shape with a zero
in it, no "max of an empty tensor", no division by zero in a reshape. A tree
of zero nodes beside real trees gives a root of zeros and leaves the other
trees' results unchanged. Each case runs eagerly and inside a compiled
``predict`` with the batch and node counts unknown until run time.
"""

import keras
import numpy as np
import pytest
from fuzz_record import record
from keras import ops

import keras_seqmodels as ks
from keras_seqmodels import trees as T

TREE_LAYERS = {
    "RecursiveNN": lambda: ks.trees.RecursiveNN(4),
    "RNTN": lambda: ks.trees.RNTN(4),
    "TreeLSTM": lambda: ks.trees.TreeLSTM(4),
    "TreeLSTM child-sum": lambda: ks.trees.TreeLSTM(4, variant="child_sum"),
}
EMPTY_TREES = [(0, 3), (2, 0), (0, 0)]  # (batch, nodes)


def _tree_inputs(b, n):
    return (
        np.zeros((b, n, 4), "float32"),
        np.full((b, n, 2), -1, "int32"),
        np.full((b, n), -1, "int32"),
    )


def _tree_model(layer):
    x = keras.Input((None, 4))
    children = keras.Input((None, 2), dtype="int32")
    levels = keras.Input((None,), dtype="int32")
    return keras.Model([x, children, levels], layer([x, children, levels]))


@pytest.mark.parametrize("name", sorted(TREE_LAYERS))
@pytest.mark.parametrize("b, n", EMPTY_TREES)
def test_tree_layers_return_empty_results(name, b, n):
    for mode in ("eager", "predict"):
        layer = TREE_LAYERS[name]()
        inputs = _tree_inputs(b, n)
        if mode == "eager":
            nodes, root = layer(list(inputs))
        else:
            nodes, root = _tree_model(layer).predict_on_batch(list(inputs))
        assert tuple(nodes.shape) == (b, n, 4), (mode, nodes.shape)
        assert tuple(root.shape) == (b, 4), (mode, root.shape)
        np.testing.assert_array_equal(ops.convert_to_numpy(root), 0.0)
        record("empty/tree layers", "empty result")


@pytest.mark.parametrize("name", sorted(TREE_LAYERS))
def test_a_tree_of_zero_nodes_beside_real_trees(name):
    keras.utils.set_random_seed(0)
    layer = TREE_LAYERS[name]()
    tree = T.from_heads([2, 0, 2, 3])  # 4 nodes, root 1
    real = T.encode([tree], arity=2)
    x = np.random.default_rng(0).normal(size=(1, 4, 4)).astype("float32")
    alone_nodes, alone_root = (ops.convert_to_numpy(t) for t in layer(
        [x, real["children"], real["levels"]]))
    # The same tree between two rows of padding only (trees of zero nodes).
    xs = np.concatenate([np.zeros_like(x), x, np.zeros_like(x)])
    children = np.concatenate([np.full_like(real["children"], -1), real["children"],
                               np.full_like(real["children"], -1)])
    levels = np.concatenate([np.full_like(real["levels"], -1), real["levels"],
                             np.full_like(real["levels"], -1)])
    for nodes, root in (layer([xs, children, levels]),
                        _tree_model(layer).predict_on_batch([xs, children, levels])):
        nodes, root = ops.convert_to_numpy(nodes), ops.convert_to_numpy(root)
        np.testing.assert_allclose(nodes[1:2], alone_nodes, atol=1e-6)
        np.testing.assert_allclose(root[1:2], alone_root, atol=1e-6)
        np.testing.assert_array_equal(root[[0, 2]], 0.0)
        np.testing.assert_array_equal(nodes[[0, 2]], 0.0)
    record("empty/tree layers", "zero-node rows beside real trees")


def test_tree_layers_mixed_deep_and_wide_trees_equal_each_tree_alone():
    # A deep chain and a wide tree in one batch: the windows are narrower
    # than the widest level (bounded work), the results must not change.
    keras.utils.set_random_seed(1)
    chain = T.from_heads([0] + list(range(1, 12)))  # 12 nodes, height 11
    wide = T.from_heads([0] + [1] * 15)  # a root with 15 leaves
    layer = ks.trees.TreeLSTM(3, variant="child_sum")
    rng = np.random.default_rng(1)
    batch = T.encode([chain, wide], arity=15)
    x = rng.normal(size=batch["levels"].shape + (5,)).astype("float32")
    nodes, root = (ops.convert_to_numpy(t) for t in layer(
        [x, batch["children"], batch["levels"]]))
    for i, tree in enumerate((chain, wide)):
        one = T.encode([tree], arity=15)
        n = one["levels"].shape[1]
        alone_nodes, alone_root = (ops.convert_to_numpy(t) for t in layer(
            [x[i : i + 1, :n], one["children"], one["levels"]]))
        np.testing.assert_allclose(nodes[i : i + 1, :n], alone_nodes, atol=1e-5)
        np.testing.assert_allclose(root[i : i + 1], alone_root, atol=1e-5)
    record("empty/tree layers", "deep and wide trees in one batch")


STRUCTURED = {
    # name: (layer factory, input maker(batch, size), expected output shape)
    "NTM": (
        lambda: ks.memory.NTM(4, memory_size=5, memory_width=3, return_sequences=True),
        lambda b, t: np.zeros((b, t, 3), "float32"),
        lambda b, t: (b, t, 7),
    ),
    "CRF": (
        lambda: ks.tagging.CRF(3),
        lambda b, t: np.zeros((b, t, 3), "float32"),
        lambda b, t: (b, t),
    ),
    "MemoryNetwork": (
        lambda: ks.memory.MemoryNetwork(9, 4, 4),
        lambda b, t: [np.zeros((b, t, 4), "int32"), np.ones((b, 3), "int32")],
        lambda b, t: (b, 9),
    ),
    "FourDirectional2D": (
        lambda: ks.layers.FourDirectional2D(ks.cells.GRUCell(2)),
        lambda b, t: np.zeros((b, t, 3, 2), "float32"),
        lambda b, t: (b, t, 3, 4),
    ),
    "FourDirectional2D patches": (
        lambda: ks.layers.FourDirectional2D(ks.cells.GRUCell(2), patch_size=2),
        lambda b, t: np.zeros((b, 4, t, 2), "float32"),
        lambda b, t: (b, 2, (t + 1) // 2, 4),
    ),
}


@pytest.mark.parametrize("name", sorted(STRUCTURED))
@pytest.mark.parametrize("b, t", [(0, 3), (2, 0), (0, 0)])
def test_structured_layers_return_empty_results(name, b, t):
    make_layer, make_inputs, expected = STRUCTURED[name]
    out = make_layer()(make_inputs(b, t))
    out = keras.tree.flatten(out)[0]
    assert tuple(out.shape) == expected(b, t), out.shape
    assert np.all(np.isfinite(ops.convert_to_numpy(out)))
    record("empty/structured layers", "empty result")


def test_a_cell_class_where_an_instance_is_expected_is_a_clear_error():
    for make, names in (
        (lambda: ks.layers.FourDirectional2D(ks.cells.GRUCell), ("FourDirectional2D", "cell")),
        (lambda: ks.layers.Bidirectional(ks.cells.GRUCell), ("Bidirectional", "layer")),
    ):
        with pytest.raises(ValueError) as info:
            make()
        for name in names:
            assert name in str(info.value)
        record("empty/structured layers", "cell class: clear error")
