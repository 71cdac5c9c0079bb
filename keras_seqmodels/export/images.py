"""SavedModel export of an image classifier (mnist-renet): pixels in, digit out."""

from keras_seqmodels.export.generic import check_empty_directory


def export_image_classifier(model, directory, class_names=None):
    """Write a SavedModel whose ``serving_default`` classifies images.

    The signature takes ``pixels``, float32 ``(batch, height, width)`` with
    the values a grayscale image file holds (0-255; the model scales them
    itself), for mnist-renet ``(batch, 28, 28)``, and returns
    ``{"scores": float32 (batch, classes) logits, "class_id": int32
    (batch,)}`` plus ``"class_name"`` (string ``(batch,)``) when
    ``class_names`` is given::

        import numpy as np, tensorflow as tf
        served = tf.saved_model.load(directory)
        image = np.zeros((1, 28, 28), "float32")           # e.g. a decoded PNG
        served.signatures["serving_default"](pixels=tf.constant(image))["class_id"]

    Args:
        model: a Keras model with one image input (rank 3 or 4, static
            height and width) and one output of class scores.
        directory: output folder (must not exist or be empty).
        class_names: optional list of class labels, one per score.
    """
    import keras
    import tensorflow as tf

    check_empty_directory(directory)
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
        scores = model(pixels, training=False)
        out = {"scores": scores, "class_id": tf.argmax(scores, axis=-1, output_type=tf.int32)}
        if names is not None:
            out["class_name"] = tf.gather(names, out["class_id"])
        return out

    archive = keras.export.ExportArchive()
    archive.track(model)
    archive.add_endpoint(
        name="serving_default",
        fn=classify,
        input_signature=[tf.TensorSpec([None] + shape[1:], tf.float32, name="pixels")],
    )
    archive.write_out(directory, verbose=False)
    return directory
