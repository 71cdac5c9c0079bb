"""SavedModel export of a tree classifier (e.g. the zoo's sentiment model):
bracketed tree strings in, the root class and its label out. The trees are
parsed in the graph (``keras_seqmodels.trees.serving.tf_parse_trees``)."""

from keras_seqmodels.export.generic import check_empty_directory, write_archive
from keras_seqmodels.export.limits import checked_shape, merge_limits
from keras_seqmodels.trees.serving import SERVING_LIMITS, tf_parse_trees

__all__ = ["SERVING_LIMITS", "export_sentiment_savedmodel"]


def export_sentiment_savedmodel(
    model, path, lower=None, limits=None, served_name="tree classifier"
):
    """Export a tree classifier as a SavedModel whose ``serving_default``
    takes bracketed tree strings ``(batch,)`` and returns the root class.

    Signature: ``serving_default(trees: tf.string (batch,)) ->
    {"root_class": int32 (batch,), "root_label": string (batch,),
    "root_probabilities": float32 (batch, C), "error": string (batch,)}``.
    ``root_class`` is the column of the most probable class; ``root_label``
    names it: for a ``TreeClassifier`` its label from the training file
    (``str(label)``, e.g. ``"-1"`` or ``"positive"``), for another network
    ``label_names`` of ``seqmodels sentiment`` (SST's five names for 5
    classes). A second signature, ``labels() -> {"labels": string (C,)}``,
    gives the label of each probability column. Labels inside the request
    strings are ignored.
    A malformed tree (empty or blank, text without brackets, unbalanced
    brackets, a node with no word or sub-tree, a node with more than two
    children) gets ``root_class`` -1, ``root_label`` ``""``, probabilities
    0 and its problem in ``error``, without failing the other trees of the
    request; ``error`` is ``""`` for the others. An empty batch gives empty
    outputs.

    Request limits (``SERVING_LIMITS``, checked in the graph; a request
    beyond one fails with an ``InvalidArgumentError`` naming it): 256 trees,
    131,072 bytes per tree and 1 MiB in all, 32,768 nodes and 512 levels of
    brackets per tree, 65,536 padded nodes (trees x nodes of the largest
    tree); ``trees`` of another shape than ``(batch,)`` is refused the same
    way. Memory and time grow linearly with the request within them.
    TensorFlow backend only.

    Args:
        model: a tree classifier (see module doc), e.g.
            the zoo's sentiment Tree-LSTM or a ``TreeClassifier``.
        path: output directory (must not exist or be empty).
        lower: lower-case tokens (default: the ``TreeClassifier``'s own
            setting, else True, as the zoo model was trained).
        limits: optional dict overriding some of ``SERVING_LIMITS``.
        served_name: the start of the limit messages (``export`` passes the
            zoo name).
    """
    import tensorflow as tf


    check_empty_directory(path)
    limits = merge_limits("export_sentiment_savedmodel", SERVING_LIMITS, limits)
    if lower is None:
        lower = getattr(model, "lower", True)
    names = getattr(model, "label_names", None)
    if names is None:
        from keras_seqmodels.trees.text import label_names

        names = label_names(model.outputs[0].shape[-1])
    # One entry more, "", for the malformed trees' class -1.
    label_table = tf.constant(list(names) + [""])

    def serve(trees):
        trees = checked_shape(served_name, "trees", trees, [None], "(batch,), one string per tree")
        parsed = tf_parse_trees(trees, lower=lower, limits=limits, model_name=served_name)
        logits = model([parsed["tokens"], parsed["children"], parsed["levels"]], training=False)
        # The pre-order root is node 0; a padding column gives rows without
        # nodes (malformed trees, or none at all) something to read.
        root = tf.pad(tf.cast(logits, tf.float32), [[0, 0], [0, 1], [0, 0]])[:, 0]
        good = parsed["error"] == ""
        probs = tf.where(good[:, None], tf.nn.softmax(root), 0.0)
        root_class = tf.where(good, tf.argmax(probs, axis=-1, output_type=tf.int32), -1)
        return {
            "root_class": root_class,
            "root_label": tf.gather(label_table, tf.where(good, root_class, len(names))),
            "root_probabilities": probs,
            "error": parsed["error"],
        }

    return write_archive(path, model, {
        "serving_default": (serve, [tf.TensorSpec([None], tf.string, name="trees")]),
        "labels": (lambda: {"labels": label_table[:-1]}, []),
    })  # fmt: skip
