"""Export models for serving: ``write(model, path, format=...)``, one entry
and one calling convention for every format in ``FORMATS``; a zoo model's
``Task.export(path, format=...)`` calls it with its spec's writer.

- ``savedmodel``: a TensorFlow SavedModel (a folder) whose
  ``serving_default`` signature takes the model's natural input (strings,
  pixels) and checks its request limits in the graph.
- ``litert``: a ``.tflite`` file with fused LSTM and RNN kernels.
- ``onnx``: an ``.onnx`` file with native recurrent nodes.

Where things live. Every writer is a function ``writer(model, path,
**options)`` that returns ``path``. ``FORMATS`` names each format's
generic writer: ``generic.export_model`` (any model's SavedModel),
``litert_export.to_litert`` and ``onnx_export.to_onnx``. ``write`` picks,
in order: the model's own writer for the format (``writer=``: a zoo task
passes the one its ``ModelSpec.exporters`` names, with the options its spec
declares; ``keras_seqmodels.zoo`` feeds this lookup, this package never
imports or calls it),
the SavedModel writer of the model's type (``exporter_for_model``: one
module per type: ``translation.py``, ``language_model.py``, ``trees.py``,
``tagging.py``; ``images.py``, ``question_answering.py`` and
``copy_task.py`` are named by zoo specs), else the format's generic writer.
The LiteRT writer is ``litert_export.py`` (checks, conversion, rewrites),
``litert_layers.py`` (how each layer is traced: a LiteRT converter for a
new layer type goes there), ``litert_flatbuffer.py`` (edits of the
converted file) and ``litert_runtime.py`` (state handling at run time); the
ONNX writer is ``onnx_export.py`` (the walk), ``onnx_recurrent.py`` (the
recurrent nodes: a new recurrent layer type goes there), ``onnx_steps.py``
(their input and outputs under any mask), ``onnx_linear.py`` (the
``linear_rnn`` layers as a ``Scan`` node), ``onnx_layers.py`` (the other
layers: a new non-recurrent layer type goes there), ``onnx_graph.py``,
``onnx_activations.py`` and ``onnx_ops.py``. ``checks.py`` holds what is
checked before an export builds (representative data, unrolled steps,
weights per file) and what an option did to the written file (warnings,
``strict``); ``atomic.py`` writes every file and SavedModel folder complete
or not at all. ``limits.py`` holds the request limits checked inside
SavedModel graphs.

Every signature defends itself: it checks the full shape of each input
(a loaded SavedModel does not check shapes against its signature) and its
request limits inside the graph, before the work that grows with them, and
refuses a request beyond them with an ``InvalidArgumentError`` whose message
names the limit and starts with the served name. Within them, memory and
time grow linearly with the request. Each exporter's ``LIMITS`` holds its
limits (``limits={...}`` overrides them); docs/serving.md lists the
signatures and limits of the zoo's models. Empty and blank strings and empty
batches are answered (empty or blank results). Each export refuses a target
directory that is not empty.

    >>> import keras_seqmodels as ks  # doctest: +SKIP
    >>> ks.zoo.load(NAME).export("/tmp/served")  # doctest: +SKIP
    >>> ks.zoo.load(NAME).export("/tmp/m.tflite", format="litert")  # doctest: +SKIP
    >>> ks.export.write("my_esn.keras", "/tmp/esn.onnx", format="onnx")  # doctest: +SKIP
"""

import typing

from keras_seqmodels.utils.references import resolve


class ExportFormat(typing.NamedTuple):
    """One export format: its generic writer and what it writes."""

    function: str  # "module:function", ``(model, path, **options) -> path``
    suffix: str | None  # the file name's ending (None: a folder)
    written: str  # a few words naming what was written

    def writer(self):
        """The generic writer of this format (imported on use)."""
        return resolve(self.function)


# One entry per format; the CLI's ``--format`` choices are its keys.
FORMATS = {
    "savedmodel": ExportFormat("keras_seqmodels.export.generic:export_model", None, "SavedModel"),
    "litert": ExportFormat(
        "keras_seqmodels.export.litert_export:to_litert", ".tflite", "LiteRT flatbuffer"
    ),
    "onnx": ExportFormat("keras_seqmodels.export.onnx_export:to_onnx", ".onnx", "ONNX graph"),
}


def exporter_for_model(model):
    """``(writer, kind)``: the SavedModel writer a Keras model's type needs
    and a few words naming the type (for messages).

    A ``Translator`` gets ``export_translator`` (beam search inside), a
    ``WordLanguageModel`` ``export_language_model``, a ``TreeClassifier``
    ``export_sentiment_savedmodel`` (trees in), a string tagger (``keras_seqmodels.tagging``)
    ``export_tagger``; anything else the generic ``export_model``.

    Args:
        model: a Keras model object (loaded or built in Python).

    Returns:
        ``(writer, kind)``: the function to call as ``writer(model,
        directory, **options)``, and e.g. ``"a translator"`` (``None`` for
        the generic writer).

    Raises:
        ValueError: for a bare ``EncoderDecoder``: its call is teacher-forced
            and it has no tokenizer, so there is nothing to serve.

    Example:

    >>> import keras
    >>> writer, kind = exporter_for_model(keras.Sequential([keras.Input((3,))]))
    >>> writer.__name__, kind
    ('export_model', None)
    """
    from keras_seqmodels.export.tagging import is_string_tagger
    from keras_seqmodels.language_model import WordLanguageModel
    from keras_seqmodels.seq2seq import EncoderDecoder, Translator
    from keras_seqmodels.trees import TreeClassifier

    if isinstance(model, Translator):
        return resolve("keras_seqmodels.export.translation:export_translator"), "a translator"
    if isinstance(model, EncoderDecoder):
        raise ValueError(
            "an EncoderDecoder (token ids in, teacher-forced logits out) is not a "
            "translator; wrap it with its vocabularies in "
            "keras_seqmodels.seq2seq.Translator (Translator.from_parallel_text trains one "
            "from two text files), save that as .keras and export it"
        )
    if isinstance(model, WordLanguageModel):  # text in: its vocabulary is inside
        writer = resolve("keras_seqmodels.export.language_model:export_language_model")
        return writer, "a language model"
    if isinstance(model, TreeClassifier):  # root_label names its own labels
        writer = resolve("keras_seqmodels.export.trees:export_sentiment_savedmodel")
        return writer, "a tree classifier"
    if is_string_tagger(model):  # tag strings out: served on raw text
        return resolve("keras_seqmodels.export.tagging:export_tagger"), "a tagger"
    return FORMATS["savedmodel"].writer(), None


def write(model, path, format="savedmodel", *, writer=None, **options):
    """Write a model or a ``.keras`` file in ``format``.

    Args:
        model: a ``keras.Model``, or a path to a ``.keras`` file (opened by
            ``utils.loading.load_model_file``: sizes checked, safe mode). A
            zoo model: ``keras_seqmodels.zoo.load(name).export(path,
            format)``, which calls this with its spec's writer and options.
        path: the folder (``savedmodel``: must not exist or be empty) or the
            file (``litert``: ``.tflite``, ``onnx``: ``.onnx``) to write.
        format: a key of ``FORMATS``.
        writer: the writer to use instead of the lookup by model type
            (a zoo model's spec names one, e.g. a SavedModel signature of
            its own); ``(model, path, **options) -> path``.
        **options: passed to the writer (e.g. ``beam_size`` for a
            translator's SavedModel, ``quantize`` for LiteRT); an option the
            writer does not take is a ``ValueError`` naming it.

    Returns:
        ``path``.

    Raises:
        ValueError: an unknown format, an option the writer does not take,
            or a model the format cannot carry (the writer's message).
        TypeError: ``model`` is neither (a zoo name: use
            ``keras_seqmodels.zoo.load(name).export``).
        keras_seqmodels.utils.errors.ModelFileError: an unreadable ``.keras``
            file (``ModelFileNotFoundError``, also a ``FileNotFoundError``,
            for a missing one).

    Example (TensorFlow backend):

    >>> import os, tempfile, keras
    >>> model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2)])
    >>> out = write(model, os.path.join(tempfile.mkdtemp(), "dense"))
    >>> os.path.isfile(os.path.join(out, "saved_model.pb"))
    True
    """
    import keras

    if format not in FORMATS:
        raise ValueError(
            f"export: `format` must be one of {', '.join(FORMATS)}. Received: format={format!r}"
        )
    if isinstance(model, str) and model.endswith(".keras"):
        from keras_seqmodels.utils.loading import load_model_file

        model = load_model_file(model, option="export")
    elif not isinstance(model, keras.Model):
        raise TypeError(
            "export: `model` must be a keras.Model or a path ending in .keras (for a zoo "
            "model, keras_seqmodels.zoo.load(name).export(path, format=...)). "
            f"Received: {model!r}"[:300]
        )
    kind = None
    if writer is None:
        writer, kind = exporter_for_model(model) if format == "savedmodel" else (None, None)
        writer = writer or FORMATS[format].writer()
    if format == "savedmodel":
        options.setdefault("served_name", model.name or "model")
    _check_options(writer, options, format, kind)
    writer(model, path, **options)
    return path


def _check_options(writer, options, format, kind):
    """An option ``writer`` does not take is one ``ValueError`` naming it."""
    import inspect

    parameters = inspect.signature(writer).parameters.values()
    if any(p.kind is p.VAR_KEYWORD for p in parameters):
        return  # it checks its own
    taken = {p.name for p in parameters if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
    taken -= {"model", "path", "directory"}
    unknown = sorted(set(options) - taken)
    if unknown:
        what = kind or f"this model ({writer.__name__})"
        raise ValueError(
            f"export: {', '.join(unknown)} is not an option of the {format} export of "
            f"{what}; its options: {', '.join(sorted(taken)) or 'none'}"
        )


def export(model, directory, **options):
    """``write(model, directory, format="savedmodel", **options)``: a
    TensorFlow SavedModel.

    Args:
        model: a Keras model, or the path of a ``.keras`` file.
        directory: the SavedModel's folder (new or empty).
        **options: options of the model type's SavedModel writer (for
            example ``beam_size`` for a translator); an option it does not
            take is a ``ValueError`` naming it.

    Returns:
        The path written.

    Example (TensorFlow backend):

    >>> import os, tempfile, keras
    >>> model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2)])
    >>> out = export(model, os.path.join(tempfile.mkdtemp(), "dense"))
    >>> os.path.isfile(os.path.join(out, "saved_model.pb"))
    True
    """
    return write(model, directory, "savedmodel", **options)


def to_onnx(model, path, *, opset=None):
    """Write ``model`` as an ONNX file whose recurrent layers are native ONNX
    ``LSTM`` / ``GRU`` / ``RNN`` nodes (no ``Loop``, no ``Scan``).

    ``keras_seqmodels.export.onnx_export.to_onnx``, imported on use (it
    needs the ``onnx`` package, in the ``[deploy]`` extra); its docstring
    lists the layers mapped and what is new relative to Keras's
    ``model.export(format="onnx")`` and tf2onnx.

    Args:
        model: a built functional or ``Sequential`` Keras model, or a path
            to a ``.keras`` file.
        path: the ``.onnx`` file to write.
        opset: the ONNX opset, from 14 to the installed ``onnx``'s newest;
            default 17.

    Returns:
        ``path``.

    Example:

    >>> import keras, keras_seqmodels as ks
    >>> model = keras.Sequential([keras.Input((None, 3)),
    ...                           ks.layers.Recurrent(ks.cells.GRUCell(4))])
    >>> to_onnx(model, "gru.onnx")
    'gru.onnx'
    """
    from keras_seqmodels.export.onnx_export import to_onnx as _to_onnx

    return _to_onnx(model, path, opset=opset)


def to_litert(
    model,
    path,
    *,
    quantize=None,
    representative_data=None,
    batch_size=None,
    fuse=("lstm", "rnn"),
    stateful=False,
    strict=False,
):
    """Write ``model`` as a LiteRT (``.tflite``) file with fused LSTM kernels.

    LSTM layers (the package's ``Recurrent(LSTMCell)`` with or without
    peepholes, ``ks.layers.LSTM``, Keras's ``LSTM``, and ``Bidirectional``
    over them) become LiteRT's ``UNIDIRECTIONAL_SEQUENCE_LSTM``; other
    recurrent layers a loop of builtin ops; never a Flex op. Implemented in
    ``keras_seqmodels.export.litert_export`` (imported on use: it needs
    TensorFlow); see docs/deploy.md.

    Args:
        model: a functional or ``Sequential`` Keras model (TensorFlow backend).
        path: the ``.tflite`` file to write.
        quantize: ``None``, ``"dynamic"``, ``"float16"`` or ``"int8"``.
        representative_data: sample inputs for ``"int8"`` (samples first).
        batch_size: ``None`` keeps the model's batch size; an int fixes it.
        fuse: the layer kinds written as fused ops (``"lstm"``, ``"rnn"``:
            Elman layers); the others convert as loops of builtin ops.
        stateful: ``False``: each call starts from zero states, as
            ``model.predict``; ``True``: the fused ops carry their state to
            the next call (streaming).
        strict: ``True``: an option that did not take effect in the file
            (weights left float32 by ``quantize``, a layer written as a loop
            instead of the fused op) is a ``ValueError`` and nothing is
            written; ``False``: a warning naming the layer or weights.

    Returns:
        ``path``.

    Example (TensorFlow backend; ``FILL`` zeroes the LSTM's state before each
    call, ``SHAPE``, ``SLICE`` and ``CONCATENATION`` size it to the batch):

    >>> import os, tempfile, keras, keras_seqmodels as ks
    >>> from keras_seqmodels.export.litert_export import op_names
    >>> model = keras.Sequential([keras.Input((5, 3)),
    ...                           ks.layers.Recurrent(ks.cells.LSTMCell(4))])
    >>> out = to_litert(model, os.path.join(tempfile.mkdtemp(), "lstm.tflite"))
    >>> sorted(set(op_names(open(out, "rb").read())))
    ['CONCATENATION', 'FILL', 'SHAPE', 'SLICE', 'STRIDED_SLICE', 'UNIDIRECTIONAL_SEQUENCE_LSTM']
    """
    from keras_seqmodels.export.litert_export import to_litert as _to_litert

    return _to_litert(
        model,
        path,
        quantize=quantize,
        representative_data=representative_data,
        batch_size=batch_size,
        fuse=fuse,
        stateful=stateful,
        strict=strict,
    )


__all__ = [
    "FORMATS",
    "export",
    "exporter_for_model",
    "to_litert",
    "to_onnx",
    "write",
]
