"""In-graph string encoding and the SavedModel export (TensorFlow only)."""

import os

import keras
import numpy as np
import pytest

from keras_seqmodels import trees as T
from keras_seqmodels.layers import TreeLSTM

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

    from keras_seqmodels.trees.serving import (
        export_sentiment_savedmodel,
        root_probabilities,
    )

    keras.utils.set_random_seed(0)
    model = tiny_classifier()
    path = export_sentiment_savedmodel(model, os.path.join(tmp_path, "sm"))
    served = tf.saved_model.load(path).signatures["serving_default"]
    out = served(trees=tf.constant(TREES))
    probs = root_probabilities(model, TREES)
    np.testing.assert_allclose(out["root_probabilities"].numpy(), probs, atol=1e-5)
    np.testing.assert_array_equal(out["root_class"].numpy(), probs.argmax(1))
    assert out["root_class"].dtype == tf.int32
