"""Your own bracketed trees to a trained ``TreeClassifier``.

A UTF-8 file with one bracketed tree per line, a label on every node
(``(3 (2 it) (4 (3 works) (2 .)))``, the Penn-Treebank / Stanford Sentiment
Treebank form), is enough: ``train_tree_classifier`` reads it
(``read_labelled_trees``), builds the vocabulary and the label set from it,
trains a binary Tree-LSTM (``build_tree_network``) with ``model.fit`` on
every labelled node of the trees and returns a ``TreeClassifier``. Export it
with ``keras_seqmodels.trees.serving.export_sentiment_savedmodel`` or
``seqmodels export model.keras DIR``. TensorFlow backend (string tensors,
``tf.data`` batches).
"""

import os
import warnings

from keras_seqmodels.data.lines import iter_lines
from keras_seqmodels.trees.ptb import parse_ptb
from keras_seqmodels.trees.tree import TreeError, lower_tokens
from keras_seqmodels.utils import validation as checks

_FORM = "one bracketed tree per line, a label on every node, e.g. (3 (2 it) (4 (3 works) (2 .)))"


def read_labelled_trees(path, function="read_labelled_trees"):
    """Read a file of labelled binary bracketed trees (blank lines skipped).

    Stricter than ``read_ptb_file``: every tree must have a label on its
    root and at most two children per node (the Tree-LSTM is binary), and
    the labels must be all integers or all strings. Nodes below the root
    without a label are allowed; they are left out of training.

    Args:
        path: a UTF-8 text file.
        function: the name that starts error messages.

    Returns:
        A list of ``Tree``.

    Raises:
        FileNotFoundError: the file does not exist.
        ValueError: a line that is not a tree, a node with more than two
            children, a root without a label, mixed integer and string
            labels, or a file with no tree; the message names ``function``,
            the file, the line and the expected form.

    Example:

    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "trees.txt")
    >>> _ = open(path, "w").write("(1 (1 good) (0 fun))\\n\\n(0 (0 dull))\\n")
    >>> [t.labels[t.root] for t in read_labelled_trees(path)]
    [1, 0]
    """
    if not os.path.isfile(path):
        raise FileNotFoundError(f"{function}: no such file: {path!r} (expected {_FORM})")
    trees, kind = [], None
    # Lines end at "\n" only (keras_seqmodels.data.lines).
    for lineno, line in enumerate(iter_lines(path, function), 1):
        if not line.strip():
            continue
        where = f"{function}: {path}, line {lineno}"
        try:
            tree = parse_ptb(line)
        except TreeError as err:
            problem = str(err).removeprefix("parse_ptb: ")
            raise ValueError(
                f"{where}: not a bracketed tree ({problem}); expected {_FORM}. "
                f"Received: {_clip(line)}"
            ) from None
        wide = next((i for i, c in enumerate(tree.children) if len(c) > 2), None)
        if wide is not None:
            raise ValueError(
                f"{where}: a node has {len(tree.children[wide])} children; the "
                f"Tree-LSTM takes binary trees (at most 2 per node). Received: {_clip(line)}"
            )
        if tree.labels[tree.root] is None:
            raise ValueError(
                f"{where}: the root has no label; expected {_FORM}. Received: {_clip(line)}"
            )
        for label in tree.labels:
            if label is None:
                continue
            this = "integer" if isinstance(label, int) else "string"
            kind = kind or this
            if this != kind:
                raise ValueError(
                    f"{where}: label {label!r} is a {this} but earlier labels are "
                    f"{kind}s; the labels of a file must be all integers or all strings"
                )
        trees.append(tree)
    if not trees:
        raise ValueError(f"{function}: {path} holds no tree; expected {_FORM}")
    return trees


def _clip(line, width=60):
    line = line.strip()
    return repr(line if len(line) <= width else line[:width] + "...")


def _relabel(tree, index, lower):
    """A copy of ``tree`` with its labels replaced by class indices (-1: none)."""
    out = tree.with_values(labels=[-1 if x is None else index.get(x, -1) for x in tree.labels])
    return lower_tokens(out) if lower else out


def train_tree_classifier(
    train_path,
    validation_path=None,
    *,
    epochs=10,
    batch_size=25,
    embedding_dim=100,
    units=150,
    dropout=0.5,
    learning_rate=2e-3,
    min_count=2,
    lower=True,
    callbacks=None,
    seed=0,
    verbose="auto",
):
    """Train a Tree-LSTM ``TreeClassifier`` on a file of labelled bracketed trees.

    The vocabulary (words seen ``min_count`` times; rarer ones share the
    unknown id) and the label set (every distinct node label of the file,
    sorted; any integers, or any strings) come from the training file.
    Every labelled node of every tree is a training example (cross-entropy
    on per-node logits, Tai et al. 2015), batched ``batch_size`` whole trees
    at a time and reshuffled each epoch; ``root_accuracy`` is reported for
    training and, with ``validation_path``, ``val_loss`` (all nodes) and
    ``val_root_accuracy`` each epoch. Validation nodes with a label the
    training file never had are left out of both (a warning gives their
    number).

    Args:
        train_path: UTF-8 file, one bracketed tree per line, labels on the
            nodes (``read_labelled_trees``).
        validation_path: optional file of held-out trees in the same form.
        epochs, batch_size, learning_rate: training (Adam).
        embedding_dim, units, dropout: model (``build_tree_network``).
        min_count: occurrences a word needs to get its own id.
        lower: lower-case tokens (kept in the model, applied when it
            predicts or is exported).
        callbacks: Keras callbacks for ``fit`` (e.g. ``EarlyStopping`` on
            ``val_root_accuracy``).
        seed: seed of the weights and the batch order.
        verbose: ``fit``'s verbosity.

    Returns:
        A trained ``TreeClassifier``; ``classifier.history`` is the Keras
        ``History`` of the training. Save it with
        ``classifier.save("x.keras")``.

    Raises:
        FileNotFoundError, ValueError: as ``read_labelled_trees``, naming
            this function, the file and the line; ``ValueError`` too for
            fewer than 2 labels or another backend than TensorFlow.

    Example (TensorFlow backend):

    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "train.txt")
    >>> _ = open(path, "w").write("(1 (1 good) (1 fun))\\n(0 (0 dull) (1 fun))\\n")
    >>> clf = train_tree_classifier(path, epochs=1, embedding_dim=4, units=4,
    ...                             min_count=1, verbose=0)
    >>> clf.labels, clf.predict_probabilities(["(1 (1 good) (0 dull))"]).shape
    ([0, 1], (1, 2))
    """
    import keras

    from keras_seqmodels.trees.dataset import tree_dataset
    from keras_seqmodels.trees.network import build_tree_network, build_vocabulary
    from keras_seqmodels.trees.root_accuracy import RootAccuracy
    from keras_seqmodels.trees.tree_classifier import TreeClassifier

    name = "train_tree_classifier"
    if keras.backend.backend() != "tensorflow":
        raise ValueError(
            f"{name}: the model takes token strings (StringLookup inside) and the tree "
            "batches are tf.data, so it trains on the TensorFlow backend only. "
            f"Received: KERAS_BACKEND={keras.backend.backend()!r}"
        )
    checks.check_positive_ints(
        name, epochs=epochs, batch_size=batch_size, embedding_dim=embedding_dim, units=units,
        min_count=min_count,
    )  # fmt: skip
    checks.check_rate(name, "dropout", dropout)
    checks.check_positive_float(name, "learning_rate", learning_rate)
    train = read_labelled_trees(train_path, name)
    validation = None if validation_path is None else read_labelled_trees(validation_path, name)
    labels = sorted({x for t in train for x in t.labels if x is not None})
    if len(labels) < 2:
        raise ValueError(
            f"{name}: {train_path} has only the label {labels}; a classifier needs at "
            "least 2 distinct node labels"
        )
    index = {x: i for i, x in enumerate(labels)}
    train = [_relabel(t, index, lower) for t in train]
    keras.utils.set_random_seed(seed)
    network = build_tree_network(
        build_vocabulary(train, min_count), len(labels), embedding_dim, units, dropout
    )
    classifier = TreeClassifier(network, labels, lower=lower)
    classifier.compile(
        optimizer=keras.optimizers.Adam(learning_rate),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True, ignore_class=-1),
        metrics=[RootAccuracy()],
    )
    val_data = None
    if validation is not None:
        unseen = sum(x is not None and x not in index for t in validation for x in t.labels)
        if unseen:
            warnings.warn(
                f"{name}: {unseen} node(s) of {validation_path} have labels that "
                f"{train_path} does not have ({labels}); they are left out of validation",
                stacklevel=2,
            )
        val_data = tree_dataset([_relabel(t, index, lower) for t in validation], batch_size)
    classifier.fit(
        tree_dataset(train, batch_size, shuffle=True, seed=seed),
        validation_data=val_data,
        shuffle=False,  # the dataset reshuffles itself
        epochs=epochs,
        callbacks=callbacks,
        verbose=verbose,
    )
    return classifier
