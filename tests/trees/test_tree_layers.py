import keras
import numpy as np
import pytest
from keras import ops
from tree_reference import run_reference

import keras_seqmodels as ks
from keras_seqmodels import trees as T
from keras_seqmodels.testing import compute_gradients, run_layer_test

# Keras promotes float64 to float32 inside some ops on JAX, so the exact
# float64 comparison runs on TensorFlow and a float32 one elsewhere.
F64 = keras.backend.backend() == "tensorflow"
DTYPE = "float64" if F64 else "float32"
ATOL = 1e-10 if F64 else 2e-5
# Every batch below is padded to N_PAD nodes: on JAX each new input shape
# compiles the layer's ops again, so shared shapes keep these tests fast (and
# padding nodes, with arbitrary x, must not change the results).
N_PAD = 16

LAYERS = {
    "RecursiveNN": lambda u, **kw: ks.trees.RecursiveNN(u, **kw),
    "RNTN": lambda u, **kw: ks.trees.RNTN(u, **kw),
    "TreeLSTM": lambda u, **kw: ks.trees.TreeLSTM(u, **kw),
    "TreeLSTM_child_sum": lambda u, **kw: ks.trees.TreeLSTM(
        u, variant="child_sum", **kw
    ),
}


def mixed_trees():
    """Trees of different shapes and sizes, arity up to 3."""
    return [
        T.parse_ptb("(3 (2 good) (4 (1 not) (2 (2 bad) (3 fun))))"),
        T.balanced_tree(6),
        T.from_heads([2, 0, 2, 3, 2]),
        T.from_nested([["a", ["b", "c", "d"]], "e", ["f"]]),
        T.parse_ptb("(1 x)"),
    ]


def make(key, units, x_dim, arity, seed=0, dtype=DTYPE):
    layer = LAYERS[key](units, dtype=dtype)
    layer.build([(None, None, x_dim), (None, None, arity), (None, None)])
    rng = np.random.default_rng(seed)
    for v in layer.weights:
        v.assign(rng.uniform(-0.6, 0.6, v.shape).astype(v.dtype))
    return layer


def numpy_weights(layer):
    return {v.path.split("/")[-1]: ops.convert_to_numpy(v).astype("float64")
            for v in layer.weights}


def x_dim(key, units):
    return units if key in ("RecursiveNN", "RNTN") else 3


@pytest.mark.parametrize("key", list(LAYERS))
def test_forward_matches_recursive_numpy_walk(key):
    trees = mixed_trees()
    batch = T.encode(trees, max_nodes=N_PAD)
    arity = batch["children"].shape[-1]
    d = x_dim(key, 4)
    x = np.random.default_rng(1).standard_normal(batch["levels"].shape + (d,))
    layer = make(key, 4, d, arity)
    nodes, root = layer([x.astype(DTYPE), batch["children"], batch["levels"]])
    nodes, root = ops.convert_to_numpy(nodes), ops.convert_to_numpy(root)
    w = numpy_weights(layer)
    for i, tree in enumerate(trees):
        ref_nodes, ref_root = run_reference(key, tree, x[i, : len(tree)], w, arity)
        np.testing.assert_allclose(nodes[i, : len(tree)], ref_nodes, atol=ATOL)
        np.testing.assert_allclose(root[i], ref_root, atol=ATOL)
        # Padding nodes stay zero.
        np.testing.assert_array_equal(nodes[i, len(tree):], 0.0)


@pytest.mark.parametrize("key", list(LAYERS))
def test_batched_equals_one_tree_at_a_time(key):
    # Three trees of different shapes, sizes and arities; alone, each is
    # padded to the same N_PAD nodes (one shape: one JAX compilation).
    trees = [mixed_trees()[i] for i in (0, 2, 3)]
    batch = T.encode(trees, arity=3, max_nodes=N_PAD)
    d = x_dim(key, 3)
    x = np.random.default_rng(2).standard_normal(batch["levels"].shape + (d,))
    x = x.astype(DTYPE)
    layer = make(key, 3, d, 3, seed=4)
    nodes, root = (ops.convert_to_numpy(t) for t in
                   layer([x, batch["children"], batch["levels"]]))
    for i, tree in enumerate(trees):
        one = T.encode([tree], arity=3, max_nodes=N_PAD)
        n1, r1 = (ops.convert_to_numpy(t) for t in
                  layer([x[i : i + 1], one["children"], one["levels"]]))
        np.testing.assert_allclose(nodes[i], n1[0], atol=ATOL)
        np.testing.assert_allclose(root[i], r1[0], atol=ATOL)


@pytest.mark.parametrize("key", list(LAYERS))
def test_gradients_match_finite_differences_of_reference(key):
    trees = [T.parse_ptb("(1 (2 a) (3 (2 b) (4 c)))"), T.balanced_tree(3)]
    batch = T.encode(trees, max_nodes=N_PAD)
    d = x_dim(key, 2)
    rng = np.random.default_rng(3)
    x = rng.standard_normal(batch["levels"].shape + (d,))
    proj = rng.standard_normal(batch["levels"].shape + (2,))
    layer = make(key, 2, d, 2, seed=5)
    xs = x.astype(DTYPE)

    def loss_fn():
        nodes, root = layer([xs, batch["children"], batch["levels"]])
        return ops.sum(nodes * proj) + ops.sum(root)

    grads = compute_gradients(loss_fn, layer.trainable_weights)
    weights = numpy_weights(layer)

    def ref_loss(w):
        total = 0.0
        for i, tree in enumerate(trees):
            n, r = run_reference(key, tree, x[i, : len(tree)], w, 2)
            total += np.sum(n * proj[i, : len(tree)]) + np.sum(r)
        return total

    eps = 1e-6
    for var, grad in zip(layer.trainable_weights, grads):
        name = var.path.split("/")[-1]
        numeric = np.zeros_like(weights[name])
        for idx in np.ndindex(numeric.shape):
            wp = {k: v.copy() for k, v in weights.items()}
            wm = {k: v.copy() for k, v in weights.items()}
            wp[name][idx] += eps
            wm[name][idx] -= eps
            numeric[idx] = (ref_loss(wp) - ref_loss(wm)) / (2 * eps)
        tol = 1e-6 if F64 else 2e-3
        np.testing.assert_allclose(grad, numeric, atol=tol, rtol=tol, err_msg=name)


@pytest.mark.skipif(keras.backend.backend() != "jax",
                    reason="only JAX traces the level loop at each eager call")  # fmt: skip
def test_eager_calls_of_one_shape_trace_the_level_loop_once():
    trees = mixed_trees()
    batch = T.encode(trees, arity=3, max_nodes=N_PAD)
    x = np.random.default_rng(5).standard_normal(batch["levels"].shape + (3,)).astype(DTYPE)
    inputs = [x, batch["children"], batch["levels"]]
    layer = make("TreeLSTM", 4, 3, 3, seed=2)
    compose, traces = layer.compose, []

    def counting_compose(*args):
        traces.append(1)  # Python runs it only while tracing the loop body
        return compose(*args)

    layer.compose = counting_compose
    first = [ops.convert_to_numpy(t) for t in layer(inputs)]
    once = len(traces)
    assert once > 0
    second = [ops.convert_to_numpy(t) for t in layer(inputs)]
    assert len(traces) == once  # same shapes: the compiled loop is reused
    for a, b in zip(first, second):
        np.testing.assert_array_equal(a, b)
    # New weights, same shapes: no retrace, and the new weights are used.
    for v in layer.weights:
        v.assign(np.asarray(v) * 0.5)
    nodes, root = (ops.convert_to_numpy(t) for t in layer(inputs))
    assert len(traces) == once
    w = numpy_weights(layer)
    _, ref_root = run_reference("TreeLSTM", trees[0], x[0, : len(trees[0])], w, 3)
    np.testing.assert_allclose(root[0], ref_root, atol=ATOL)
    # Another shape traces again, once, and is right too.
    bigger = T.encode(trees[:2], arity=3, max_nodes=2 * N_PAD)
    xb = x[:2, :1].repeat(2 * N_PAD, axis=1)
    for _ in range(2):
        _, root_b = layer([xb, bigger["children"], bigger["levels"]])
    assert len(traces) == 2 * once
    _, ref_b = run_reference("TreeLSTM", trees[1], xb[1, : len(trees[1])], w, 3)
    np.testing.assert_allclose(ops.convert_to_numpy(root_b)[1], ref_b, atol=ATOL)


def test_deep_chain_and_wide_batch():
    # A left-branching tree of depth 40 next to many tiny trees.
    nested = "w0"
    for i in range(1, 41):
        nested = [nested, f"w{i}"]
    chain = T.from_nested(nested)
    assert chain.depth() == 40
    trees = [chain] + [T.balanced_tree(2)] * 20
    batch = T.encode(trees)
    x = np.random.default_rng(0).standard_normal(batch["levels"].shape + (3,))
    layer = make("TreeLSTM", 3, 3, 2, seed=1)
    nodes, root = layer([x.astype(DTYPE), batch["children"], batch["levels"]])
    w = numpy_weights(layer)
    for i in (0, 5):
        _, ref_root = run_reference("TreeLSTM", trees[i], x[i, : len(trees[i])], w, 2)
        np.testing.assert_allclose(ops.convert_to_numpy(root)[i], ref_root, atol=ATOL)


def test_golden_constant_weights():
    # Children-sum over a root with two leaves, all weights 0.1, x = 1:
    # leaf: z = 0.1 + 0 = 0.1 per gate input (d=1), c = σ(0.1) tanh(0.1).
    layer = ks.trees.TreeLSTM(
        1, variant="child_sum", kernel_initializer="ones", unit_forget_bias=False,
        recurrent_initializer=keras.initializers.Constant(0.5),
        bias_initializer="zeros", dtype=DTYPE,
    )
    batch = T.encode([T.from_heads([0, 1, 1])])
    x = np.full((1, 3, 1), 0.2, DTYPE)
    nodes, root = layer([x, batch["children"], batch["levels"]])
    s = lambda a: 1 / (1 + np.exp(-a))  # noqa: E731
    c_leaf = s(0.2) * np.tanh(0.2)
    h_leaf = s(0.2) * np.tanh(c_leaf)
    a = 0.2 + 0.5 * 2 * h_leaf
    c_root = s(a) * np.tanh(a) + 2 * s(0.2 + 0.5 * h_leaf) * c_leaf
    h_root = s(a) * np.tanh(c_root)
    np.testing.assert_allclose(ops.convert_to_numpy(root)[0, 0], h_root, atol=ATOL)
    np.testing.assert_allclose(ops.convert_to_numpy(nodes)[0, 1, 0], h_leaf, atol=ATOL)


@pytest.mark.parametrize("key", list(LAYERS))
def test_serialization_fit_and_mixed_precision(key):
    batch = T.encode([T.parse_ptb("(1 (2 a) (3 (2 b) (4 c)))"), T.balanced_tree(2)],
                     max_nodes=N_PAD)
    d = x_dim(key, 4)
    x = np.random.default_rng(0).standard_normal(batch["levels"].shape + (d,))
    run_layer_test(
        lambda: LAYERS[key](4),
        [x.astype("float32"), batch["children"], batch["levels"]],
        expected_output_shape=(2, N_PAD, 4),
        atol=1e-6,
    )


def test_argument_and_input_errors():
    with pytest.raises(ValueError, match="TreeLSTM: `units` must be a positive integer"):
        ks.trees.TreeLSTM(0)
    with pytest.raises(ValueError, match="`variant` must be one of"):
        ks.trees.TreeLSTM(3, variant="binary")
    batch = T.encode([T.balanced_tree(3)])
    with pytest.raises(ValueError, match="RNTN: leaves are their input vectors"):
        ks.trees.RNTN(4)([np.ones((1, 5, 3), "float32"), batch["children"],
                           batch["levels"]])
    with pytest.raises(ValueError, match="expected inputs \\[x, children, levels\\]"):
        ks.trees.TreeLSTM(3)(np.ones((1, 5, 3), "float32"))
    with pytest.raises(ValueError, match="`levels` must have rank 2"):
        ks.trees.TreeLSTM(3)([np.ones((1, 5, 3), "float32"), batch["children"],
                               batch["children"]])
    with pytest.raises(ValueError, match="`x` must be a floating-point tensor"):
        ks.trees.TreeLSTM(3)([np.ones((1, 5, 3), "int32"), batch["children"],
                               batch["levels"]])
