"""The tree structure every parser produces, and its validation."""

import numpy as np


class TreeError(ValueError):
    """A malformed tree: unbalanced brackets, a missing child, a cycle, a node
    index out of range, several roots or an unreachable node."""


class Tree:
    """One rooted, ordered tree stored as flat per-node lists.

    Nodes are numbered ``0 .. n-1`` in any order; ``children[i]`` lists the
    indices of node ``i``'s children from left to right. A node with no
    children is a leaf and usually carries a token (a word).

    Args:
        children: sequence of ``n`` sequences of child indices.
        tokens: optional sequence of ``n`` tokens (``None`` for nodes without
            one, usually internal nodes).
        labels: optional sequence of ``n`` node labels (``None`` for none).

    The constructor checks that the structure is a tree and raises
    ``TreeError`` otherwise: an index out of range, a ``None`` child (missing
    child), a node with two parents, a cycle, no root or several roots, or a
    node not reachable from the root.

    Example:

    >>> t = Tree([[1, 2], [], []], tokens=[None, "a", "b"])
    >>> t.root, t.heights().tolist()
    (0, [1, 0, 0])
    """

    def __init__(self, children, tokens=None, labels=None):
        n = len(children)
        if n == 0:
            raise TreeError("Tree: a tree needs at least one node. Received 0 nodes")
        self.children = [_check_children(i, c, n) for i, c in enumerate(children)]
        self.tokens = _per_node("tokens", tokens, n)
        self.labels = _per_node("labels", labels, n)
        self.root = _find_root(self.children)

    def __len__(self):
        return len(self.children)

    @property
    def leaves(self):
        """Leaf indices from left to right."""
        out, stack = [], [self.root]
        while stack:
            node = stack.pop()
            if self.children[node]:
                stack.extend(reversed(self.children[node]))
            else:
                out.append(node)
        return out

    @property
    def max_arity(self):
        return max(len(c) for c in self.children)

    def heights(self):
        """Height of each node (leaves 0, a parent 1 + its highest child)."""
        height = np.zeros(len(self), np.int32)
        for node in reversed(self.preorder()):
            kids = self.children[node]
            if kids:
                height[node] = 1 + max(height[k] for k in kids)
        return height

    def depth(self):
        """Number of edges on the longest root-to-leaf path."""
        return int(self.heights()[self.root])

    def preorder(self):
        out, stack = [], [self.root]
        while stack:
            node = stack.pop()
            out.append(node)
            stack.extend(reversed(self.children[node]))
        return out

    def to_string(self):
        """The tree in bracket notation, ``(label child ...)``; an unlabelled
        leaf is its bare token. With labels on every node (SST) the result
        parses back with ``parse_ptb`` to the same tree."""
        parts = []

        def emit(node):
            label = self.labels[node]
            head = "(" if label is None else f"({label} "
            if not self.children[node]:
                if label is None:
                    return str(self.tokens[node])
                return f"{head}{self.tokens[node]})"
            return head + " ".join(emit(k) for k in self.children[node]) + ")"

        parts.append(emit(self.root))
        return parts[0]

    def with_values(self, tokens=None, labels=None):
        """A tree of the same (already checked) structure with other tokens
        or labels; ``None`` keeps this tree's. The structure is shared, not
        checked again.

        Example:

        >>> Tree([[1, 2], [], []], labels=[3, 2, 4]).with_values(labels=[0, 1, 2]).labels
        [0, 1, 2]
        """
        out = Tree.__new__(Tree)
        out.children, out.root = self.children, self.root
        out.tokens = self.tokens if tokens is None else _per_node("tokens", tokens, len(self))
        out.labels = self.labels if labels is None else _per_node("labels", labels, len(self))
        return out

    def __repr__(self):
        return f"Tree({len(self)} nodes, depth {self.depth()}, root {self.root})"


def _check_children(node, kids, n):
    if kids is None:
        raise TreeError(f"Tree: node {node} has children=None; use [] for a leaf")
    kids = list(kids)
    for pos, k in enumerate(kids):
        if k is None:
            raise TreeError(
                f"Tree: node {node} has a missing child (None) at position {pos}"
            )
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
            raise TreeError(
                f"Tree: child indices must be integers. Received {k!r} as child "
                f"{pos} of node {node}"
            )
        if not 0 <= k < n:
            raise TreeError(
                f"Tree: node {node} has child index {k} out of range [0, {n})"
            )
        if k == node:
            raise TreeError(f"Tree: cycle: node {node} is its own child")
    return tuple(int(k) for k in kids)


def _per_node(name, values, n):
    if values is None:
        return [None] * n
    values = list(values)
    if len(values) != n:
        raise TreeError(
            f"Tree: `{name}` must have one entry per node ({n}). "
            f"Received {len(values)} entries"
        )
    return values


def _find_root(children):
    n = len(children)
    parent = [-1] * n
    for node, kids in enumerate(children):
        for k in kids:
            if parent[k] != -1:
                raise TreeError(
                    f"Tree: node {k} has two parents ({parent[k]} and {node}); "
                    "a tree node has one parent"
                )
            parent[k] = node
    roots = [i for i in range(n) if parent[i] == -1]
    if not roots:
        raise TreeError("Tree: cycle: every node has a parent, so there is no root")
    if len(roots) > 1:
        raise TreeError(
            f"Tree: several roots (nodes without a parent): {roots[:10]}; "
            "a tree has exactly one"
        )
    seen = np.zeros(n, bool)
    stack = [roots[0]]
    while stack:
        node = stack.pop()
        seen[node] = True
        stack.extend(children[node])
    if not seen.all():
        missing = np.flatnonzero(~seen)[:10].tolist()
        raise TreeError(
            f"Tree: cycle: nodes {missing} are not reachable from the root "
            f"{roots[0]} (they form a cycle among themselves)"
        )
    return roots[0]


def from_heads(heads, tokens=None, labels=None):
    """A tree from a dependency parse: ``heads[i]`` is token ``i``'s head.

    Heads are 1-based with ``0`` for the root, as in CoNLL-U (so the output of
    any dependency parser, or ``keras_seqmodels.data`` CoNLL-U readers, can be
    passed directly). Every token becomes a node; its dependents are its
    children, left to right.

    Args:
        heads: sequence of ``n`` head indices (1-based, ``0`` for the root).
        tokens: optional sequence of ``n`` tokens (the words).
        labels: optional sequence of ``n`` node labels.

    Returns:
        A ``Tree`` whose node ``i`` is token ``i + 1`` of the parse.

    Raises:
        TreeError: a head out of range, a token that heads itself, a cycle,
            or not exactly one root.

    Example:

    >>> t = from_heads([2, 0, 2], tokens=["dogs", "bark", "loudly"])
    >>> t.root, t.children[1]
    (1, (0, 2))
    """
    heads = [int(h) for h in heads]
    n = len(heads)
    children = [[] for _ in range(n)]
    for i, h in enumerate(heads):
        if not 0 <= h <= n:
            raise TreeError(
                f"from_heads: token {i + 1} has head {h} out of range [0, {n}]"
            )
        if h == i + 1:
            raise TreeError(f"from_heads: cycle: token {i + 1} is its own head")
        if h > 0:
            children[h - 1].append(i)
    if sum(h == 0 for h in heads) != 1:
        raise TreeError(
            f"from_heads: exactly one token must have head 0 (the root). "
            f"Received {sum(h == 0 for h in heads)}"
        )
    return Tree(children, tokens=tokens, labels=labels)


def from_nested(nested):
    """A tree from nested lists or tuples of tokens, e.g. ``[["a", "b"], "c"]``.

    This is the form of ``nltk.Tree`` leaves and of most constituency parsers'
    Python output: a list is an internal node, anything else a leaf token.
    An empty list is a node with a missing child and raises ``TreeError``.

    Args:
        nested: a token, or a (nested) list or tuple of them.

    Returns:
        A ``Tree`` numbered in pre-order (the root is node 0).

    Example:

    >>> t = from_nested([["a", "b"], "c"])
    >>> t.children, t.tokens
    ([(1, 4), (2, 3), (), (), ()], [None, None, 'a', 'b', 'c'])
    """
    children, tokens = [], []
    stack = [(nested, None)]
    while stack:
        item, parent = stack.pop()
        node = len(children)
        if parent is not None:
            children[parent].append(node)
        if isinstance(item, (list, tuple)):
            if len(item) == 0:
                raise TreeError(
                    f"from_nested: node {node} is an empty list (a missing child)"
                )
            children.append([])
            tokens.append(None)
            stack.extend((c, node) for c in reversed(item))
        else:
            children.append([])
            tokens.append(item)
    return Tree(children, tokens=tokens)


def lower_tokens(tree):
    """A copy of ``tree`` with lower-cased tokens (same structure and labels).

    Args:
        tree: a ``Tree``.

    Returns:
        A new ``Tree``; ``tree`` is not changed.

    Example:

    >>> lower_tokens(Tree([[1, 2], [], []], tokens=[None, "Good", "FUN"])).tokens
    [None, 'good', 'fun']
    """
    return tree.with_values(tokens=[None if t is None else t.lower() for t in tree.tokens])
