"""The Tree-LSTM classifier network: token strings per node in, per-node logits out."""

from keras_seqmodels.data.vocabulary import build_vocabulary as _count_vocabulary


def build_vocabulary(trees, min_count=2):
    """The word list of a tree classifier's ``StringLookup``.

    ``""`` (the token of internal nodes, given its own id) and the leaf words
    seen at least ``min_count`` times, sorted; rarer words are left to the
    out-of-vocabulary id 0, which they train.

    Args:
        trees: ``Tree`` objects (tokens as the network will see them, e.g.
            lower-cased).
        min_count: occurrences a word needs to get its own id.

    Returns:
        A list of strings, ``""`` first.

    Example:

    >>> from keras_seqmodels.trees import parse_ptb
    >>> build_vocabulary([parse_ptb("(1 (1 a) (1 (0 b) (1 a)))")])
    ['', 'a']
    """
    tokens = (t for tree in trees for t in tree.tokens if t is not None)
    return [""] + _count_vocabulary(tokens, min_count=min_count, order="alphabetical")


def build_tree_network(words, num_classes, embedding_dim=100, units=150, dropout=0.5,
                       name="tree_classifier"):  # fmt: skip
    """``StringLookup`` -> ``Embedding`` -> ``TreeLSTM`` -> per-node ``Dense`` logits.

    The binary constituency Tree-LSTM of Tai et al. (2015) as a functional
    Keras model: inputs ``tokens (B, N)`` strings (``""`` on internal nodes),
    ``children (B, N, 2)`` and ``levels (B, N)`` int32
    (``keras_seqmodels.trees.encode``); output ``(B, N, num_classes)``
    logits, one row per node. Dropout on the embeddings and on the node
    states.

    Args:
        words: vocabulary (``build_vocabulary``); other words share id 0.
        num_classes: output columns.
        embedding_dim, units: embedding and Tree-LSTM widths.
        dropout: dropout rate before and after the Tree-LSTM.
        name: the model's name.

    Returns:
        A ``keras.Model``.

    Example:

    >>> net = build_tree_network(["", "good"], num_classes=3, embedding_dim=4, units=4)
    >>> [tuple(i.shape) for i in net.inputs], tuple(net.outputs[0].shape)
    ([(None, None), (None, None, 2), (None, None)], (None, None, 3))

    Reference:
        Tai, Socher & Manning 2015, Improved Semantic Representations From
        Tree-Structured Long Short-Term Memory Networks, section 3.2.
    """
    import keras

    from keras_seqmodels.trees.tree_lstm import TreeLSTM

    tokens = keras.Input((None,), dtype="string", name="tokens")
    children = keras.Input((None, 2), dtype="int32", name="children")
    levels = keras.Input((None,), dtype="int32", name="levels")
    ids = keras.layers.StringLookup(vocabulary=words, mask_token=None,
                                    num_oov_indices=1, name="vocabulary")(tokens)  # fmt: skip
    x = keras.layers.Embedding(len(words) + 1, embedding_dim, name="embedding")(ids)
    x = keras.layers.Dropout(dropout)(x)
    nodes, _ = TreeLSTM(units, name="tree_lstm")([x, children, levels])
    nodes = keras.layers.Dropout(dropout)(nodes)
    logits = keras.layers.Dense(num_classes, name="classifier")(nodes)
    return keras.Model([tokens, children, levels], logits, name=name)
