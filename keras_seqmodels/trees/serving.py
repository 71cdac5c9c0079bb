"""Running a tree classifier on bracketed strings, in Python and as a SavedModel.

A tree classifier here is a Keras model with inputs ``[tokens (B, N) string,
children (B, N, 2) int32, levels (B, N) int32]`` returning per-node class
logits ``(B, N, classes)``, such as the ``sst-treelstm`` zoo model.
"""

import numpy as np

from keras_seqmodels.trees.encoding import encode
from keras_seqmodels.trees.ptb import parse_ptb
from keras_seqmodels.trees.tree import lower_tokens


def root_probabilities(model, trees, batch_size=64, lower=True):
    """Softmax class probabilities of each tree's root, ``(len(trees), classes)``.

    Args:
        model: a tree classifier (see module doc).
        trees: ``Tree`` objects or bracketed strings (labels are ignored).
        lower: lower-case tokens first (the zoo model was trained so).
    """
    trees = [parse_ptb(t) if isinstance(t, str) else t for t in trees]
    if lower:
        trees = [lower_tokens(t) for t in trees]
    out = []
    # Similar sizes in one batch keep the padding small.
    order = np.argsort([len(t) for t in trees], kind="stable")
    for i in range(0, len(trees), batch_size):
        idx = order[i : i + batch_size]
        batch = encode([trees[j] for j in idx], arity=2)
        logits = np.asarray(
            model.predict_on_batch(
                [batch["tokens"].astype(object), batch["children"], batch["levels"]]
            ),
            np.float64,
        )
        root = logits[np.arange(len(idx)), batch["roots"]]
        root = np.exp(root - root.max(1, keepdims=True))
        out.append((idx, root / root.sum(1, keepdims=True)))
    probs = np.zeros((len(trees), out[0][1].shape[1]))
    for idx, p in out:
        probs[idx] = p
    return probs


def predict_root_classes(model, trees, batch_size=64, lower=True):
    """The predicted class of each tree's root (0-4 for SST)."""
    return root_probabilities(model, trees, batch_size, lower).argmax(1)
