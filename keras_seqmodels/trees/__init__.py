"""Recursive networks over trees: the layers and their tree inputs.

The layers apply one shared composition function over every tree of a batch,
all nodes of one depth level at once: ``RecursiveNN`` (Pollack; Socher et
al. 2011), ``RNTN`` (Socher et al. 2013) and ``TreeLSTM`` (Tai et al. 2015,
N-ary and child-sum).

Parse Penn-Treebank bracketed strings (``parse_ptb``, the Stanford Sentiment
Treebank format), build a balanced binary tree over any sequence
(``balanced_tree``), take trees from an external parser (``from_heads``,
``from_nested``, or ``Tree`` directly), and encode a batch of trees into the
padded tensors the layers consume (``encode``; ``tree_dataset`` for
``tf.data``). Malformed trees raise ``TreeError``.

Your own labelled trees to a classifier: ``train_tree_classifier`` reads a
file of bracketed trees, trains a Tree-LSTM (``build_tree_network``) and
returns a ``TreeClassifier`` (per-node logits plus its label set), which
``keras_seqmodels.export.trees.export_sentiment_savedmodel`` exports.
"""

from keras_seqmodels.trees.balanced import balanced_tree
from keras_seqmodels.trees.dataset import tree_dataset
from keras_seqmodels.trees.encoding import (
    Vocabulary,
    check_encoding,
    encode,
    encode_tree,
)
from keras_seqmodels.trees.network import build_tree_network, build_vocabulary
from keras_seqmodels.trees.ptb import parse_ptb, read_ptb_file
from keras_seqmodels.trees.recursive_nn import RecursiveNN
from keras_seqmodels.trees.rntn import RNTN
from keras_seqmodels.trees.root_accuracy import RootAccuracy
from keras_seqmodels.trees.training import read_labelled_trees
from keras_seqmodels.trees.tree import (
    Tree,
    TreeError,
    from_heads,
    from_nested,
    lower_tokens,
)
from keras_seqmodels.trees.tree_classifier import TreeClassifier, train_tree_classifier
from keras_seqmodels.trees.tree_lstm import TreeLSTM

__all__ = [
    "RNTN",
    "RecursiveNN",
    "RootAccuracy",
    "Tree",
    "TreeClassifier",
    "TreeError",
    "TreeLSTM",
    "Vocabulary",
    "balanced_tree",
    "build_tree_network",
    "build_vocabulary",
    "check_encoding",
    "encode",
    "encode_tree",
    "from_heads",
    "from_nested",
    "lower_tokens",
    "parse_ptb",
    "read_labelled_trees",
    "read_ptb_file",
    "train_tree_classifier",
    "tree_dataset",
]
