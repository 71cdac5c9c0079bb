"""SavedModel export of an image classifier (e.g. a ReNet): pixels in, digit out."""

from keras_seqmodels.export.generic import check_empty_directory, write_archive
from keras_seqmodels.export.limits import at_most, checked_shape, guard, merge_limits

# Documented request limits of the signature, checked in the graph.
LIMITS = {"max_batch": 1024}  # images per request


def export_image_classifier(
    model, directory, class_names=None, limits=None, served_name="image classifier"
):
    """Write a SavedModel whose ``serving_default`` classifies images.

    The signature takes ``pixels``, float32 ``(batch, height, width)`` with
    the values a grayscale image file holds (0-255; the model scales them
    itself), for MNIST ``(batch, 28, 28)``, and returns
    ``{"scores": float32 (batch, classes) logits, "class_id": int32
    (batch,), "error": string (batch,)}`` plus ``"class_name"`` (string
    ``(batch,)``) when ``class_names`` is given::

        import numpy as np, tensorflow as tf
        served = tf.saved_model.load(directory)
        image = np.zeros((1, 28, 28), "float32")           # e.g. a decoded PNG
        served.signatures["serving_default"](pixels=tf.constant(image))["class_id"]

    The signature checks the whole shape of ``pixels`` in the graph (a
    request of another rank or image size, e.g. ``(2, 28, 28, 3)`` for
    a 28 x 28 model, fails with an ``InvalidArgumentError`` naming the expected
    shape) and the request limit: at most 1,024 images (``LIMITS``). An
    image with a NaN or infinite pixel gets ``class_id`` -1, scores 0 and
    ``error`` "pixels must be finite" (``""`` for the others, which are
    answered as usual). An empty batch gives empty outputs.

    Args:
        model: a Keras model with one image input (rank 3 or 4, static
            height and width) and one output of class scores.
        directory: output folder (must not exist or be empty).
        class_names: optional list of class labels, one per score.
        limits: optional dict overriding some of ``LIMITS``.
        served_name: the start of the limit messages (``export`` passes the
            zoo name).
    """
    import tensorflow as tf

    check_empty_directory(directory)
    limits = merge_limits("export_image_classifier", LIMITS, limits)
    if len(model.inputs) != 1:
        raise ValueError(
            f"export_image_classifier: the model must have one image input. "
            f"Received a model with {len(model.inputs)} inputs"
        )
    shape = list(model.inputs[0].shape)
    if len(shape) not in (3, 4) or None in shape[1:]:
        raise ValueError(
            "export_image_classifier: the model's input must be (batch, height, width) "
            f"or (batch, height, width, channels) with static sizes. Received: {shape}"
        )
    names = None
    if class_names is not None:
        names = tf.constant([str(c) for c in class_names])

    def classify(pixels):
        # A loaded signature does not check shapes against its spec: without
        # this check a (2, 28, 28, 3) request ran as 6 images.
        pixels = checked_shape(served_name, "pixels", pixels, [None] + shape[1:])
        pixels = guard([pixels], [
            at_most(served_name, "images per request", tf.shape(pixels)[0], limits["max_batch"]),
        ])[0]
        # An image with a NaN or an infinity is answered alone: class -1.
        finite = tf.reduce_all(tf.math.is_finite(pixels), axis=list(range(1, len(shape))))
        scores = model(tf.where(tf.math.is_finite(pixels), pixels, 0.0), training=False)
        scores = tf.where(finite[:, None], tf.cast(scores, tf.float32), 0.0)
        class_id = tf.argmax(scores, axis=-1, output_type=tf.int32)
        out = {
            "scores": scores,
            "class_id": tf.where(finite, class_id, -1),
            "error": tf.where(finite, "", "pixels must be finite"),
        }
        if names is not None:
            out["class_name"] = tf.where(finite, tf.gather(names, class_id), "")
        return out

    endpoint = (classify, [tf.TensorSpec([None] + shape[1:], tf.float32, name="pixels")])
    return write_archive(directory, model, {"serving_default": endpoint})
