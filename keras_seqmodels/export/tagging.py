"""SavedModel export of a string-in tagger (e.g. the zoo's UPOS tagger): raw
text in, tokens and one tag per token out."""

from keras_seqmodels.export.generic import check_empty_directory, write_archive
from keras_seqmodels.export.limits import (
    at_most,
    checked_shape,
    guard,
    max_or_zero,
    merge_limits,
    string_checks,
)

# Documented request limits of the signature, checked in the graph.
LIMITS = {
    "max_batch": 256,  # texts per request
    "max_bytes": 16_384,  # bytes per text
    "max_tokens": 4_096,  # tokens per text
}


def is_string_tagger(model):
    """Whether ``model`` is a string tagger that ``export_tagger`` serves.

    That is a Keras model with one string input and a ``TagLookup`` as its
    last layer (tag strings out), as ``keras_seqmodels.tagging.train_tagger``
    and the zoo's UPOS tagger build; ``export`` and ``seqmodels export``
    recognise a ``.keras`` file holding one this way.

    Args:
        model: any object.

    Returns:
        ``True`` or ``False``.

    Example (TensorFlow backend):

    >>> from keras_seqmodels.tagging import build_tagger
    >>> tagger, trainer = build_tagger(["a"], ["a"], ["DET"], embedding_dim=2,
    ...                                char_units=2, units=2)
    >>> is_string_tagger(tagger), is_string_tagger(trainer)
    (True, False)
    """
    import keras

    from keras_seqmodels.tagging.tag_lookup import TagLookup

    if not isinstance(model, keras.Model) or not getattr(model, "layers", None):
        return False
    try:
        inputs = model.inputs
    except (AttributeError, ValueError):
        return False
    return (
        isinstance(inputs, list)
        and len(inputs) == 1
        and inputs[0].dtype == "string"
        and isinstance(model.layers[-1], TagLookup)
    )


def export_tagger(model, directory, limits=None, served_name="tagger"):
    """Write a SavedModel whose ``serving_default`` tokenises and tags text.

    The signature takes ``text``, a string tensor ``(batch,)`` of raw
    sentences, splits each into tokens with the same rules as
    ``seqmodels tag`` (``keras_seqmodels.data.tokenize``: punctuation and
    clitics split off, UD English style, here as TensorFlow string ops) and
    returns ``{"tokens": string (batch, max_tokens), "tags": string (batch,
    max_tokens)}``, ``""`` at padding. Plain TensorFlow (or TensorFlow
    Serving) loads and runs it without keras_seqmodels::

        import tensorflow as tf
        served = tf.saved_model.load(directory)
        out = served.signatures["serving_default"](text=tf.constant(["I can't eat butter!"]))
        out["tokens"], out["tags"]   # [[I, ca, n't, eat, butter, !]], [[PRON, AUX, ...]]

    Request limits (``LIMITS``), checked in the graph before tagging (an
    ``InvalidArgumentError`` names the one exceeded): 256 texts, 16,384 bytes
    and 4,096 tokens per text; ``text`` of another shape than ``(batch,)``
    (a scalar, a matrix) is refused the same way. An empty or blank text
    gives a row of padding; an empty batch gives ``(0, 0)`` outputs.

    Args:
        model: a Keras model with one string input ``(batch,)`` of
            whitespace-separated tokens and one string output ``(batch,
            tokens)`` of tags (as the zoo's UPOS tagger, or a model from
            ``keras_seqmodels.tagging.train_tagger``), or a zoo task holding
            one (``.model``).
        directory: output folder (must not exist or be empty).
        limits: optional dict overriding some of ``LIMITS``.
        served_name: the start of the limit messages (``export`` passes the
            zoo name).
    """
    import tensorflow as tf

    from keras_seqmodels.data.tokenize import tf_tokenize

    model = getattr(model, "model", model)
    check_empty_directory(directory)
    limits = merge_limits("export_tagger", LIMITS, limits)
    if len(model.inputs) != 1 or model.inputs[0].dtype != "string":
        raise ValueError(
            "export_tagger: the model must have one string input (batch,) of "
            f"whitespace-separated tokens. Received inputs: {model.inputs}"
        )

    def serve(text):
        text = checked_shape(served_name, "text", text, [None], "(batch,), one string per text")
        text = guard([text], string_checks(
            served_name, text, limits["max_batch"], limits["max_bytes"], noun="texts"
        ))[0]
        tokens = tf_tokenize(text)
        longest = max_or_zero(tokens.row_lengths())
        tokens = guard([tokens], [
            at_most(served_name, "tokens per text", longest, limits["max_tokens"])
        ])[0]
        padded = tokens.to_tensor("")
        tags = model(tf.strings.reduce_join(tokens, axis=-1, separator=" "))
        # The model keeps at least one (padding) slot; a batch of blank texts has none.
        tags = tags[:, : tf.shape(padded)[1]]
        return {"tokens": padded, "tags": tf.where(padded == "", "", tags)}

    endpoint = (serve, [tf.TensorSpec([None], tf.string, name="text")])
    return write_archive(directory, model, {"serving_default": endpoint})
