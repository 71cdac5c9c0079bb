"""In-graph string encoding and the SavedModel export (TensorFlow only)."""

import os

import keras
import numpy as np
import pytest

from keras_seqmodels import trees as T
from keras_seqmodels.trees import TreeLSTM

pytestmark = pytest.mark.tf_only

# Short trees written for these tests (SST bracket format, labels 0-4).
TREES = [
    "(4 (2 The) (4 (4 (2 film) (4 (3 is) (4 wonderful))) (2 .)))",
    "(0 (2 A) (0 (0 (2 dull) (1 (2 ,) (0 awful))) (2 mess)))",
    "(2 (2 It) (2 (2 8 1\\/2) (2 minutes)))",
    "(3 x)",
]


def test_tf_encode_strings_matches_python_encode():
    import tensorflow as tf

    from keras_seqmodels.trees.serving import tf_encode_strings

    tokens, children, levels = tf_encode_strings(tf.constant(TREES))
    ref = T.encode([T.lower_tokens(T.parse_ptb(s)) for s in TREES], arity=2)
    np.testing.assert_array_equal(children.numpy(), ref["children"])
    np.testing.assert_array_equal(levels.numpy(), ref["levels"])
    assert [[t.decode() for t in row] for row in tokens.numpy()] == ref["tokens"].tolist()


@pytest.mark.parametrize(
    "text, message",
    [
        ("(1 (2 a) (3 b)", "unbalanced"),
        ("(1 (2 a)))", "unbalanced"),
        ("(1 (2) (3 b))", "missing child"),
        ("(1 (2 a) (3 b) (4 c))", "more than two children"),
    ],
)
def test_tf_encode_strings_errors(text, message):
    import tensorflow as tf

    from keras_seqmodels.trees.serving import tf_encode_strings

    with pytest.raises(tf.errors.InvalidArgumentError, match=message):
        tf_encode_strings(tf.constant([text, "(1 x)"]))


def tiny_classifier():
    tokens = keras.Input((None,), dtype="string")
    children = keras.Input((None, 2), dtype="int32")
    levels = keras.Input((None,), dtype="int32")
    ids = keras.layers.StringLookup(vocabulary=["", "film", "wonderful", "dull"],
                                    mask_token=None)(tokens)
    x = keras.layers.Embedding(5, 4)(ids)
    nodes, _ = TreeLSTM(4)([x, children, levels])
    return keras.Model([tokens, children, levels], keras.layers.Dense(5)(nodes))


def test_savedmodel_takes_strings_and_returns_root_class(tmp_path):
    import tensorflow as tf

    from keras_seqmodels.export.trees import export_sentiment_savedmodel
    from keras_seqmodels.trees.serving import root_probabilities

    keras.utils.set_random_seed(0)
    model = tiny_classifier()
    path = export_sentiment_savedmodel(model, os.path.join(tmp_path, "sm"))
    served = tf.saved_model.load(path).signatures["serving_default"]
    out = served(trees=tf.constant(TREES))
    probs = root_probabilities(model, TREES)
    np.testing.assert_allclose(out["root_probabilities"].numpy(), probs, atol=1e-5)
    np.testing.assert_array_equal(out["root_class"].numpy(), probs.argmax(1))
    assert out["root_class"].dtype == tf.int32


def test_tf_parse_trees_marks_malformed_trees_and_keeps_the_others():
    import tensorflow as tf

    from keras_seqmodels.trees.serving import PARSE_ERRORS, tf_parse_trees

    bad = {
        "": 1, " \t\n": 1, "a wonderful film": 2, "x (1 a)": 2, "(1 (2 a) (3 b)": 3,
        "(1 (2 a)))": 3, "(1 a) (2 b)": 4, "(1 (2) (3 b))": 5, "(1 (2 a) (3 b) (4 c))": 6,
    }
    strings = [s for pair in zip(bad, TREES + TREES) for s in pair]
    out = tf_parse_trees(tf.constant(strings))
    errors = [e.decode() for e in out["error"].numpy()]
    good = [i for i, s in enumerate(strings) if s not in bad]
    assert errors == [PARSE_ERRORS[bad[s]] if s in bad else "" for s in strings]
    ref = T.encode([T.lower_tokens(T.parse_ptb(strings[i])) for i in good], arity=2)
    n = ref["levels"].shape[1]
    np.testing.assert_array_equal(out["children"].numpy()[good][:, :n], ref["children"])
    np.testing.assert_array_equal(out["levels"].numpy()[good][:, :n], ref["levels"])
    bad_rows = [i for i in range(len(strings)) if i not in good]
    assert (out["levels"].numpy()[bad_rows] == -1).all()
    assert out["levels"].shape[1] == n  # padded to the largest well-formed tree
    empty = tf_parse_trees(tf.zeros([0], tf.string))
    assert empty["levels"].shape == (0, 0) and empty["error"].shape == (0,)


def test_tf_parse_trees_limits_name_the_limit():
    import tensorflow as tf

    from keras_seqmodels.trees.serving import SERVING_LIMITS, tf_parse_trees

    limits = {**SERVING_LIMITS, "max_batch": 2, "max_depth": 4, "max_nodes": 5}
    cases = [
        (["(1 a)"] * 3, "at most 2 trees per request"),
        (["(1 " * 5 + "x" + ")" * 5], "at most 4 levels of brackets per tree"),
        (["(1 (1 (1 a) (1 b)) (1 (1 c) (1 d)))"], "at most 5 nodes per tree"),
    ]
    for strings, message in cases:
        with pytest.raises(tf.errors.InvalidArgumentError, match=message):
            tf_parse_trees(tf.constant(strings), limits=limits, model_name="m")
    out = tf_parse_trees(tf.constant(["(1 (1 a) (1 b))"]), limits=limits)
    assert out["levels"].numpy().tolist() == [[1, 0, 0]]
