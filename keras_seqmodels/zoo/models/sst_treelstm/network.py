"""sst-treelstm network: ``StringLookup`` -> embedding -> Tree-LSTM -> per-node
class logits, and its root metrics."""

import numpy as np


def build_vocabulary(trees, min_count=2):
    """``""`` (internal nodes, its own id) and the train words seen at least
    ``min_count`` times, sorted; rarer words train the OOV id 0."""
    from keras_seqmodels.trees.network import build_vocabulary

    return build_vocabulary(trees, min_count)


def build_model(words, embed_dim=100, units=150, dropout=0.5, num_classes=5):
    """Lower-cased token strings per node (``""`` on internal nodes),
    ``children`` and ``levels`` (``keras_seqmodels.trees.encode``) in,
    per-node class logits out (``keras_seqmodels.trees.build_tree_network``)."""
    from keras_seqmodels.trees.network import build_tree_network

    return build_tree_network(words, num_classes, embed_dim, units, dropout, name="sst_treelstm")


def root_metrics(model, trees, batch_size=64):
    """Root fine-grained accuracy (5 classes) and binary accuracy on the
    non-neutral roots (positive when P(3) + P(4) > P(0) + P(1))."""
    from keras_seqmodels.trees.serving import root_probabilities

    probs = root_probabilities(model, trees, batch_size=batch_size)
    gold = np.array([t.labels[t.root] for t in trees])
    keep = gold != 2
    positive = probs[:, 3:].sum(1) > probs[:, :2].sum(1)
    return {
        "fine_grained_accuracy": float(np.mean(probs.argmax(1) == gold)),
        "binary_accuracy": float(np.mean(positive[keep] == (gold[keep] > 2))),
        "trees": len(trees),
        "binary_trees": int(keep.sum()),
    }


def random_trees(count, seed, words=12):
    """``count`` small labelled binary trees of words ``w0``.. (smoke data)."""
    from keras_seqmodels.trees import parse_ptb

    rng = np.random.default_rng(seed)

    def grow(n):
        if n == 1:
            return f"({rng.integers(0, 5)} w{rng.integers(0, words)})"
        cut = int(rng.integers(1, n))
        return f"({rng.integers(0, 5)} {grow(cut)} {grow(n - cut)})"

    return [parse_ptb(grow(int(n))) for n in rng.integers(1, 8, count)]
