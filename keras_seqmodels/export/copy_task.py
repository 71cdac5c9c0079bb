"""SavedModel export of a copy-task model (an NTM): a bit sequence in, its copy out."""

from keras_seqmodels.export.generic import check_empty_directory, write_archive
from keras_seqmodels.export.limits import at_most, checked_shape, guard, merge_limits

# Documented request limits of the signature, checked in the graph.
LIMITS = {
    "max_batch": 256,  # sequences per request
    "max_length": 512,  # steps per sequence (the model runs 2 x length + 1)
    "max_padded_steps": 65_536,  # sequences x length
}


def export_copy_model(model, directory, limits=None, served_name="copy model"):
    """Write a SavedModel whose ``serving_default`` copies bit sequences.

    The signature takes ``bits``, float32 ``(batch, length, bits)`` of 0/1
    (for the zoo's NTM ``bits`` = 8; the sequences of one request share a
    length), and returns ``{"copy": float32 (batch, length, bits)`` of 0/1,
    ``"logits": float32 (batch, length, bits)}``. Inside, it lays the
    request out as the model was trained: the bits with an empty delimiter
    channel, one delimiter step, then ``length`` blank steps during which
    the model recalls the sequence; the outputs are those recall steps::

        import numpy as np, tensorflow as tf
        served = tf.saved_model.load(directory)
        bits = np.random.randint(0, 2, (1, 10, 8)).astype("float32")
        served.signatures["serving_default"](bits=tf.constant(bits))["copy"]

    The signature checks in the graph that ``bits`` is ``(batch, length,
    bits)`` with values 0 or 1, and the request limits (``LIMITS``): at most
    256 sequences of at most 512 steps, 65,536 steps in all; otherwise an
    ``InvalidArgumentError`` names the shape, the values or the limit. An
    empty batch or zero steps give empty outputs.

    Args:
        model: a Keras model ``(batch, time, bits + 1) -> (batch, time,
            bits)`` logits (the last input channel is the delimiter).
        directory: output folder (must not exist or be empty).
        limits: optional dict overriding some of ``LIMITS``.
        served_name: the start of the limit messages (``export`` passes the
            zoo name).
    """
    import tensorflow as tf

    check_empty_directory(directory)
    limits = merge_limits("export_copy_model", LIMITS, limits)
    channels = model.inputs[0].shape[-1]
    if len(model.inputs) != 1 or channels is None or channels < 2:
        raise ValueError(
            "export_copy_model: the model must take one input (batch, time, bits + 1) "
            f"with a known last dimension. Received inputs {model.inputs}"
        )
    width = channels - 1

    def copy(bits):
        bits = checked_shape(served_name, "bits", bits, [None, None, width])
        batch, length = tf.shape(bits)[0], tf.shape(bits)[1]
        bits = guard([bits], [
            at_most(served_name, "sequences per request", batch, limits["max_batch"]),
            at_most(served_name, "steps per sequence", length, limits["max_length"]),
            at_most(served_name, "steps in all (sequences x length)", batch * length,
                    limits["max_padded_steps"]),
            tf.debugging.assert_equal(
                tf.reduce_all((bits == 0.0) | (bits == 1.0)), True,
                message=f"{served_name}: bits must be 0 or 1",
            ),
        ])[0]
        batch, length = tf.shape(bits)[0], tf.shape(bits)[1]
        data = tf.pad(bits, [[0, 0], [0, 0], [0, 1]])
        delimiter = tf.one_hot(tf.fill([batch, 1], width), channels, dtype=bits.dtype)
        blank = tf.zeros([batch, length, channels], bits.dtype)
        logits = model(tf.concat([data, delimiter, blank], axis=1), training=False)
        logits = tf.cast(logits[:, length + 1 :], tf.float32)
        return {"copy": tf.cast(logits > 0, tf.float32), "logits": logits}

    endpoint = (copy, [tf.TensorSpec([None, None, width], tf.float32, name="bits")])
    return write_archive(directory, model, {"serving_default": endpoint})
