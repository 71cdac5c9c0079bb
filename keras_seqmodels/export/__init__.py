"""Export zoo models as TensorFlow SavedModels for serving.

``export(name, directory)`` looks the zoo model up in ``EXPORTERS``, a table
from zoo name to the ``"module:function"`` that writes its SavedModel, so a
new zoo model joins with one line here.

Natural inputs of the ``serving_default`` signatures:

- ``multi30k-en-de``: ``inputs``, strings ``(batch,)`` -> ``translations``.
- ``sst-treelstm``: ``trees``, bracketed trees ``(batch,)`` -> ``root_class``,
  ``root_probabilities``, ``error`` (a malformed tree: class -1 and its
  problem, the other trees answered).
- ``mnist-renet``: ``pixels``, float32 ``(batch, 28, 28)`` of 0-255 ->
  ``scores``, ``class_id``.
- ``babi-memn2n``: ``story`` and ``question``, strings ``(batch,)`` ->
  ``answer``, ``scores`` (also ``serve_ids`` on the integer id arrays).
- ``ntm-copy``: ``bits``, float32 ``(batch, length, 8)`` of 0/1 -> ``copy``,
  ``logits`` ``(batch, length, 8)``.
- ``ptb-lstm``, and a ``WordLanguageModel`` (``keras_seqmodels.language_model``,
  a ``.keras`` file or the object): ``text``, strings ``(batch,)`` ->
  ``next_word``, ``next_word_logits``, ``log_likelihood``.
- ``ud-ewt-upos``: ``text``, raw strings ``(batch,)`` -> ``tokens`` and
  ``tags`` ``(batch, max_tokens)`` (tokenised as ``seqmodels tag`` does).

A ``TreeClassifier`` (``keras_seqmodels.trees.train_tree_classifier``; the
object or a ``.keras`` file) gets the ``sst-treelstm`` signature, its
``root_label`` naming the labels of its own training file.

A string tagger (one string input, ``TagLookup`` last, as
``keras_seqmodels.tagging.train_tagger`` returns; the object or a ``.keras``
file) gets the ``ud-ewt-upos`` signature: ``text`` -> ``tokens``, ``tags``.

The generic fallback: anything not in the table (a zoo model registered
without an exporter; a ``.keras`` file; a model object such as an echo state
network with a fitted readout): ``serving_default`` takes the model's
``keras.Input`` s by name, in their dtypes and shapes, and returns
``output_0``, ``output_1``, ... as Keras's ``model.export`` does.

Every signature defends itself: it checks the full shape of each input
(a loaded SavedModel does not check shapes against its signature) and its
request limits inside the graph, before the work that grows with them, and
refuses a request beyond them with an ``InvalidArgumentError`` whose message
names the limit (``"ptb-lstm: request too large: at most 1,000 words per
text"``). Within them, memory and time grow linearly with the request. The
limits (each exporter's ``LIMITS``; ``limits={...}`` overrides them):

==================  ===================================================
model               limits per request
==================  ===================================================
multi30k-en-de      64 sentences, 16,384 bytes each, 256 KiB in all
sst-treelstm        256 trees, 131,072 bytes each, 1 MiB in all,
                    32,768 nodes and 512 levels of brackets per tree,
                    65,536 padded nodes (trees x nodes of the largest)
mnist-renet         1,024 images of exactly 28 x 28 (a non-finite image:
                    ``class_id`` -1 and ``error``, the others answered)
babi-memn2n         256 pairs, 20,000 bytes per story, 1,000 per
                    question, 1 MiB in all; ``serve_ids``: ids in the
                    vocabulary, at most 50 statement slots
ntm-copy            256 sequences of at most 512 steps, 65,536 steps in
                    all, bits 0 or 1
ptb-lstm            256 texts, 20,000 bytes and 1,000 words each, 1 MiB
                    in all, 8,192 padded words (texts x longest)
ud-ewt-upos         256 texts, 16,384 bytes and 4,096 tokens each
generic             1,024 rows; strings 16,384 bytes each, 1 MiB in all;
                    numbers 65,536 along each open dimension, 16,777,216
                    elements per input
==================  ===================================================

Empty and blank strings and empty batches are answered (empty or blank
results). Each export refuses a target directory that is not empty.

    >>> from keras_seqmodels import export   # doctest: +SKIP
    >>> export.export("multi30k-en-de", "/tmp/m30k")  # doctest: +SKIP
    >>> export.export("my_esn.keras", "/tmp/esn")  # doctest: +SKIP
"""

import importlib

from keras_seqmodels.utils.bounds import check_keras_file

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


def exporter_for_model(model):
    """``(exporter, kind)`` for a Keras model object: the exporter its type
    needs and a few words naming it (for messages).

    A ``Translator`` gets ``export_translator`` (beam search inside), a
    ``WordLanguageModel`` ``export_language_model``, a ``TreeClassifier``
    the sst-treelstm signature, a string tagger (``keras_seqmodels.tagging``)
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
        return exporter_for("multi30k-en-de"), "a translator"
    if isinstance(model, EncoderDecoder):
        raise ValueError(
            "an EncoderDecoder (token ids in, teacher-forced logits out) is not a "
            "translator; wrap it with its vocabularies in "
            "keras_seqmodels.seq2seq.Translator (Translator.from_parallel_text trains one "
            "from two text files), save that as .keras and export it"
        )
    if isinstance(model, WordLanguageModel):  # text in: its vocabulary is inside
        return exporter_for("ptb-lstm"), "a language model"
    if isinstance(model, TreeClassifier):  # root_label names its own labels
        return exporter_for("sst-treelstm"), "a tree classifier"
    if is_string_tagger(model):  # tag strings out: served on raw text
        return exporter_for("ud-ewt-upos"), "a tagger"
    return exporter_for(None), None


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


def to_litert(model, path, *, quantize=None, representative_data=None, batch_size=None):
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

    Returns:
        ``path``.

    Example (TensorFlow backend):

    >>> import os, tempfile, keras, keras_seqmodels as ks
    >>> from keras_seqmodels.export.litert_export import op_names
    >>> model = keras.Sequential([keras.Input((5, 3)),
    ...                           ks.layers.Recurrent(ks.cells.LSTMCell(4))])
    >>> out = to_litert(model, os.path.join(tempfile.mkdtemp(), "lstm.tflite"))
    >>> sorted(set(op_names(open(out, "rb").read())))
    ['STRIDED_SLICE', 'UNIDIRECTIONAL_SEQUENCE_LSTM']
    """
    from keras_seqmodels.export.litert_export import to_litert as _to_litert

    return _to_litert(
        model,
        path,
        quantize=quantize,
        representative_data=representative_data,
        batch_size=batch_size,
    )


__all__ = ["EXPORTERS", "export", "exporter_for", "exporter_for_model", "to_litert", "to_onnx"]
