"""Generic export: a ``serving_default`` signature over a model's own inputs.

The fallback of ``keras_seqmodels.export`` for models without their own
exporter (zoo models not in ``EXPORTERS``, a ``.keras`` file, a model built in
Python, e.g. an echo state network with a fitted readout). It is Keras's
``model.export``: one ``serving_default`` (also ``serve``) signature whose
inputs are the model's ``keras.Input`` s, named after them, in their dtypes
and shapes, and whose outputs are ``output_0``, ``output_1``, ...
"""

import os


def check_empty_directory(directory, caller="export"):
    """Refuse a folder that exists and holds files (an export never merges)."""
    if os.path.exists(directory) and not os.path.isdir(directory):
        raise FileExistsError(f"{caller}: {directory} is a file; give a new or empty folder")
    if os.path.isdir(directory) and os.listdir(directory):
        raise FileExistsError(f"{caller}: {directory} is not empty; give a new or empty folder")


def export_model(model, directory, **options):
    """Write ``model`` with ``model.export(directory)``.

    The SavedModel's ``serving_default`` signature takes the model's inputs
    by name (``keras.Input(..., name=...)``) and returns ``output_0``, ...

    Args:
        model: a built Keras model (functional or sequential with inputs).
        directory: output folder (must not exist or be empty).
        **options: none; a clear error if any are given.
    """
    if options:
        raise ValueError(
            f"export: the generic exporter takes no options. Received: {sorted(options)}"
        )
    check_empty_directory(directory)
    model.export(directory, format="tf_saved_model", verbose=False)
    return directory
