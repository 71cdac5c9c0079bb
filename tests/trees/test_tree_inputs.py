import math

import numpy as np
import pytest

from keras_seqmodels import trees as T


def test_parse_sst_tree_labels_tokens_structure():
    t = T.parse_ptb("(3 (2 It) (4 (3 (2 is) (4 good)) (2 .)))")
    # Pre-order numbering: root 0, then left to right.
    assert t.root == 0
    assert t.labels == [3, 2, 4, 3, 2, 4, 2]
    assert t.tokens == [None, "It", None, None, "is", "good", "."]
    assert t.children == [(1, 2), (), (3, 6), (4, 5), (), (), ()]
    assert t.heights().tolist() == [3, 0, 2, 1, 0, 0, 0]
    assert [t.tokens[i] for i in t.leaves] == ["It", "is", "good", "."]
    assert t.to_string() == "(3 (2 It) (4 (3 (2 is) (4 good)) (2 .)))"


def test_parse_multiword_leaf_and_unlabelled_nodes():
    t = T.parse_ptb("(2 (2 8 1\\/2) (1 x))")
    assert t.tokens[1] == "8 1\\/2"
    u = T.parse_ptb("((NN x) (VB y))")
    assert u.labels == [None, "NN", "VB"]
    assert u.tokens == [None, "x", "y"]


@pytest.mark.parametrize(
    "text, message",
    [
        ("(1 (2 a) (3 b)", "not closed"),
        ("(1 (2 a) (3 b)))", "after the closing bracket"),
        (")", "closes no open bracket"),
        ("(1 (2) (3 b))", "missing child"),
        ("(1 () (3 b))", "missing child"),
        ("(1 (2 a) b)", "follows sub-trees"),
        ("word (1 a)", "outside brackets"),
        ("", "no tree"),
    ],
)
def test_parse_errors_are_clear(text, message):
    with pytest.raises(T.TreeError, match=message):
        T.parse_ptb(text)


@pytest.mark.parametrize("length", list(range(1, 70)) + [127, 128, 129, 1000])
def test_balanced_tree_depth_is_ceil_log2(length):
    t = T.balanced_tree(length, tokens=[str(i) for i in range(length)])
    assert t.depth() == math.ceil(math.log2(length))
    assert [t.tokens[i] for i in t.leaves] == [str(i) for i in range(length)]
    assert all(len(c) in (0, 2) for c in t.children)
    assert len(t) == 2 * length - 1


def test_balanced_tree_rejects_bad_length():
    with pytest.raises(T.TreeError, match="positive integer"):
        T.balanced_tree(0)
    with pytest.raises(T.TreeError, match="entries"):
        T.balanced_tree(3, tokens=["a"])


def test_external_parsers_heads_and_nested():
    # "She eats red apples": eats is the root; she and apples depend on it.
    t = T.from_heads([2, 0, 4, 2], tokens=["She", "eats", "red", "apples"])
    assert t.root == 1
    assert t.children == [(), (0, 3), (), (2,)]
    assert t.heights().tolist() == [0, 2, 0, 1]
    n = T.from_nested([["a", "b"], "c"])
    assert n.to_string() == "((a b) c)"
    assert n.children == [(1, 4), (2, 3), (), (), ()]
    assert n.tokens == [None, None, "a", "b", "c"]


@pytest.mark.parametrize(
    "children, message",
    [
        ([[1], [0]], "cycle"),
        ([[1, 2], [], [3], [2]], "two parents"),
        ([[1], [1]], "cycle"),
        ([[1, 5], []], "out of range"),
        ([[1, None], []], "missing child"),
        ([[], []], "several roots"),
        ([[1], [], [3], [2]], "two parents|several roots|cycle"),
        ([[1], [], [3], [4], [2]], "cycle"),
    ],
)
def test_tree_structure_errors(children, message):
    with pytest.raises(T.TreeError, match=message):
        T.Tree(children)


@pytest.mark.parametrize(
    "heads, message",
    [([2, 1], "exactly one"), ([0, 3, 0], "exactly one|out of range|own head"),
     ([0, 5], "out of range"), ([0, 2], "own head")],
)
def test_from_heads_errors(heads, message):
    with pytest.raises(T.TreeError, match=message):
        T.from_heads(heads)


def test_from_nested_empty_list_is_missing_child():
    with pytest.raises(T.TreeError, match="missing child"):
        T.from_nested([["a", []], "b"])


def test_encode_pads_and_numbers_within_each_tree():
    a = T.parse_ptb("(1 (2 x) (3 y))")
    b = T.from_heads([0, 1, 1, 1], tokens=list("pqrs"))
    batch = T.encode([a, b])
    assert batch["children"].shape == (2, 4, 3)
    np.testing.assert_array_equal(
        batch["children"][0], [[1, 2, -1], [-1, -1, -1], [-1, -1, -1], [-1, -1, -1]]
    )
    np.testing.assert_array_equal(batch["children"][1, 0], [1, 2, 3])
    np.testing.assert_array_equal(batch["levels"], [[1, 0, 0, -1], [1, 0, 0, 0]])
    np.testing.assert_array_equal(batch["labels"], [[1, 2, 3, -1], [-1] * 4])
    assert batch["tokens"][0].tolist() == ["", "x", "y", ""]
    np.testing.assert_array_equal(batch["roots"], [0, 0])
    np.testing.assert_array_equal(batch["num_nodes"], [3, 4])
    T.check_encoding(batch["children"], batch["levels"])


def test_encode_with_vocabulary_and_arity_errors():
    trees = [T.parse_ptb("(1 (2 x) (3 y))"), T.parse_ptb("(1 (2 x) (3 z))")]
    vocab = T.Vocabulary.from_trees(trees, min_count=2)
    assert vocab.words == ["x"]
    batch = T.encode(trees, vocab=vocab)
    np.testing.assert_array_equal(batch["tokens"], [[0, 2, 1], [0, 2, 1]])
    with pytest.raises(T.TreeError, match="arity"):
        T.encode([T.from_heads([0, 1, 1, 1])], arity=2)
    with pytest.raises(T.TreeError, match="max_nodes"):
        T.encode(trees, max_nodes=2)


def test_check_encoding_catches_silent_errors():
    batch = T.encode([T.balanced_tree(3)])
    children, levels = batch["children"], batch["levels"]
    bad = children.copy()
    bad[0, 3, 0] = 7
    with pytest.raises(T.TreeError, match="out of range"):
        T.check_encoding(bad, levels)
    cyc = children.copy()
    cyc[0, 0, 0] = 4  # a leaf pointing at the root: a cycle
    with pytest.raises(T.TreeError, match="not below"):
        T.check_encoding(cyc, levels)
    lv = levels.copy()
    lv[0, 4] = lv[0, 3]
    with pytest.raises(T.TreeError, match="not below|unique"):
        T.check_encoding(children, lv)


@pytest.mark.tf_only
def test_tree_dataset_pads_batches():
    trees = [T.parse_ptb("(1 (2 x) (3 y))"), T.parse_ptb("(4 z)"),
             T.balanced_tree(4, tokens=list("abcd"))]
    ds = T.tree_dataset(trees, batch_size=3)
    (tokens, children, levels), labels = next(iter(ds))
    assert tokens.shape == (3, 7) and children.shape == (3, 7, 2)
    assert tokens.numpy()[1].tolist() == [b"z"] + [b""] * 6
    np.testing.assert_array_equal(levels.numpy()[1], [0] + [-1] * 6)
    np.testing.assert_array_equal(labels.numpy()[0], [1, 2, 3, -1, -1, -1, -1])
    np.testing.assert_array_equal(levels.numpy()[2], [0, 0, 0, 0, 1, 1, 2])
