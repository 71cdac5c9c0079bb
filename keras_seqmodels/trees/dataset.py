"""``tf.data`` pipelines of encoded trees for ``model.fit`` (TensorFlow only)."""

import numpy as np

from keras_seqmodels.trees.encoding import encode_tree


def tree_dataset(trees, batch_size, arity=2, vocab=None, shuffle=False, seed=0,
                 node_labels=True):
    """A ``tf.data.Dataset`` of ``((tokens, children, levels), labels)`` batches.

    Each tree is encoded once; batches are padded to their largest tree with
    ``tokens`` ``""`` (or id ``0``), ``children``/``levels``/``labels`` ``-1``.

    Args:
        trees: list of ``Tree``.
        batch_size: trees per batch.
        arity: ``K`` of the ``children`` array.
        vocab: optional ``Vocabulary`` (integer tokens); default string tokens.
        shuffle: reshuffle the trees every epoch.
        seed: shuffle seed.
        node_labels: labels per node ``(B, N)``; if False, the root's label
            ``(B,)``.

    Returns:
        A ``tf.data.Dataset`` for ``model.fit``.

    Example:

    >>> from keras_seqmodels.trees import parse_ptb
    >>> trees = [parse_ptb("(3 (2 good) (4 fun))"), parse_ptb("(1 (1 dull))")]
    >>> (tokens, children, levels), labels = next(iter(tree_dataset(trees, 2)))
    >>> tuple(children.shape), labels.numpy().tolist()
    ((2, 3, 2), [[3, 2, 4], [1, 1, -1]])
    """
    import tensorflow as tf

    encoded = [encode_tree(t, arity, vocab) for t in trees]
    roots = np.array([t.root for t in trees], np.int32)
    string_tokens = vocab is None
    tok_spec = tf.TensorSpec((None,), tf.string if string_tokens else tf.int32)

    def generate():
        for e, r in zip(encoded, roots):
            labels = e["labels"] if node_labels else e["labels"][r]
            yield (e["tokens"].astype(str) if string_tokens else e["tokens"],
                   e["children"], e["levels"]), labels

    label_spec = tf.TensorSpec((None,) if node_labels else (), tf.int32)
    ds = tf.data.Dataset.from_generator(
        generate,
        output_signature=(
            (tok_spec, tf.TensorSpec((None, arity), tf.int32),
             tf.TensorSpec((None,), tf.int32)),
            label_spec,
        ),
    )
    # The number of trees is known: fit then knows the number of batches (a
    # progress bar with a total, no end-of-data warning after the first epoch).
    ds = ds.apply(tf.data.experimental.assert_cardinality(len(encoded))).cache()
    if shuffle:
        ds = ds.shuffle(len(encoded), seed=seed, reshuffle_each_iteration=True)
    pad_tok = tf.constant("" if string_tokens else 0, tok_spec.dtype)
    ds = ds.padded_batch(
        batch_size,
        padding_values=((pad_tok, -1, -1), -1),
    )
    return ds.prefetch(2)
