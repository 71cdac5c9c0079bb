"""Running a tree classifier on bracketed strings, in Python and as a SavedModel.

A tree classifier here is a Keras model with inputs ``[tokens (B, N) string,
children (B, N, 2) int32, levels (B, N) int32]`` returning per-node class
logits ``(B, N, classes)``, such as the zoo's sentiment Tree-LSTM.
"""

import numpy as np

from keras_seqmodels.trees.encoding import encode
from keras_seqmodels.trees.ptb import parse_ptb
from keras_seqmodels.trees.tree import lower_tokens
from keras_seqmodels.utils.calling import call_model
from keras_seqmodels.utils.validation import check_positive_int


def root_probabilities(model, trees, batch_size=64, lower=True):
    """Softmax class probabilities of each tree's root, ``(len(trees), classes)``.

    Args:
        model: a tree classifier (see module doc).
        trees: ``Tree`` objects or bracketed strings (labels are ignored).
        lower: lower-case tokens first (the zoo model was trained so).
    """
    batch_size = check_positive_int("root_probabilities", "batch_size", batch_size)
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
            call_model(model, [batch["tokens"].astype(object), batch["children"], batch["levels"]]),
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


# Per-tree error messages of tf_parse_trees (index = error code).
PARSE_ERRORS = (
    "",
    "empty: no tree",
    "not a bracketed tree: it must start with '('",
    "unbalanced brackets",
    "unbalanced brackets (text after the root)",
    "missing child (a node with no word or sub-tree)",
    "a node has more than two children",
)

# Documented request limits of the exported signature (see
# export_sentiment_savedmodel); all checked inside the graph.
SERVING_LIMITS = {
    "max_batch": 256,  # trees per request
    "max_bytes": 131_072,  # bytes per tree string
    "max_total_bytes": 1_048_576,  # bytes of all the request's strings
    "max_nodes": 32_768,  # nodes per tree
    "max_depth": 512,  # bracket nesting depth per tree
    "max_padded_nodes": 65_536,  # trees x the largest tree's nodes
}


def tf_parse_trees(strings, lower=True, limits=None, model_name="tf_parse_trees"):
    """Bracketed tree strings -> encoded trees and a per-tree error, in TensorFlow.

    The in-graph counterpart of ``parse_ptb`` + ``encode(arity=2)`` for binary
    trees in the ``(label (label word) ...)`` format, so that a SavedModel can
    take raw strings. Labels are read and ignored. Nodes are numbered in
    pre-order (root 0), as ``parse_ptb`` does.

    A malformed string (empty or blank, text without brackets, unbalanced
    brackets, a node with neither word nor sub-tree, a node with more than
    two children) does not fail the batch: its row of the result is padding
    (no nodes) and ``error`` holds the problem (one of ``PARSE_ERRORS``);
    well-formed trees have ``error == ""``.

    Memory and time are linear in the request's bytes (times the depth
    limit for the heights): the bracket matching works on the flat token
    list of the whole batch, finding each node's enclosing ``(`` by one sort
    of the ``(`` tokens by (depth, position) and a binary search, never on a
    tokens x tokens matrix. When ``limits`` is given (a dict with the keys of
    ``SERVING_LIMITS``), a request beyond one of them fails with an
    ``InvalidArgumentError`` naming the limit before the work that grows
    with it.

    Args:
        strings: ``tf.string`` tensor ``(batch,)``.
        lower: lower-case the tokens (ASCII letters).
        limits: optional request limits (see above).
        model_name: the start of the limit messages.

    Returns:
        dict of ``tokens (B, N) string``, ``children (B, N, 2) int32``,
        ``levels (B, N) int32`` (``-1`` on padding), ``error (B,) string``;
        ``N`` is the node count of the largest well-formed tree (0 if none).
    """
    import tensorflow as tf

    from keras_seqmodels.export.limits import at_most, guard, max_or_zero, string_checks

    strings = tf.convert_to_tensor(strings, tf.string)
    checks = []
    if limits is not None:
        checks = string_checks(
            model_name, strings, limits["max_batch"], limits["max_bytes"], noun="trees"
        ) + [
            at_most(
                model_name, "bytes in all", tf.reduce_sum(tf.strings.length(strings)),
                limits["max_total_bytes"],
            )
        ]
    strings = guard([strings], checks)[0]

    s = tf.strings.regex_replace(strings, r"\(", " ( ")
    s = tf.strings.regex_replace(s, r"\)", " ) ")
    split = tf.strings.split(s)  # ragged (B, [T])
    tok = split.flat_values  # (L,) all tokens of the batch
    b = tf.cast(split.nrows(), tf.int32)
    size = tf.shape(tok)[0]
    row = tf.cast(split.value_rowids(), tf.int32)  # (L,)
    row_start = tf.cast(split.row_starts(), tf.int32)  # (B,)
    row_len = tf.cast(split.row_lengths(), tf.int32)
    local = tf.range(size) - tf.gather(row_start, row)  # position within its tree
    is_open = tok == "("
    is_close = tok == ")"
    open_i = tf.cast(is_open, tf.int32)

    def per_row_cumsum(values):
        # Inclusive cumulative sum restarting at each tree's first token.
        total = tf.cumsum(values)
        before = tf.gather(tf.concat([[0], total], 0), row_start)
        return total - tf.gather(before, row)

    step = open_i - tf.cast(is_close, tf.int32)
    depth = per_row_cumsum(step)  # after each token
    node = per_row_cumsum(open_i) - 1  # of the last "(" at or before each token
    n_nodes = tf.math.unsorted_segment_sum(open_i, row, b)
    max_depth = tf.math.unsorted_segment_max(depth, row, b)
    if limits is not None:
        depth, node = guard([depth, node], [
            at_most(model_name, "nodes per tree", max_or_zero(n_nodes), limits["max_nodes"]),
            at_most(model_name, "levels of brackets per tree", max_or_zero(max_depth),
                    limits["max_depth"]),
        ])

    # Shape errors, per tree.
    row_sum = tf.math.unsorted_segment_sum(step, row, b)
    row_min = tf.math.unsorted_segment_min(depth, row, b)
    first = tf.gather(tf.concat([tok, [""]], 0), row_start)  # "" for an empty tree
    starts_open = (row_len > 0) & tf.equal(first, "(")
    # A token (after the first) that starts at depth 0 lies after the root.
    outside = tf.math.unsorted_segment_sum(
        tf.cast((depth - step == 0) & (local > 0), tf.int32), row, b
    )
    unbalanced = (row_sum != 0) | (row_min < 0)

    word = ~is_open & ~is_close
    prev_open = tf.concat([[False], is_open], 0)[:size] & (local > 0)
    word = word & ~prev_open  # a word right after "(" is the node's label

    # Bracket matching. Key of a "(" : (depth, global position); the nodes
    # of one depth are then in text order, and the enclosing "(" of a token
    # at depth d is the last key <= (d, its position) if it is in its tree.
    stride = tf.cast(size, tf.int64) + 1
    flat_pos = tf.range(size, dtype=tf.int64)
    dkey = tf.cast(tf.maximum(depth, 0), tf.int64)
    open_pos = tf.boolean_mask(flat_pos, is_open)
    open_keys = tf.sort(tf.boolean_mask(dkey, is_open) * stride + open_pos)
    # A sentinel above every key: something to gather when there is no "(".
    open_keys = tf.concat([open_keys, [tf.int64.max]], 0)
    gnode_of = tf.cumsum(open_i) - 1  # global node id of the last "(" so far

    def last_open(target_depth, position):
        # Global node id of the last "(" at `target_depth` at or before
        # `position` in the same tree, -1 if none.
        query = tf.cast(tf.maximum(target_depth, 0), tf.int64) * stride + position
        i = tf.searchsorted(open_keys, query, side="right", out_type=tf.int32) - 1
        found = tf.gather(open_keys, tf.maximum(i, 0))
        g = tf.clip_by_value(tf.cast(found % stride, tf.int32), 0, tf.maximum(size - 1, 0))
        ok = (
            (i >= 0)
            & (found // stride == tf.cast(tf.maximum(target_depth, 0), tf.int64))
            & (target_depth >= 0)
            & (tf.gather(row, g) == row)
        )
        return tf.where(ok, tf.gather(gnode_of, g), -1)

    n_open = tf.reduce_sum(open_i)  # nodes of the whole batch
    enclosing = last_open(depth, flat_pos)  # of each token (for words)
    parent = last_open(depth - 1, flat_pos - 1)  # of each token (for "(")

    open_gid = tf.boolean_mask(gnode_of, is_open)  # 0 .. n_open - 1
    open_row = tf.boolean_mask(row, is_open)
    open_local = tf.boolean_mask(node, is_open)  # pre-order id in its tree
    open_parent = tf.boolean_mask(parent, is_open)
    is_child = open_parent >= 0
    seg = tf.where(is_child, open_parent, n_open)
    count = tf.math.unsorted_segment_sum(tf.cast(is_child, tf.int32), seg, n_open + 1)[:-1]
    first_child = tf.math.unsorted_segment_min(open_gid, seg, n_open + 1)[:-1]
    last_child = tf.math.unsorted_segment_max(open_gid, seg, n_open + 1)[:-1]
    word_seg = tf.where(word & (enclosing >= 0), enclosing, n_open)
    has_word = tf.math.unsorted_segment_sum(
        tf.cast(word, tf.int32), word_seg, n_open + 1
    )[:-1]
    node_errors = [
        tf.math.unsorted_segment_max(
            tf.cast((count == 0) & (has_word == 0), tf.int32), open_row, b),
        tf.math.unsorted_segment_max(tf.cast(count > 2, tf.int32), open_row, b),
    ]
    code = tf.zeros([b], tf.int32)
    for value, bad in reversed([
        (1, row_len == 0),
        (2, ~starts_open),
        (3, unbalanced),
        (4, outside > 0),
        (5, node_errors[0] > 0),
        (6, node_errors[1] > 0),
    ]):
        code = tf.where(bad, value, code)
    good = code == 0
    error = tf.gather(tf.constant(PARSE_ERRORS), code)

    # Heights: each pass lifts child height + 1 to the parent; a tree of
    # depth d settles after d passes.
    passes = tf.reduce_max(tf.concat([[0], tf.boolean_mask(max_depth, good)], 0))

    def body(i, h):
        up = tf.math.unsorted_segment_max(h + 1, seg, n_open + 1)[:-1]
        return i + 1, tf.maximum(h, up)

    _, height = tf.while_loop(
        lambda i, h: i < passes, body, (0, tf.zeros([n_open], tf.int32))
    )

    # Dense (B, N) output for the well-formed trees.
    n = tf.reduce_max(tf.concat([[0], tf.boolean_mask(n_nodes, good)], 0))
    if limits is not None:
        n = guard([n], [at_most(model_name, "padded nodes (trees x nodes of the largest)",
                                b * n, limits["max_padded_nodes"])])[0]
    keep = tf.gather(good, open_row)
    where = tf.stack([open_row, open_local], 1)
    where = tf.boolean_mask(where, keep)
    shape = tf.stack([b, n])

    def dense(values, fill):
        values = tf.boolean_mask(values, keep)
        base = tf.fill(shape, tf.constant(fill, values.dtype))
        return tf.tensor_scatter_nd_update(base, where, values)

    left = tf.where(count > 0, tf.gather(open_local, tf.clip_by_value(
        first_child, 0, tf.maximum(n_open - 1, 0))), -1)
    right = tf.where(count > 1, tf.gather(open_local, tf.clip_by_value(
        last_child, 0, tf.maximum(n_open - 1, 0))), -1)
    leaf_tokens = tf.strings.unsorted_segment_join(tok, word_seg, n_open + 1, separator=" ")[:-1]
    if lower:
        leaf_tokens = tf.strings.lower(leaf_tokens)
    return {
        "tokens": dense(leaf_tokens, ""),
        "children": tf.stack([dense(left, -1), dense(right, -1)], axis=2),
        "levels": dense(height, -1),
        "error": error,
    }


def tf_encode_strings(strings, lower=True):
    """Bracketed tree strings -> ``(tokens, children, levels)``, in TensorFlow.

    ``tf_parse_trees`` for a batch that must be well formed: a malformed
    string (unbalanced brackets, a node with neither word nor sub-tree, a
    node with more than two children, no tree at all) fails the call with an
    ``InvalidArgumentError`` naming the problem.

    Args:
        strings: ``tf.string`` tensor ``(batch,)``.
        lower: lower-case the tokens.

    Returns:
        ``tokens (B, N) string``, ``children (B, N, 2) int32``,
        ``levels (B, N) int32``.
    """
    import tensorflow as tf

    from keras_seqmodels.export.limits import guard

    parsed = tf_parse_trees(strings, lower=lower)
    problems = tf.boolean_mask(parsed["error"], parsed["error"] != "")
    check = tf.debugging.Assert(
        tf.size(problems) == 0, ["tf_encode_strings: malformed trees:", problems]
    )
    return tuple(guard([parsed[k] for k in ("tokens", "children", "levels")], [check]))
