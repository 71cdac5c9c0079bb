"""The batched tensor encoding of trees that the recursive layers consume.

For a batch of ``B`` trees padded to ``N`` nodes and arity ``K``:

- ``children``: ``int32 (B, N, K)``, node -> indices of its children within
  its own tree, left to right, ``-1`` where there is no child;
- ``levels``: ``int32 (B, N)``, each node's height (leaves 0, a parent one
  more than its highest child), ``-1`` on padding. The layers evaluate all
  nodes of one level of every tree together; the root of a tree is its
  unique highest node;
- ``tokens``: ``(B, N)`` leaf tokens: strings (``""`` where none), or
  ``int32`` ids when a ``Vocabulary`` is given (``0`` where none);
- ``labels``: ``int32 (B, N)`` node labels, ``-1`` where none or padding;
- ``roots`` and ``num_nodes``: ``int32 (B,)``.
"""

import collections

import numpy as np

from keras_seqmodels.trees.tree import TreeError


class Vocabulary:
    """Token -> id map: ``0`` is padding / no token, ``1`` unknown tokens.

    Args:
        words: the known tokens, in id order (they get ids 2, 3, ...).
        lower: lower-case tokens before lookup.

    Example:

    >>> vocab = Vocabulary(["good", "fun"], lower=True)
    >>> [vocab.lookup(t) for t in ["Fun", "dull", None]], len(vocab)
    ([3, 1, 0], 4)
    """

    PAD, UNK = 0, 1

    def __init__(self, words, lower=False):
        self.words = list(words)
        self.lower = bool(lower)
        self._ids = {w: i + 2 for i, w in enumerate(self.words)}

    @classmethod
    def from_trees(cls, trees, min_count=1, lower=False):
        counts = collections.Counter()
        for tree in trees:
            for tok in tree.tokens:
                if tok is not None:
                    counts[tok.lower() if lower else tok] += 1
        words = sorted(w for w, c in counts.items() if c >= min_count)
        return cls(words, lower=lower)

    def __len__(self):
        return len(self.words) + 2

    def lookup(self, token):
        if token is None:
            return self.PAD
        if self.lower:
            token = token.lower()
        return self._ids.get(token, self.UNK)


def encode_tree(tree, arity=None, vocab=None):
    """One tree's arrays: ``tokens (n,)``, ``children (n, K)``, ``levels (n,)``,
    ``labels (n,)``, numbered as the tree's nodes.

    Args:
        tree: a ``Tree``.
        arity: ``K``; default the tree's largest number of children.
        vocab: optional ``Vocabulary``; without it tokens stay strings.

    Returns:
        dict of NumPy arrays ``tokens, children, levels, labels`` (``-1`` for
        no child and no label).

    Example:

    >>> from keras_seqmodels.trees import parse_ptb
    >>> arrays = encode_tree(parse_ptb("(3 (2 good) (4 fun))"))
    >>> arrays["children"].tolist(), arrays["levels"].tolist()
    ([[1, 2], [-1, -1], [-1, -1]], [1, 0, 0])
    """
    k = tree.max_arity if arity is None else arity
    n = len(tree)
    if tree.max_arity > k:
        raise TreeError(
            f"encode: a node has {tree.max_arity} children but `arity` is {k}"
        )
    children = np.full((n, max(k, 1)), -1, np.int32)
    for i, kids in enumerate(tree.children):
        children[i, : len(kids)] = kids
    if vocab is None:
        tokens = np.array(["" if t is None else str(t) for t in tree.tokens], object)
    else:
        tokens = np.array([vocab.lookup(t) for t in tree.tokens], np.int32)
    labels = np.array(
        [-1 if lab is None else _int_label(lab) for lab in tree.labels], np.int32
    )
    return dict(
        tokens=tokens, children=children, levels=tree.heights(), labels=labels
    )


def _int_label(label):
    if isinstance(label, bool) or not isinstance(label, (int, np.integer)):
        raise TreeError(
            f"encode: node labels must be integers to be encoded. Received {label!r}"
        )
    return int(label)


def encode(trees, arity=None, vocab=None, max_nodes=None):
    """Encode a list of ``Tree`` into padded batch arrays (see module doc).

    Args:
        trees: list of ``Tree``.
        arity: ``K``; default the largest number of children in the batch.
        vocab: optional ``Vocabulary``; without it tokens stay strings.
        max_nodes: pad to this many nodes (default: the largest tree).

    Returns:
        dict of NumPy arrays ``tokens, children, levels, labels, roots,
        num_nodes``.

    Example:

    >>> from keras_seqmodels.trees import parse_ptb, balanced_tree
    >>> batch = encode([parse_ptb("(1 (2 a) (3 b))"), balanced_tree(3)])
    >>> batch["children"].shape, batch["levels"][0].tolist()
    ((2, 5, 2), [1, 0, 0, -1, -1])
    """
    trees = list(trees)
    if not trees:
        raise TreeError("encode: `trees` is empty")
    k = max(t.max_arity for t in trees) if arity is None else int(arity)
    k = max(k, 1)
    n = max(len(t) for t in trees)
    if max_nodes is not None:
        if max_nodes < n:
            raise TreeError(
                f"encode: a tree has {n} nodes, more than max_nodes={max_nodes}"
            )
        n = max_nodes
    b = len(trees)
    out = dict(
        tokens=np.full((b, n), "" if vocab is None else 0,
                       object if vocab is None else np.int32),
        children=np.full((b, n, k), -1, np.int32),
        levels=np.full((b, n), -1, np.int32),
        labels=np.full((b, n), -1, np.int32),
        roots=np.array([t.root for t in trees], np.int32),
        num_nodes=np.array([len(t) for t in trees], np.int32),
    )
    for i, tree in enumerate(trees):
        arrays = encode_tree(tree, k, vocab)
        m = len(tree)
        for key in ("tokens", "levels", "labels"):
            out[key][i, :m] = arrays[key]
        out["children"][i, :m] = arrays["children"]
    if vocab is None:
        out["tokens"] = out["tokens"].astype(str)
    return out


def check_encoding(children, levels):
    """Check batch arrays for the errors that would give a silently wrong
    result, raising ``TreeError``: a child index out of range or pointing to
    padding, a child whose level is not below its parent's (which also rules
    out cycles), a shape mismatch, or a tree without a unique highest node.

    Args:
        children: int array ``(B, N, K)`` of child indices, ``-1`` for none.
        levels: int array ``(B, N)`` of node heights, ``-1`` for padding.

    Returns:
        None; raises ``TreeError`` on the first problem found.

    Example:

    >>> check_encoding([[[1, 2], [-1, -1], [-1, -1]]], [[1, 0, 0]])
    >>> check_encoding([[[1, 5], [-1, -1], [-1, -1]]], [[1, 0, 0]])
    Traceback (most recent call last):
    ...
    keras_seqmodels.trees.tree.TreeError: ...
    """
    children = np.asarray(children)
    levels = np.asarray(levels)
    if children.ndim != 3 or levels.ndim != 2 or children.shape[:2] != levels.shape:
        raise TreeError(
            "check_encoding: expected children (batch, nodes, arity) and levels "
            f"(batch, nodes). Received shapes {children.shape} and {levels.shape}"
        )
    b, n, _ = children.shape
    bad = (children < -1) | (children >= n)
    if bad.any():
        i, j, c = np.argwhere(bad)[0]
        raise TreeError(
            f"check_encoding: tree {i} node {j} has child index "
            f"{children[i, j, c]} out of range [-1, {n})"
        )
    real = children >= 0
    child_level = levels[np.arange(b)[:, None, None], np.where(real, children, 0)]
    parent_level = levels[:, :, None]
    if (real & (parent_level < 0)).any():
        i, j, _ = np.argwhere(real & (parent_level < 0))[0]
        raise TreeError(f"check_encoding: padding node {j} of tree {i} has children")
    wrong = real & ((child_level < 0) | (child_level >= parent_level))
    if wrong.any():
        i, j, c = np.argwhere(wrong)[0]
        raise TreeError(
            f"check_encoding: tree {i}: child {children[i, j, c]} of node {j} has "
            f"level {child_level[i, j, c]}, not below its parent's "
            f"{levels[i, j]} (a cycle, padding used as a child, or wrong levels)"
        )
    top = levels.max(axis=1, keepdims=True)
    if ((levels == top).sum(axis=1) != 1).any() or (top < 0).any():
        i = int(np.flatnonzero(((levels == top).sum(axis=1) != 1) | (top[:, 0] < 0))[0])
        raise TreeError(f"check_encoding: tree {i} has no unique highest node (root)")
