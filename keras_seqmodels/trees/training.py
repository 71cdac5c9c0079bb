"""Labelled bracketed trees for training a ``TreeClassifier``.

``read_labelled_trees`` reads a UTF-8 file with one bracketed tree per line, a
label on every node (``(3 (2 it) (4 (3 works) (2 .)))``, the Penn-Treebank /
Stanford Sentiment Treebank form), and ``relabel`` maps a tree's labels to
class indices. ``train_tree_classifier`` (``keras_seqmodels.trees.tree_classifier``)
trains on them.
"""

import os

from keras_seqmodels.data.lines import iter_lines
from keras_seqmodels.trees.ptb import parse_ptb
from keras_seqmodels.trees.tree import TreeError, lower_tokens

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


def relabel(tree, index, lower):
    """A copy of ``tree`` with its labels replaced by class indices (-1: none)."""
    out = tree.with_values(labels=[-1 if x is None else index.get(x, -1) for x in tree.labels])
    return lower_tokens(out) if lower else out
