"""Generic export: a ``serving_default`` signature over a model's own inputs.

The fallback of ``keras_seqmodels.export`` for models without their own
exporter (zoo models not in ``EXPORTERS``, a ``.keras`` file, a model built in
Python, e.g. an echo state network with a fitted readout). Like Keras's
``model.export``, one ``serving_default`` signature whose inputs are the
model's ``keras.Input`` s, named after them, in their dtypes and shapes, and
whose outputs are ``output_0``, ``output_1``, ...; unlike it, the signature
checks the full input shapes and the request limits (``LIMITS``) in the graph.
"""

import os

from keras_seqmodels.export.atomic import atomic_folder


def check_empty_directory(directory, caller="export"):
    """Refuse a folder that exists and holds files (an export never merges)."""
    if os.path.exists(directory) and not os.path.isdir(directory):
        raise FileExistsError(f"{caller}: {directory} is a file; give a new or empty folder")
    if os.path.isdir(directory) and os.listdir(directory):
        raise FileExistsError(f"{caller}: {directory} is not empty; give a new or empty folder")


def write_archive(directory, model, endpoints, track=()):
    """Write ``model`` as a SavedModel with the given signatures, traced
    without device-specific kernels (``backend_rnn.portable``).

    Args:
        directory: output folder (``check_empty_directory`` it first).
        model: the Keras model (or layer) the endpoints call.
        endpoints: ``{name: (fn, input_signature)}``, in order; ``name``
            ``"serving_default"`` is the default signature.
        track: other resources the endpoints use (lookup tables).

    Returns:
        ``directory``.
    """
    import keras

    from keras_seqmodels.layers import backend_rnn

    archive = keras.export.ExportArchive()
    for resource in (model, *track):
        archive.track(resource)
    # Traced without cuDNN kernels, so that a model exported on a GPU also
    # serves on CPU. Written complete or not at all (atomic_folder).
    os.makedirs(os.path.dirname(os.path.abspath(directory)), exist_ok=True)
    with backend_rnn.portable(), atomic_folder(directory) as partial:
        for name, (fn, signature) in endpoints.items():
            archive.add_endpoint(name=name, fn=fn, input_signature=signature)
        archive.write_out(partial, verbose=False)
    return directory


# Documented request limits of the generic signature, checked in the graph.
LIMITS = {
    "max_batch": 1024,  # rows per request (the first dimension of every input)
    "max_bytes": 16_384,  # bytes per string (string inputs)
    "max_total_bytes": 1_048_576,  # bytes of all strings of one input
    "max_length": 65_536,  # any other dimension left open by the model (e.g. time)
    "max_elements": 16_777_216,  # elements of one numeric input
}


def export_model(model, directory, limits=None, served_name=None, **options):
    """Write ``model`` as a SavedModel with a checked ``serving_default``.

    The signature takes the model's inputs by name (``keras.Input(...,
    name=...)``), in their dtypes and shapes, and returns ``output_0``, ...,
    as Keras's ``model.export`` does. Before the model runs it checks in the
    graph, for every input, the full shape (a loaded signature does not:
    a request of another rank or size would run reshaped; it is refused
    with ``"{served_name}: wrong request shape: ..."``) and the request
    limits (``LIMITS``): at most 1,024 rows; string inputs 16,384 bytes per
    string and 1 MiB in all; numeric inputs at most 65,536 along each
    dimension the model leaves open and 16,777,216 elements. A request
    beyond them fails with an ``InvalidArgumentError`` naming the limit.
    A model with several inputs given as a dict (not a list) is written by
    ``model.export`` unchecked.

    Args:
        model: a built Keras model (functional or sequential with inputs).
        directory: output folder (must not exist or be empty).
        limits: optional dict overriding some of ``LIMITS``.
        served_name: the start of the limit messages (``export`` passes the
            zoo name or ``"model"``).
        **options: none; a clear error if any are given.
    """
    import tensorflow as tf

    from keras_seqmodels.export.limits import (
        at_most,
        checked_shape,
        guard,
        max_or_zero,
        merge_limits,
    )

    if options:
        raise ValueError(
            f"export: the generic exporter takes no options. Received: {sorted(options)}"
        )
    check_empty_directory(directory)
    limits = merge_limits("export_model", LIMITS, limits)
    served_name = served_name or getattr(model, "name", None) or "model"
    inputs = list(getattr(model, "inputs", None) or [])
    structure = getattr(model, "_inputs_struct", inputs)
    if not inputs or (len(inputs) > 1 and not isinstance(structure, (list, tuple))):
        model.export(directory, format="tf_saved_model", verbose=False)
        return directory
    specs = [
        tf.TensorSpec(t.shape, t.dtype, name=getattr(t, "name", None) or f"input_{i}")
        for i, t in enumerate(inputs)
    ]

    def checked(x, spec):
        name = spec.name
        x = checked_shape(served_name, name, x, spec.shape)
        shape = tf.shape(x, out_type=tf.int64)
        checks = []
        if spec.shape.rank:
            checks.append(at_most(served_name, f"rows of `{name}` per request", shape[0],
                                  limits["max_batch"]))
        if x.dtype == tf.string:
            length = tf.strings.length(x)
            checks += [
                at_most(served_name, f"bytes per string of `{name}`", max_or_zero(length),
                        limits["max_bytes"]),
                at_most(served_name, f"bytes in all of `{name}`", tf.reduce_sum(length),
                        limits["max_total_bytes"]),
            ]
        else:
            for axis, dim in enumerate(spec.shape):
                if axis and dim is None:
                    checks.append(at_most(served_name, f"steps along axis {axis} of `{name}`",
                                          shape[axis], limits["max_length"]))
            checks.append(at_most(served_name, f"elements of `{name}`", tf.size(x, tf.int64),
                                  limits["max_elements"]))
        return guard([x], checks)[0]

    if len(specs) == 1:
        fn = lambda x: model(checked(x, specs[0]), training=False)  # noqa: E731
        signature = specs
    else:
        fn = lambda xs: model(  # noqa: E731
            [checked(x, spec) for x, spec in zip(xs, specs)], training=False
        )
        signature = [specs]
    return write_archive(directory, model, {"serving_default": (fn, signature)})
