"""Export zoo models as TensorFlow SavedModels for serving.

``export(name, directory)`` looks the zoo model up in ``EXPORTERS``, a table
from zoo name to the ``"module:function"`` that writes its SavedModel, so a
new zoo model joins with one line here.

Natural inputs of the ``serving_default`` signatures:

- ``multi30k-en-de``: ``inputs``, strings ``(batch,)`` -> ``translations``.
- ``sst-treelstm``: ``trees``, bracketed trees ``(batch,)`` -> ``root_class``.
- ``mnist-renet``: ``pixels``, float32 ``(batch, 28, 28)`` of 0-255 ->
  ``scores``, ``class_id``.
- ``babi-memn2n``: ``story`` and ``question``, strings ``(batch,)`` ->
  ``answer``, ``scores`` (also ``serve_ids`` on the integer id arrays).
- ``ntm-copy``: ``bits``, float32 ``(batch, length, 8)`` of 0/1 -> ``copy``,
  ``logits`` ``(batch, length, 8)``.
- ``ptb-lstm``: ``text``, strings ``(batch,)`` -> ``next_word``,
  ``next_word_logits``, ``log_likelihood``.
- ``ud-ewt-upos``: ``text``, raw strings ``(batch,)`` -> ``tokens`` and
  ``tags`` ``(batch, max_tokens)`` (tokenised as ``seqmodels tag`` does).

The generic fallback: anything not in the table (a zoo model registered
without an exporter; a ``.keras`` file; a model object such as an echo state network with a fitted
readout) is written by Keras's ``model.export``: ``serving_default`` takes
the model's ``keras.Input`` s by name, in their dtypes and shapes, and returns
``output_0``, ``output_1``, ...

    >>> from keras_seqmodels import export   # doctest: +SKIP
    >>> export.export("multi30k-en-de", "/tmp/m30k")  # doctest: +SKIP
    >>> export.export("my_esn.keras", "/tmp/esn")  # doctest: +SKIP
"""

import importlib

EXPORTERS = {
    "babi-memn2n": "keras_seqmodels.export.question_answering:export_memory_qa",
    "mnist-renet": "keras_seqmodels.export.images:export_image_classifier",
    "multi30k-en-de": "keras_seqmodels.export.translation:export_translator",
    "ntm-copy": "keras_seqmodels.export.copy_task:export_copy_model",
    "ptb-lstm": "keras_seqmodels.export.language_model:export_language_model",
    "sst-treelstm": "keras_seqmodels.trees.serving:export_sentiment_savedmodel",
    "ud-ewt-upos": "keras_seqmodels.export.tagging:export_tagger",
}
GENERIC = "keras_seqmodels.export.generic:export_model"


def exporter_for(name):
    """The export function of a zoo model (the generic one if not listed).

    Args:
        name: a zoo model name, or ``None`` for the generic exporter.

    Returns:
        A function ``(model, directory, **options)`` that writes the SavedModel.

    Example:

    >>> exporter_for("sst-treelstm").__name__, exporter_for(None).__name__
    ('export_sentiment_savedmodel', 'export_model')
    """
    module, function = EXPORTERS.get(name, GENERIC).split(":")
    return getattr(importlib.import_module(module), function)


def export(name, directory, **options):
    """Write a zoo model, a ``.keras`` file or a Keras model as a SavedModel.

    Args:
        name: a zoo name (see ``keras_seqmodels.zoo.list_models()``; loaded
            with its SHA-256 checked and exported by its exporter), a path
            to a ``.keras`` file (loaded in safe mode) or a ``keras.Model``;
            the last two get the generic exporter.
        directory: output folder (must not exist or be empty).
        **options: passed to the model's exporter (e.g. ``beam_size``).

    Returns:
        The directory written.

    Example (TensorFlow backend):

    >>> import os, tempfile, keras
    >>> model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2)])
    >>> out = export(model, os.path.join(tempfile.mkdtemp(), "dense"))
    >>> os.path.isfile(os.path.join(out, "saved_model.pb"))
    True
    """
    import os

    import keras

    from keras_seqmodels import zoo

    if isinstance(name, keras.Model):
        model, name = name, None
    elif isinstance(name, str) and name.endswith(".keras"):
        if not os.path.isfile(name):
            raise FileNotFoundError(f"export: no such .keras file: {name}")
        model, name = keras.saving.load_model(name, compile=False, safe_mode=True), None
    elif isinstance(name, str):
        return zoo.load(name).export(directory, **options)
    else:
        raise TypeError(
            "export: `name` must be a zoo name, a path ending in .keras or a "
            f"keras.Model. Received: {type(name).__name__}"
        )
    exporter_for(name)(model, directory, **options)
    return directory


__all__ = ["EXPORTERS", "export", "exporter_for"]
