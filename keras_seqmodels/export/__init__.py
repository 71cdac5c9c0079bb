"""Export models for serving: one entry per format in ``FORMATS``.

- ``savedmodel``: ``export(name_or_model, directory)``, a TensorFlow
  SavedModel whose ``serving_default`` signature takes the model's natural
  input (strings, pixels) and checks its request limits in the graph.
- ``litert``: ``to_litert(model, path)``, a ``.tflite`` file with fused LSTM
  kernels (``litert_export``).
- ``onnx``: ``to_onnx(model, path)``, an ``.onnx`` file with native recurrent
  nodes (``onnx_export``).

A zoo model's SavedModel exporter is the one its folder's spec names
(``ModelSpec.exporters["savedmodel"]``, ``keras_seqmodels.zoo.models``;
``exporter_for(name)``); a ``.keras`` file or a model object gets the
exporter of its type (``exporter_for_model``: a translator, a word-level
language model, a tree classifier, a string tagger); anything else the
generic one (``export.generic``): ``serving_default`` takes the model's
``keras.Input`` s by name, in their dtypes and shapes, and returns
``output_0``, ``output_1``, ... as Keras's ``model.export`` does.

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

    >>> from keras_seqmodels import export   # doctest: +SKIP
    >>> export.export(NAME, "/tmp/served")  # doctest: +SKIP
    >>> export.export("my_esn.keras", "/tmp/esn")  # doctest: +SKIP
"""

import typing

from keras_seqmodels.utils.bounds import check_keras_file

GENERIC = "keras_seqmodels.export.generic:export_model"


class ExportFormat(typing.NamedTuple):
    """One export format: the function that writes it and what it writes."""

    function: str  # "module:function"
    suffix: str | None  # the file name's ending (None: a folder)
    written: str  # a few words naming what was written

    def writer(self):
        """The function that writes this format (imported on use)."""
        return _function(self.function)


# One entry per format; the CLI's ``--format`` choices are its keys.
FORMATS = {
    "savedmodel": ExportFormat("keras_seqmodels.export:export", None, "SavedModel"),
    "litert": ExportFormat("keras_seqmodels.export:to_litert", ".tflite", "LiteRT flatbuffer"),
    "onnx": ExportFormat("keras_seqmodels.export:to_onnx", ".onnx", "ONNX graph"),
}


def _function(reference):
    from keras_seqmodels.utils.references import resolve

    return resolve(reference)


def __getattr__(name):
    """``EXPORTERS``, the former hand-kept table (one release, with a warning)."""
    if name != "EXPORTERS":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import warnings

    from keras_seqmodels.zoo.models import specs

    warnings.warn(
        "keras_seqmodels.export.EXPORTERS is replaced by the zoo models' specs "
        "(keras_seqmodels.zoo.models.specs()[name].exporters) and "
        "keras_seqmodels.export.exporter_for(name); the old name goes in the next release",
        DeprecationWarning,
        stacklevel=2,
    )
    return {
        n: s.exporters["savedmodel"]
        for n, s in specs().items()
        if isinstance(s.exporters.get("savedmodel"), str)
    }


def exporter_for(name, format="savedmodel", default=None):
    """The export function of a zoo model (the generic one if its spec names none).

    Args:
        name: a zoo model name, or ``None`` for the generic exporter.
        format: a key of ``FORMATS``. A spec may name its own exporter for
            any format (e.g. a string-in tagger writes its id-level network
            for ``"onnx"``).
        default: what to return where the spec names no exporter for
            ``format`` (default: the generic SavedModel exporter).

    Returns:
        A function ``(model, directory, **options)`` that writes the export;
        for a zoo model whose spec has ``export_options`` (e.g. its shipped
        vocabulary), one that passes them unless the caller gives them.

    Example:

    >>> exporter_for(None).__name__
    'export_model'
    """
    from keras_seqmodels.zoo import models

    return models.exporter_for(name, format, default)


def exporter_for_model(model):
    """``(exporter, kind)`` for a Keras model object: the exporter its type
    needs and a few words naming it (for messages).

    A ``Translator`` gets ``export_translator`` (beam search inside), a
    ``WordLanguageModel`` ``export_language_model``, a ``TreeClassifier``
    ``export_sentiment_savedmodel`` (trees in), a string tagger (``keras_seqmodels.tagging``)
    ``export_tagger``; anything else the generic ``export_model``.

    Args:
        model: a Keras model object (loaded or built in Python).

    Returns:
        ``(exporter, kind)``: the function to call as ``exporter(model,
        directory, **options)``, and e.g. ``"a translator"`` (``None`` for
        the generic exporter).

    Raises:
        ValueError: for a bare ``EncoderDecoder``: its call is teacher-forced
            and it has no tokenizer, so there is nothing to serve.

    Example:

    >>> import keras
    >>> exporter, kind = exporter_for_model(keras.Sequential([keras.Input((3,))]))
    >>> exporter.__name__, kind
    ('export_model', None)
    """
    from keras_seqmodels.export.tagging import is_string_tagger
    from keras_seqmodels.language_model import WordLanguageModel
    from keras_seqmodels.seq2seq import EncoderDecoder, Translator
    from keras_seqmodels.trees import TreeClassifier

    if isinstance(model, Translator):
        return _function("keras_seqmodels.export.translation:export_translator"), "a translator"
    if isinstance(model, EncoderDecoder):
        raise ValueError(
            "an EncoderDecoder (token ids in, teacher-forced logits out) is not a "
            "translator; wrap it with its vocabularies in "
            "keras_seqmodels.seq2seq.Translator (Translator.from_parallel_text trains one "
            "from two text files), save that as .keras and export it"
        )
    if isinstance(model, WordLanguageModel):  # text in: its vocabulary is inside
        exporter = _function("keras_seqmodels.export.language_model:export_language_model")
        return exporter, "a language model"
    if isinstance(model, TreeClassifier):  # root_label names its own labels
        exporter = _function("keras_seqmodels.export.trees:export_sentiment_savedmodel")
        return exporter, "a tree classifier"
    if is_string_tagger(model):  # tag strings out: served on raw text
        return _function("keras_seqmodels.export.tagging:export_tagger"), "a tagger"
    return _function(GENERIC), None


def export(name, directory, **options):
    """Write a zoo model, a ``.keras`` file or a Keras model as a SavedModel.

    Args:
        name: a zoo name (see ``keras_seqmodels.zoo.list_models()``; loaded
            with its SHA-256 checked and exported by its exporter), a path
            to a ``.keras`` file (loaded in safe mode) or a ``keras.Model``;
            the last two get the exporter of their type
            (``exporter_for_model``).
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
        check_keras_file(name)  # sizes in its config bounded before Keras builds it
        model, name = keras.saving.load_model(name, compile=False, safe_mode=True), None
    elif isinstance(name, str):
        options.setdefault("served_name", name)  # the start of limit messages
        return zoo.load(name).export(directory, **options)
    else:
        raise TypeError(
            "export: `name` must be a zoo name, a path ending in .keras or a "
            f"keras.Model. Received: {type(name).__name__}"
        )
    options.setdefault("served_name", name or getattr(model, "name", None) or "model")
    exporter, _ = exporter_for_model(model)
    exporter(model, directory, **options)
    return directory


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
    )


__all__ = [
    "FORMATS",
    "export",
    "exporter_for",
    "exporter_for_model",
    "to_litert",
    "to_onnx",
]
