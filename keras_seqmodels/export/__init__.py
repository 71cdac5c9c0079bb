"""Export zoo models as TensorFlow SavedModels for serving.

``export(name, directory)`` looks the zoo model up in ``EXPORTERS``, a table
from zoo name to the ``"module:function"`` that writes its SavedModel, so a
new zoo model joins with one line here. Models not in the table get the
generic exporter (Keras's ``model.export``: a ``serve`` endpoint over the
model's inputs).

    >>> from keras_seqmodels import export   # doctest: +SKIP
    >>> export.export("multi30k-en-de", "/tmp/m30k")  # doctest: +SKIP
"""

import importlib

EXPORTERS = {
    "multi30k-en-de": "keras_seqmodels.export.translation:export_translator",
    "sst-treelstm": "keras_seqmodels.trees.serving:export_sentiment_savedmodel",
}
GENERIC = "keras_seqmodels.export.generic:export_model"


def exporter_for(name):
    """The export function of a zoo model (the generic one if not listed)."""
    module, function = EXPORTERS.get(name, GENERIC).split(":")
    return getattr(importlib.import_module(module), function)


def export(name, directory, **options):
    """Load zoo model ``name`` (SHA-256 checked) and write a SavedModel.

    Args:
        name: a zoo name (see ``keras_seqmodels.zoo.list_models()``).
        directory: output folder (must not exist or be empty).
        **options: passed to the model's exporter (e.g. ``beam_size``).

    Returns:
        The directory written.
    """
    from keras_seqmodels import zoo

    model = zoo.load(name)
    exporter_for(name)(model, directory, **options)
    return directory


__all__ = ["EXPORTERS", "export", "exporter_for"]
