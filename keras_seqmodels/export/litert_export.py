"""Export a Keras model to LiteRT (TFLite) with fused sequence kernels.

``to_litert(model, path)`` writes a ``.tflite`` file whose LSTM layers run as
LiteRT's fused ``UNIDIRECTIONAL_SEQUENCE_LSTM`` kernel and whose Elman layers
as its fused ``UNIDIRECTIONAL_SEQUENCE_RNN`` kernel, with builtin ops only
(no ``WHILE`` for them, no Flex / TF-select op), checked after conversion.

What is new relative to Keras and the converter: Keras 3's ``LSTM`` and the
package's ``Recurrent(LSTMCell)`` both convert to a ``WHILE`` loop of small
ops (and to Flex ops unless every shape is static), which delegates
(GPU, NNAPI, Edge TPU, microcontrollers) refuse. The converter still fuses a
function marked as a Keras 2 LSTM (``api_implements: "lstm_<uuid>"``,
``time_major``, ``go_backwards``; arguments ``inputs, init_h, init_c,
kernel, recurrent_kernel, bias`` and five results, of which only the last
output and the output sequence may be used: TensorFlow's
``prepare_composite_functions_tf.cc`` and ``lstm_utils.cc``
``ConvertKerasLSTMLayer``). ``to_litert`` traces the model (TensorFlow
backend) layer by layer and computes each supported LSTM layer through such
a marked function holding that layer's weights (Keras's layout: kernel
``(in, 4n)``, gates ``i, f, c, o``); every other layer is called as usual.
After conversion it edits the flatbuffer where the converter's rewrite
departs from the layer: it adds the peephole weights (the converter's
rewrite has no peephole operands; LiteRT's kernel has them) and sets
``cell_clip`` to 0 (the rewrite sets 10, which Keras does not do).

The converter recognises no composite function for an Elman RNN, but its
TensorFlow-to-LiteRT legalization still rewrites the stub op that TF 1's
OpHint wrote, ``UnidirectionalSequenceRnn``, into the fused RNN (see
``_RNN_STUB``); ``to_litert`` puts that op in the traced graph for each Elman
layer (tanh; relu set in the flatbuffer afterwards).

What converts to what:

==================================  ========================================
layer                               LiteRT
==================================  ========================================
``Recurrent(LSTMCell)``, also       ``UNIDIRECTIONAL_SEQUENCE_LSTM`` (one
``use_peepholes=True``; Keras's     per layer), ``go_backwards`` as a
``keras.layers.LSTM``               ``REVERSE_V2`` of the input
``Bidirectional`` (the package's    two ``UNIDIRECTIONAL_SEQUENCE_LSTM``
or Keras's) over those              and the merge
``Recurrent(ElmanCell)``, the       ``UNIDIRECTIONAL_SEQUENCE_RNN`` (one per
package's and Keras's               layer; tanh or relu), ``go_backwards``
``SimpleRNN``; ``Bidirectional``    as for the LSTM; float32, float16 and
over those                          dynamic-range weights (``"int8"``: loop)
``GRUCell`` and every other cell,   a ``WHILE`` loop of builtin ops (LiteRT
Keras's ``GRU``; an LSTM or Elman   has no GRU kernel; the fused ops have no
layer with a mask or                sequence lengths and no state output,
``return_state``; an Elman layer    the fused RNN no initial state input);
with ``initial_state`` or           no Flex op
``stateful``
==================================  ========================================

``initial_state`` ``[h0, c0]`` (model inputs or computed by the model) feeds
the fused LSTM's state tensors (at a dynamic batch through an ``ADD`` that
writes them in: ``litert_runtime.feed_states``). Limits of the fused LSTM: a
mask, ``return_state``, ``initial_state`` into a ``Bidirectional`` or with
``quantize="int8"`` at a dynamic batch make the layer a loop of builtin ops,
with a warning,
as do activations other than tanh/sigmoid; ``stateful=True`` and
``quantize="int8"`` with peepholes are refused with a message naming the
layer.

Tied embeddings: with ``quantize="dynamic"`` or ``"int8"``, a matrix that
the model both looks up (``GATHER``) and multiplies by (the logits of a
``ReversibleEmbedding``: ``FULLY_CONNECTED``) is stored once, as one int8
tensor with one symmetric scale that both ops read (the converter writes
two: a per-tensor lookup table and per-row output weights);
``_share_tied_weights``.

Running the file: LiteRT's fused kernels keep their ``h`` and ``c`` in
variable tensors that persist across invocations (for streaming). By default
(``stateful=False``) the file zeroes them before each fused op runs, sized
from the op's input (``litert_runtime``), so every call answers as
``model.predict`` does, at any batch size, with the plain interpreter calls
(``resize_tensor_input``, ``allocate_tensors``, ``set_tensor``, ``invoke``).
With ``stateful=True`` the state carries over to the next call (a long
sequence streamed in chunks); call ``interpreter.reset_all_variables()``
(C++: ``Interpreter::ResetVariableTensors()``) to start a new one, and resize
the state tensors with a dynamic batch (inputs 18 and 19 of each fused LSTM
op, input 4 of each fused RNN op; ``run_litert`` does both).

    >>> import keras, keras_seqmodels as ks  # doctest: +SKIP
    >>> model = keras.Sequential([keras.Input((100, 128)),
    ...     ks.layers.Recurrent(ks.cells.LSTMCell(256))])  # doctest: +SKIP
    >>> ks.export.to_litert(model, "/tmp/lstm.tflite")  # doctest: +SKIP
    '/tmp/lstm.tflite'

The writer is three modules: this one (``to_litert``: checks, tracing, the
converter call, then the rewrites; ``run_litert``, ``op_names``),
``litert_layers`` (what each Keras layer is traced as: the fused LSTM's
marked function, the fused RNN's stub op, the loops; a converter for a new
layer type goes there) and ``litert_flatbuffer`` (edits of the converted
flatbuffer: peepholes, ``cell_clip``, activations, tied weights, the op
check); ``litert_runtime`` holds the rewrites for the runtime's state
handling.
"""

import os
import re
import shutil
import tempfile
import warnings

import numpy as np

from keras_seqmodels.export import checks
from keras_seqmodels.export.atomic import write_bytes
from keras_seqmodels.export.litert_flatbuffer import (
    _RNN_STATE,
    _STATES,
    _check_ops,
    _patch_fused_ops,
    _read,
    _share_tied_weights,
)
from keras_seqmodels.export.litert_layers import (
    FUSE,
    _numpy,
    _recurrent_sublayers,
    _register_rnn_stub,
    _Tracer,
)
from keras_seqmodels.export.litert_runtime import (
    FUSED_LSTM,
    FUSED_RNN,
    feed_states,
    float32_fused_weights,
    op_name,
    zero_states_each_call,
)

QUANTIZE = (None, "dynamic", "float16", "int8")
STATE_FEED = "state_feed_"  # the outputs that carry initial states to feed_states


def to_litert(
    model,
    path,
    *,
    quantize=None,
    representative_data=None,
    batch_size=None,
    fuse=FUSE,
    stateful=False,
    strict=False,
):
    """Write ``model`` as a LiteRT (``.tflite``) file with fused LSTM kernels.

    See the module docstring for what each layer becomes. The file is
    converted with builtin ops only (``TFLITE_BUILTINS``), and checked after
    conversion: no Flex or custom op, one fused LSTM op per LSTM layer.

    Args:
        model: a functional or ``Sequential`` Keras model (TensorFlow
            backend), built with a fixed feature width.
        path: the ``.tflite`` file to write (its folder must exist).
        quantize: ``None`` (float32), ``"dynamic"`` (int8 weights, float
            activations: LiteRT's hybrid kernels), ``"float16"`` (float16
            weights) or ``"int8"`` (full integer: int8 activations and
            weights, the LSTM's cell state in int16; float32 input and
            output; needs ``representative_data``).
        representative_data: for ``"int8"``: an array (or a list of arrays,
            one per model input) of sample inputs, first axis the samples,
            or a callable yielding lists of input arrays; a few hundred
            samples of real data calibrate the ranges.
        batch_size: ``None`` keeps the model's batch dimension (dynamic if
            the model's is ``None``); an int fixes it (``1`` for on-device
            streaming).
        fuse: the layer kinds written as LiteRT's fused ops, a tuple of
            ``"lstm"`` (``UNIDIRECTIONAL_SEQUENCE_LSTM``) and ``"rnn"``
            (Elman layers: ``UNIDIRECTIONAL_SEQUENCE_RNN``); a kind left out
            converts as a ``WHILE`` loop of builtin ops, like a GRU.
            ``fuse=("lstm",)`` keeps Elman layers as loops, which XNNPACK
            runs faster on x86 CPUs than the fused RNN kernel (see
            docs/deploy.md).

        stateful: ``False`` (default): every call starts the fused ops from
            zero states, as ``model.predict`` does, at any batch size
            (``litert_runtime``). ``True``: the fused ops keep their final
            state for the next call (streaming a long sequence in chunks;
            reset with ``interpreter.reset_all_variables()``), at the
            batch size the file was written for.
        strict: ``False`` (default): an option that did not take effect
            in the written file (``quantize`` that left weights float32,
            ``"float16"`` kept as float32, a layer written as a loop where
            ``fuse`` asked for the fused op) is a warning naming the layer or
            weights and what the file holds; ``True``: a ``ValueError``, and
            no file is written. The same for a ``"dynamic"`` or ``"int8"``
            file whose answers on up to 16 of the ``representative_data``
            samples are off ``model.predict``'s by more than
            ``checks.MAX_QUANTIZED_ERROR`` (10%) of the output's range.

    Returns:
        ``path``.

    Raises:
        ValueError: bad arguments, ``representative_data`` that does not
            match the model's inputs (the expected shape in the message), a
            layer the fused op cannot carry (the message names the layer and
            what to do), a loop that would unroll past
            ``checks.MAX_UNROLLED_STEPS`` step copies, a converted file that
            still holds a Flex op, or with ``strict=True`` an option that
            did not take effect.

    Example:

    >>> import os, tempfile, keras, keras_seqmodels as ks
    >>> model = keras.Sequential([keras.Input((10, 3)),
    ...                           ks.layers.Recurrent(ks.cells.LSTMCell(4))])
    >>> path = os.path.join(tempfile.mkdtemp(), "m.tflite")
    >>> to_litert(model, path) == path
    True
    """
    import keras

    if quantize not in QUANTIZE:
        raise ValueError(
            "to_litert: `quantize` must be None, 'dynamic', 'float16' or 'int8'. "
            f"Received: quantize={quantize!r}"
        )
    if quantize == "int8" and representative_data is None:
        raise ValueError(
            "to_litert: quantize='int8' needs `representative_data`: an array of "
            "sample inputs (samples first), a list of them (one per input), or a "
            "callable yielding lists of input arrays"
        )
    if batch_size is not None and (not isinstance(batch_size, int) or batch_size < 1):
        raise ValueError(
            "to_litert: `batch_size` must be None or a positive integer. "
            f"Received: batch_size={batch_size!r}"
        )
    if keras.backend.backend() != "tensorflow":
        raise ValueError(
            "to_litert: needs the TensorFlow backend (set KERAS_BACKEND=tensorflow). "
            f"Received backend: {keras.backend.backend()}"
        )
    for name, flag in (("stateful", stateful), ("strict", strict)):
        if not isinstance(flag, bool):
            raise ValueError(
                f"to_litert: `{name}` must be True or False. Received: {name}={flag!r}"
            )
    fuse = _fuse_kinds(fuse)
    graph = _functional(model)
    checks.check_weight_bytes(graph, "to_litert", quantize)
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise FileNotFoundError(f"to_litert: no such folder for `path`: {folder}")

    tracer = _Tracer(quantize, {id(v): _numpy(v) for v in graph.variables}, fuse)
    _bound_unrolling(tracer, quantize)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        tracer.fuse_elman = "rnn" in fuse and _register_rnn_stub()
        content = _convert(graph, tracer, quantize, representative_data, batch_size)
    content = _patch_fused_ops(content, tracer.fused, tracer.fused_rnn)
    if tracer.state_feeds:
        kernels = [kernel for kernel, _, _ in tracer.state_feeds]
        content = feed_states(content, kernels, STATE_FEED, _STATES, FUSED_LSTM)
    if quantize in ("dynamic", "int8"):
        matrices = [v for v in tracer.values.values() if v.ndim == 2]
        content = _share_tied_weights(content, matrices)
    _check_ops(content, tracer.fused, tracer.fused_rnn)
    if quantize == "float16":
        content = float32_fused_weights(content)
    if not stateful:
        content = zero_states_each_call(content)
    content = order_inputs(content, input_names(graph))
    # What each option did, read from the file (checks.file_findings); the
    # tracer's fallbacks said as the file holds them (a WHILE loop or unrolled).
    fixed = batch_size is not None or graph.inputs[0].shape[0] is not None
    weights = [(v.path, tracer.values[id(v)]) for v in graph.variables]
    findings, ops = checks.file_findings(content, quantize, fixed, weights)
    ours = []
    for warning in caught:
        text = str(warning.message)
        if text.startswith("to_litert:"):
            ours.append(checks.with_loop_form(text, ops))
        else:  # the libraries' own warnings, as they came
            warnings.warn_explicit(warning.message, warning.category, warning.filename,
                                   warning.lineno)  # fmt: skip
    if quantize in ("dynamic", "int8"):
        # The file's answers against model.predict on a few samples.
        rows = checks.check_rows(representative_data)
        if rows is not None:
            fixed_batch = batch_size or graph.inputs[0].shape[0]
            error = checks.quantized_error(content, graph, rows, run_litert, fixed_batch)
            finding = checks.answer_finding(error, quantize, len(rows[0]))
            findings += [finding] if finding else []
    checks.report(list(dict.fromkeys(ours)) + findings, strict)
    write_bytes(path, content)  # complete or not at all
    return path


def _bound_unrolling(tracer, quantize):
    """Count the step copies each unrolled loop adds before it is traced
    (``checks.check_unroll``), from 0 at each trace of the model."""
    plain = tracer.plain

    def bounded(layer, *args, **kwargs):
        copies = checks.unrolled_copies(layer, args, quantize, _recurrent_sublayers(layer))
        tracer.unrolled = checks.check_unroll(tracer.unrolled, layer, copies, quantize)
        return plain(layer, *args, **kwargs)

    tracer.plain = bounded
    tracer.unrolled = 0


def _fuse_kinds(fuse):
    """``fuse`` as a tuple of ``FUSE`` names; one name may be given alone."""
    kinds = (fuse,) if isinstance(fuse, str) else fuse
    try:
        kinds = tuple(kinds)
    except TypeError:
        kinds = None
    if kinds is None or not all(isinstance(k, str) and k in FUSE for k in kinds):
        raise ValueError(
            "to_litert: `fuse` must be a tuple of the layer kinds to write as fused ops, "
            "'lstm' and/or 'rnn' (e.g. ('lstm',) keeps Elman layers as loops, () keeps "
            f"every layer a loop). Received: fuse={fuse!r}"
        )
    return kinds


def run_litert(interpreter, *inputs, **named):
    """Run a file written by ``to_litert`` as ``model.predict`` would.

    Resizes the inputs and the fused ops' state tensors to the batch, resets
    those states, invokes, and returns the outputs in the model's order.

    Args:
        interpreter: an ``ai_edge_litert.interpreter.Interpreter`` (or
            ``tf.lite.Interpreter``) of the file.
        *inputs: one array per model input, batch first, in the order of
            the Keras model's inputs (the file's input order).
        **named: or the arrays by input name (a model with several inputs:
            the Keras inputs' names, e.g. ``stories=..., queries=...``; one
            input: ``input_0``), not both.

    Returns:
        A list of output arrays.
    """
    signature = interpreter._get_full_signature_list()["serving_default"]
    names = _input_order(interpreter, signature["inputs"])
    if named:
        if inputs:
            raise ValueError("run_litert: pass the inputs by position or by name, not both")
        unknown = sorted(set(named) - set(names))
        missing = [n for n in names if n not in named]
        if unknown or missing:
            raise ValueError(f"run_litert: the file's inputs are {names}; received {sorted(named)}")
        inputs = tuple(named[n] for n in names)
    if len(names) != len(inputs):
        raise ValueError(
            f"run_litert: the file takes {len(names)} input(s) ({', '.join(names)}); "
            f"received {len(inputs)}"
        )
    batch = int(np.shape(inputs[0])[0])
    if batch == 0:  # LiteRT's ops refuse empty tensors (UNPACK, FILL) with a C++ check
        raise ValueError("run_litert: a batch of 0 rows; LiteRT's ops need at least one row")
    details = {d["index"]: d for d in interpreter.get_tensor_details()}
    for name, x in zip(names, inputs):
        interpreter.resize_tensor_input(signature["inputs"][name], np.shape(x))
    ops = interpreter._get_ops_details()
    # States that a FILL zeroes before each call (stateful=False) size themselves.
    filled = {int(i) for op in ops if op["op_name"] == "FILL" for i in op["outputs"]}
    stateful = False
    for op in ops:
        if op["op_name"] not in (FUSED_LSTM, FUSED_RNN):
            continue
        positions = _STATES if op["op_name"] == FUSED_LSTM else (_RNN_STATE,)
        for position in positions:
            index = int(op["inputs"][position])
            if index in filled:
                continue
            stateful = True
            shape = list(details[index]["shape"])
            if shape[0] != batch:
                interpreter.resize_tensor_input(index, [batch] + shape[1:])
    interpreter.allocate_tensors()
    if stateful:
        # (LiteRT refuses to reset the states that a FILL sizes at run time.)
        interpreter.reset_all_variables()
    for name, x in zip(names, inputs):
        index = signature["inputs"][name]
        dtype = details[index]["dtype"]
        interpreter.set_tensor(index, np.asarray(x, dtype=dtype))
    interpreter.invoke()
    outputs = signature["outputs"]
    order = sorted(outputs, key=_position)
    return [interpreter.get_tensor(outputs[n]) for n in order]


def _input_order(interpreter, inputs):
    """The signature's input names in the file's input order (the Keras
    model's, as ``order_inputs`` wrote it); a file whose inputs are all
    ``input_<i>`` (written before the names were kept) by that number."""
    if all(_position(n)[0] == "input" for n in inputs):
        return sorted(inputs, key=_position)
    rank = {d["index"]: k for k, d in enumerate(interpreter.get_input_details())}
    return sorted(inputs, key=lambda n: rank.get(inputs[n], len(rank)))


def input_names(graph):
    """The names of the file's inputs: ``input_0`` for a model with one
    input; the Keras inputs' names for several (``stories``, ``queries``),
    made valid TensorFlow names, with ``input_<i>`` for a name that is
    empty or taken."""
    if len(graph.inputs) == 1:
        return ["input_0"]
    names = []
    for i, tensor in enumerate(graph.inputs):
        name = re.sub(r"[^A-Za-z0-9_.\-]", "_", str(getattr(tensor, "name", "") or ""))
        # (``input_<j>`` is the number of the input: ``_input_order``.)
        if not re.match(r"[A-Za-z0-9.]", name) or re.fullmatch(r"input_\d+", name):
            name = f"input_{i}"
        if name in names:
            name = f"input_{i}"
        names.append(name)
    return names


def order_inputs(content, names):
    """The file's inputs (the graph's and its signature's) in the order of
    ``names``, the Keras model's (the converter orders them its own way)."""
    from tensorflow.lite.tools import flatbuffer_utils

    if len(names) < 2:
        return content
    model = _read(content)
    signature = model.signatureDefs[0]
    by_name = {
        m.name.decode() if isinstance(m.name, bytes) else m.name: m for m in signature.inputs
    }
    if sorted(by_name) != sorted(names):
        raise ValueError(
            f"to_litert: the converted file's inputs {sorted(by_name)} are not the model's {names}"
        )
    signature.inputs = [by_name[n] for n in names]
    model.subgraphs[signature.subgraphIndex].inputs = np.array(
        [by_name[n].tensorIndex for n in names], dtype=np.int32
    )
    return bytes(flatbuffer_utils.convert_object_to_bytearray(model))


def _position(name):
    """``input_3`` / ``output_3`` sort by number; other names by name."""
    head, _, tail = name.rpartition("_")
    return (head, int(tail)) if tail.isdigit() else (name, -1)


def op_names(content):
    """The builtin (or custom) op names of a ``.tflite`` file's main graph,
    read from the flatbuffer."""
    model = _read(content)
    return [op_name(model, op) for op in model.subgraphs[0].operators]


# The model's graph ------------------------------------------------------------


def _functional(model):
    import keras

    if isinstance(model, keras.Sequential):
        inner = getattr(model, "_functional", None)
        if inner is None:
            raise ValueError(
                f"to_litert: Sequential model '{model.name}' has no input shape; "
                "start it with keras.Input((time, features)) and build it"
            )
        return inner
    if hasattr(model, "_run_through_graph") and getattr(model, "inputs", None):
        strings = [t.name for t in model.inputs if "string" in str(t.dtype)]
        if strings:
            raise ValueError(
                f"to_litert: input '{strings[0]}' of model '{model.name}' holds strings, "
                "which LiteRT's builtin ops do not preprocess; export the id-level network "
                "inside it and tokenize in your code, or use the SavedModel export"
            )
        return model
    raise ValueError(
        f"to_litert: model '{getattr(model, 'name', model)}' is not a functional or "
        "Sequential model; rebuild it with keras.Input and the functional API "
        "(a subclassed model's call cannot be walked layer by layer)" + _network_hint(model)
    )


def _network_hint(model):
    """Where a subclassed model runs a functional ``network`` (a
    ``WordLanguageModel``: its call is ``network(ids)``), how to export that."""
    import keras

    network = getattr(model, "network", None)
    if isinstance(network, keras.Model) and getattr(network, "inputs", None):
        return (
            "; its id-level network is a functional model: export model.network "
            "(the model's call is that network's, so the outputs are the same)"
        )
    return ""


# Conversion -----------------------------------------------------------------


def _convert(graph, tracer, quantize, representative_data, batch_size):
    import keras
    import tensorflow as tf

    specs = []
    served = input_names(graph)
    for i, tensor in enumerate(graph.inputs):
        shape = list(tensor.shape)
        if batch_size is not None:
            shape[0] = batch_size
        specs.append(tf.TensorSpec(shape, tensor.dtype, name=served[i]))
    # Checked against the inputs before anything is traced.
    names = [getattr(t, "name", None) or s.name for t, s in zip(graph.inputs, specs)]
    calibration = _representative(representative_data, specs, names) if quantize == "int8" else None

    # Every weight enters the graph as a constant (a variable would stay a
    # VAR_HANDLE / READ_VARIABLE, unquantized, with the fused op's weight
    # splits computed at run time).
    def serve(*inputs):
        tracer.fused, tracer.fused_rnn, tracer.state_feeds = [], [], []
        tracer.unrolled = 0
        mapping = [(v, tf.constant(tracer.values[id(v)].astype(v.dtype))) for v in graph.variables]
        with keras.StatelessScope(state_mapping=mapping):
            outputs = tracer.run(graph, list(inputs) if len(inputs) > 1 else inputs[0])
        flat = tf.nest.flatten(outputs)
        served = {f"output_{i}": y for i, y in enumerate(flat)}
        for k, (_, h0, c0) in enumerate(tracer.state_feeds):
            # Kept alive as outputs through conversion; feed_states rewires them.
            served[f"{STATE_FEED}{k}_h"], served[f"{STATE_FEED}{k}_c"] = h0, c0
        return served

    function = tf.function(serve, input_signature=specs, autograph=False)
    module = tf.Module()
    module.serve = function
    concrete = function.get_concrete_function()
    folder = tempfile.mkdtemp(prefix="to_litert_")
    try:
        # The converter fuses the marked functions only when it starts from a
        # SavedModel: its concrete-function path inlines them first.
        tf.saved_model.save(module, folder, signatures={"serving_default": concrete})
        converter = tf.lite.TFLiteConverter.from_saved_model(folder)
        converter.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS]
        if quantize is not None:
            converter.optimizations = [tf.lite.Optimize.DEFAULT]
        if quantize == "float16":
            converter.target_spec.supported_types = [tf.float16]
        if quantize == "int8":
            converter.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
            converter.representative_dataset = calibration
        try:
            return converter.convert()
        except Exception as error:  # the converter raises its own types
            if str(error).startswith("to_litert:"):  # a checked calibration sample
                raise ValueError(str(error)) from None
            text = str(error).strip() or type(error).__name__
            first = text.splitlines()
            detail = next((line for line in first if "error" in line.lower()), first[0])
            hint = checks.converter_hint(text) or (
                "a fixed batch_size and sequence length help the loop of non-LSTM layers"
            )
            raise ValueError(
                "to_litert: the LiteRT converter could not express the model with "
                f"builtin ops ({detail.strip()[:300]}); {hint}"
            ) from None
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _representative(data, specs, names=None):
    """The converter's calibration samples, checked against the model's
    inputs first (``checks.check_representative``); with several inputs,
    each sample a dict by input name (a list would go to the converted
    graph's inputs in the converter's order, not the model's)."""
    checked = checks.check_representative(data, specs, names)

    def named(arrays):
        return {s.name: a for a, s in zip(arrays, specs)} if len(specs) > 1 else list(arrays)

    if callable(checked):
        return lambda: (named(sample) for sample in checked())
    arrays = checked
    count = len(arrays[0])
    batch = specs[0].shape[0] or 1

    def generate():
        for start in range(0, count - batch + 1, batch):
            yield named(
                a[start : start + batch].astype(s.dtype.as_numpy_dtype)
                for a, s in zip(arrays, specs)
            )

    return generate
