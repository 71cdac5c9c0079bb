"""A balanced binary tree over any sequence (a data-independent structure)."""

from keras_seqmodels.trees.tree import Tree, TreeError


def balanced_tree(length, tokens=None):
    """Balanced binary tree over ``length`` leaves, depth ⌈log2 length⌉.

    Leaves ``0 .. length-1`` are the sequence positions, left to right;
    internal nodes follow. Adjacent nodes are paired level by level (an odd
    node out is carried to the next level), so each level halves the number
    of nodes (rounded up) and the root is ⌈log2 τ⌉ edges above the leaves: a
    recursive network over it composes a sequence of length τ in O(log τ)
    sequential steps instead of τ (Deep Learning, section 10.6).

    Args:
        length: positive number of leaves τ.
        tokens: optional sequence of ``length`` leaf tokens.

    Returns:
        A ``Tree`` whose root is its last node.

    Example:

    >>> balanced_tree(5).depth()
    3
    """
    if isinstance(length, bool) or not isinstance(length, int) or length < 1:
        raise TreeError(
            f"balanced_tree: `length` must be a positive integer. Received: "
            f"length={length!r}"
        )
    if tokens is not None and len(tokens) != length:
        raise TreeError(
            f"balanced_tree: `tokens` must have `length` ({length}) entries. "
            f"Received {len(tokens)}"
        )
    children = [[] for _ in range(length)]
    frontier = list(range(length))
    while len(frontier) > 1:
        nxt = []
        for i in range(0, len(frontier) - 1, 2):
            children.append([frontier[i], frontier[i + 1]])
            nxt.append(len(children) - 1)
        if len(frontier) % 2:
            nxt.append(frontier[-1])
        frontier = nxt
    all_tokens = None
    if tokens is not None:
        all_tokens = list(tokens) + [None] * (len(children) - length)
    return Tree(children, tokens=all_tokens)
