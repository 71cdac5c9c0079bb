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


def tf_encode_strings(strings, lower=True):
    """Bracketed tree strings -> ``(tokens, children, levels)``, in TensorFlow.

    The in-graph counterpart of ``parse_ptb`` + ``encode(arity=2)`` for binary
    trees in the ``(label (label word) ...)`` format, so that a SavedModel can
    take raw strings. Labels are read and ignored. Nodes are numbered in
    pre-order (root 0), as ``parse_ptb`` does. Malformed strings (unbalanced
    brackets, a node with neither word nor sub-tree, a node with more than
    two children) fail with ``InvalidArgumentError`` naming the problem.

    Args:
        strings: ``tf.string`` tensor ``(batch,)``.
        lower: lower-case the tokens.

    Returns:
        ``tokens (B, N) string``, ``children (B, N, 2) int32``,
        ``levels (B, N) int32``.
    """
    import tensorflow as tf

    s = tf.strings.regex_replace(strings, r"\(", " ( ")
    s = tf.strings.regex_replace(s, r"\)", " ) ")
    tok = tf.strings.split(s).to_tensor("")  # (B, T)
    b = tf.shape(tok)[0]
    t = tf.shape(tok)[1]
    is_open = tok == "("
    is_close = tok == ")"
    is_real = tok != ""
    step = tf.cast(is_open, tf.int32) - tf.cast(is_close, tf.int32)
    depth = tf.cumsum(step, axis=1)  # after each token
    tf.debugging.assert_equal(
        tf.reduce_all(depth >= 0) & tf.reduce_all(depth[:, -1] == 0), True,
        message="tf_encode_strings: unbalanced brackets",
    )
    first_close = tf.argmax(tf.cast(is_close, tf.int32) * tf.cast(depth == 0, tf.int32),
                            axis=1, output_type=tf.int32)
    after_root = tf.range(t)[None, :] > first_close[:, None]
    tf.debugging.assert_equal(
        tf.reduce_any(after_root & is_real), False,
        message="tf_encode_strings: unbalanced brackets (text after the root)",
    )
    word = is_real & ~is_open & ~is_close
    prev_open = tf.pad(is_open[:, :-1], [[0, 0], [1, 0]])
    is_label = word & prev_open
    word = word & ~is_label
    node_of_open = tf.cumsum(tf.cast(is_open, tf.int32), axis=1) - 1  # (B, T)
    n_nodes = tf.reduce_sum(tf.cast(is_open, tf.int32), axis=1)
    n = tf.reduce_max(n_nodes)

    pos = tf.range(t)

    def last_open(target, strict):
        # The last "(" at or before each position whose depth equals target.
        before = pos[None, :] < pos[:, None] if strict else pos[None, :] <= pos[:, None]
        cand = (is_open[:, None, :] & before[None]
                & (depth[:, None, :] == target[:, :, None]))  # (B, T, T)
        j = tf.reduce_max(tf.where(cand, pos[None, None, :], -1), axis=2)
        return tf.where(j >= 0, tf.gather(node_of_open, tf.maximum(j, 0), batch_dims=1), -1)

    enclosing = last_open(depth, strict=False)  # node of each word
    parent = last_open(depth - 1, strict=True)  # parent node of each "("
    offsets = tf.range(b)[:, None] * n
    m = b * n

    # Leaf tokens: the words of a node joined by spaces.
    seg = tf.where(word, enclosing + offsets, m)
    tokens = tf.strings.unsorted_segment_join(
        tf.reshape(tok, [-1]), tf.reshape(seg, [-1]), m + 1, separator=" "
    )[:m]
    if lower:
        tokens = tf.strings.lower(tokens)
    tokens = tf.reshape(tokens, [b, n])

    # Children: pre-order ids, so the left child has the smaller id.
    child_mask = is_open & (parent >= 0)
    pseg = tf.reshape(tf.where(child_mask, parent + offsets, m), [-1])
    cid = tf.reshape(node_of_open, [-1])
    ones = tf.reshape(tf.cast(child_mask, tf.int32), [-1])
    count = tf.math.unsorted_segment_sum(ones, pseg, m + 1)[:m]
    tf.debugging.assert_less_equal(
        tf.reduce_max(count), 2,
        message="tf_encode_strings: a node has more than two children",
    )
    left = tf.math.unsorted_segment_min(cid, pseg, m + 1)[:m]
    right = tf.math.unsorted_segment_max(cid, pseg, m + 1)[:m]
    left = tf.where(count > 0, left, -1)
    right = tf.where(count > 1, right, -1)
    children = tf.reshape(tf.stack([left, right], axis=1), [b, n, 2])

    has_word = tf.math.unsorted_segment_sum(
        tf.reshape(tf.cast(word, tf.int32), [-1]), tf.reshape(seg, [-1]), m + 1
    )[:m]
    node_real = tf.reshape(tf.range(n)[None, :] < n_nodes[:, None], [-1])
    tf.debugging.assert_equal(
        tf.reduce_any(node_real & (count == 0) & (has_word == 0)), False,
        message="tf_encode_strings: missing child (a node with no word or sub-tree)",
    )

    # Heights: propagate child height + 1 to the parent, n times at most.
    flat_parent = tf.where(child_mask, parent + offsets, m)
    flat_node = tf.reshape(tf.where(is_open, node_of_open + offsets, m), [-1])

    def body(i, h):
        hh = tf.concat([h, [0]], 0)
        up = tf.math.unsorted_segment_max(
            tf.gather(hh, flat_node) + 1, tf.reshape(flat_parent, [-1]), m + 1
        )[:m]
        return i + 1, tf.maximum(h, up)

    _, height = tf.while_loop(
        lambda i, h: i < n, body, (0, tf.zeros([m], tf.int32))
    )
    levels = tf.reshape(tf.where(node_real, height, -1), [b, n])
    return tokens, children, levels


def export_sentiment_savedmodel(model, path, lower=True):
    """Export a tree classifier as a SavedModel whose ``serving_default``
    takes bracketed tree strings ``(batch,)`` and returns the root class.

    Signature: ``serving_default(trees: tf.string (batch,)) ->
    {"root_class": int32 (batch,), "root_probabilities": float32 (batch, C)}``.
    Labels inside the strings are ignored. TensorFlow backend only.

    Args:
        model: a tree classifier (see module doc), e.g. ``zoo.load("sst-treelstm")``.
        path: output directory.
        lower: lower-case tokens (the zoo model was trained so).
    """
    import keras
    import tensorflow as tf

    archive = keras.export.ExportArchive()
    archive.track(model)

    def serve(trees):
        tokens, children, levels = tf_encode_strings(trees, lower=lower)
        logits = model([tokens, children, levels], training=False)
        probs = tf.nn.softmax(tf.cast(logits[:, 0], tf.float32))  # pre-order root
        return {
            "root_class": tf.argmax(probs, axis=-1, output_type=tf.int32),
            "root_probabilities": probs,
        }

    archive.add_endpoint(
        "serving_default", serve,
        input_signature=[tf.TensorSpec([None], tf.string, name="trees")],
    )
    archive.write_out(path, verbose=False)
    return path
