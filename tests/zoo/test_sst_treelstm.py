"""The shipped sst-treelstm artifact: contract and predictions on our own trees.

The trees below were written for this test (SST bracket format); none comes
from the Stanford Sentiment Treebank, which has no stated license.
"""

import numpy as np
import pytest

from keras_seqmodels import zoo

pytestmark = pytest.mark.skipif(
    "sst-treelstm" not in zoo.list_models(),
    reason="sst-treelstm is not registered in the zoo yet (see zoo/sst-treelstm/card.md)",
)

# (tree, polarity): 1 positive, 0 negative.
SAMPLE = [
    ("(4 (2 a) (4 (4 wonderful) (2 film)))", 1),
    ("(4 (2 the) (4 (2 best) (2 movie)))", 1),
    ("(3 (2 it) (3 (2 is) (3 (3 funny) (2 (2 and) (3 moving)))))", 1),
    ("(4 (2 a) (4 (4 (4 beautiful) (3 ,)) (4 (3 touching) (2 story))))", 1),
    ("(0 (2 a) (0 (0 boring) (2 mess)))", 0),
    ("(0 (2 the) (0 (1 worst) (2 movie)))", 0),
    ("(1 (2 it) (1 (2 is) (1 (1 dull) (2 (2 and) (1 stupid)))))", 0),
    ("(0 (2 a) (0 (0 (0 terrible) (2 ,)) (1 (1 pointless) (2 film))))", 0),
]


@pytest.fixture(scope="module")
def model():
    return zoo.load("sst-treelstm").model


def test_index_entry_records_the_card():
    entry = zoo.info("sst-treelstm")
    assert entry["card"] == "zoo/sst-treelstm/card.md"
    assert "evaluate sst-treelstm" in entry["command"]
    assert 0.2 < entry["metrics"]["test_fine_grained_accuracy"] <= 1.0
    assert 0.5 < entry["metrics"]["test_binary_accuracy"] <= 1.0


def test_predicts_polarity_of_our_own_trees(model):
    from keras_seqmodels.trees.serving import root_probabilities

    probs = root_probabilities(model, [t for t, _ in SAMPLE])
    assert probs.shape == (len(SAMPLE), 5)
    np.testing.assert_allclose(probs.sum(1), 1.0, atol=1e-5)
    positive = probs[:, 3:].sum(1) > probs[:, :2].sum(1)
    gold = np.array([p for _, p in SAMPLE], bool)
    # An untrained model scores about half of these; the trained one nearly all.
    assert np.mean(positive == gold) >= 0.75, (positive, gold)


@pytest.mark.tf_only
def test_savedmodel_serves_strings(model, tmp_path):
    import tensorflow as tf

    from keras_seqmodels.export.trees import export_sentiment_savedmodel
    from keras_seqmodels.trees.serving import predict_root_classes

    path = export_sentiment_savedmodel(model, str(tmp_path / "sst"))
    served = tf.saved_model.load(path).signatures["serving_default"]
    trees = [t for t, _ in SAMPLE]
    out = served(trees=tf.constant(trees))["root_class"].numpy()
    np.testing.assert_array_equal(out, predict_root_classes(model, trees))
    assert set(out.tolist()) <= set(range(5))
