"""Tree inputs for the recursive layers.

Parse Penn-Treebank bracketed strings (``parse_ptb``, the Stanford Sentiment
Treebank format), build a balanced binary tree over any sequence
(``balanced_tree``), take trees from an external parser (``from_heads``,
``from_nested``, or ``Tree`` directly), and encode a batch of trees into the
padded tensors the layers consume (``encode``; ``tree_dataset`` for
``tf.data``). Malformed trees raise ``TreeError``.
"""

from keras_seqmodels.trees.balanced import balanced_tree
from keras_seqmodels.trees.dataset import tree_dataset
from keras_seqmodels.trees.encoding import (
    Vocabulary,
    check_encoding,
    encode,
    encode_tree,
)
from keras_seqmodels.trees.ptb import parse_ptb, read_ptb_file
from keras_seqmodels.trees.tree import (
    Tree,
    TreeError,
    from_heads,
    from_nested,
    lower_tokens,
)

__all__ = [
    "Tree",
    "TreeError",
    "Vocabulary",
    "balanced_tree",
    "check_encoding",
    "encode",
    "encode_tree",
    "from_heads",
    "from_nested",
    "lower_tokens",
    "parse_ptb",
    "read_ptb_file",
    "tree_dataset",
]
