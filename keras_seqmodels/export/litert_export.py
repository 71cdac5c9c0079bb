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
"""

import os
import shutil
import tempfile
import uuid
import warnings

import numpy as np

from keras_seqmodels.export.litert_runtime import (
    drop_unread,
    feed_states,
    float32_fused_weights,
    op_name,
    tensor_values,
    weight_distance,
    zero_states_each_call,
)

QUANTIZE = (None, "dynamic", "float16", "int8")
FUSE = ("lstm", "rnn")  # the layer kinds ``to_litert(fuse=...)`` can write as fused ops
FUSED_LSTM = "UNIDIRECTIONAL_SEQUENCE_LSTM"
FUSED_RNN = "UNIDIRECTIONAL_SEQUENCE_RNN"
STATE_FEED = "state_feed_"  # the outputs that carry initial states to feed_states
# Operand positions of LiteRT's LSTM kernels (tflite/kernels/lstm_shared.h).
_FORGET_WEIGHTS = 2
_PEEPHOLES = (9, 10, 11)
_STATES = (18, 19)
# and of its RNN kernel (tflite/kernels/unidirectional_sequence_rnn.cc).
_RNN_WEIGHTS = 1
_RNN_STATE = 4


def to_litert(
    model,
    path,
    *,
    quantize=None,
    representative_data=None,
    batch_size=None,
    fuse=FUSE,
    stateful=False,
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

    Returns:
        ``path``.

    Raises:
        ValueError: bad arguments, a layer the fused op cannot carry (the
            message names the layer and what to do), or a converted file
            that still holds a Flex op.

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
    if not isinstance(stateful, bool):
        raise ValueError(
            f"to_litert: `stateful` must be True or False. Received: stateful={stateful!r}"
        )
    fuse = _fuse_kinds(fuse)
    graph = _functional(model)
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise FileNotFoundError(f"to_litert: no such folder for `path`: {folder}")

    tracer = _Tracer(quantize, {id(v): _numpy(v) for v in graph.variables}, fuse)
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
    with open(path, "wb") as f:
        f.write(content)
    return path


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


def run_litert(interpreter, *inputs):
    """Run a file written by ``to_litert`` as ``model.predict`` would.

    Resizes the inputs and the fused ops' state tensors to the batch, resets
    those states, invokes, and returns the outputs in the model's order.

    Args:
        interpreter: an ``ai_edge_litert.interpreter.Interpreter`` (or
            ``tf.lite.Interpreter``) of the file.
        *inputs: one array per model input, batch first.

    Returns:
        A list of output arrays.
    """
    signature = interpreter._get_full_signature_list()["serving_default"]
    names = sorted(signature["inputs"], key=_position)
    if len(names) != len(inputs):
        raise ValueError(
            f"run_litert: the file takes {len(names)} input(s); received {len(inputs)}"
        )
    batch = int(np.shape(inputs[0])[0])
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


def _position(name):
    """``input_3`` / ``output_3`` sort by number; other names by name."""
    head, _, tail = name.rpartition("_")
    return (head, int(tail)) if tail.isdigit() else (name, -1)


def op_names(content):
    """The builtin (or custom) op names of a ``.tflite`` file's main graph,
    read from the flatbuffer."""
    model = _read(content)
    return [op_name(model, op) for op in model.subgraphs[0].operators]


# Tracing ------------------------------------------------------------------


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
        return model
    raise ValueError(
        f"to_litert: model '{getattr(model, 'name', model)}' is not a functional or "
        "Sequential model; rebuild it with keras.Input and the functional API "
        "(a subclassed model's call cannot be walked layer by layer)"
    )


class _Tracer:
    """Calls a functional model's layers, computing each LSTM layer with a
    function the converter fuses and each Elman layer with the converter's
    RNN stub op; records each fused layer's weights."""

    def __init__(self, quantize, values, fuse=FUSE):
        self.quantize = quantize
        self.fuse = fuse
        self.values = values  # id(variable) -> its NumPy value
        self.fused = []  # (layer name, kernel, peepholes or None)
        self.fused_rnn = []  # (layer name, kernel, activation name)
        self.fuse_elman = True  # False where the RNN stub op cannot be built
        self.state_feeds = []  # (kernel, h0, c0): initial states at a dynamic batch

    def run(self, graph, inputs):
        from keras_seqmodels._compat import run_functional_graph

        return run_functional_graph(graph, inputs, self.call)

    def call(self, layer, *args, **kwargs):
        import keras

        from keras_seqmodels import layers

        kwargs.pop("training", None)
        if isinstance(layer, keras.Sequential) and getattr(layer, "_functional", None):
            layer = layer._functional  # a nested Sequential: walk its graph too
        if hasattr(layer, "_run_through_graph") and getattr(layer, "inputs", None):
            return self.run(layer, args[0] if len(args) == 1 else list(args))
        if isinstance(layer, (layers.Bidirectional, keras.layers.Bidirectional)):
            forward = getattr(layer, "forward_layer", None)
            backward = getattr(layer, "backward_layer", None)
            if self._fused_lstm(forward) and self._masked(layer, args, kwargs):
                return self.plain(layer, *args, **kwargs)
            if self._fused_lstm(forward) and self._fused_lstm(backward):
                return self.bidirectional(layer, *args, **kwargs)
            if all(self._elman_fusable(sub, args, kwargs) for sub in (forward, backward)):
                if not getattr(layer, "return_state", False):
                    return self.bidirectional(layer, *args, **kwargs)
        elif self._fused_lstm(layer) and self._masked(layer, args, kwargs, states_in=True):
            return self.plain(layer, *args, **kwargs)
        elif self._fused_lstm(layer):
            self._check_fusable(layer, layer, args, kwargs)
            states = kwargs.get("initial_state")
            states = list(args[1:]) if states is None else list(states)
            return self.lstm(layer, args[0], layer.go_backwards, states or None)
        elif self._elman_fusable(layer, args, kwargs):
            return self.elman(layer, args[0], layer.go_backwards)
        return self.plain(layer, *args, **kwargs)

    def plain(self, layer, *args, **kwargs):
        """Any other layer, as Keras calls it. Recurrent layers run their
        generic loop (the package's fused training kernels compile with XLA,
        which LiteRT cannot take): a ``WHILE`` loop at a fixed batch size;
        unrolled with a dynamic batch (the converter lowers the loop's tensor
        lists to builtin ops only when their shapes are static)."""
        recurrent = _recurrent_sublayers(layer)
        saved = [(getattr(sub, "fused", None), sub.unroll) for sub in recurrent]
        shape = args[0].shape if args and hasattr(args[0], "shape") else None
        # int8: TF 2.21's calibrator crashes the process (segfault) on a
        # WHILE loop, so the loop is unrolled at any batch size.
        unroll = (
            bool(recurrent) and shape is not None and (shape[0] is None or self.quantize == "int8")
        )
        if unroll and len(shape) > 1 and shape[1] is None:
            if self.quantize == "int8":
                raise ValueError(
                    f"to_litert: layer '{layer.name}' runs as a loop, which quantize='int8' "
                    "takes only unrolled (TensorFlow's calibrator crashes on a WHILE loop): "
                    "fix the sequence length in keras.Input, or use quantize='dynamic'"
                )
            raise ValueError(
                f"to_litert: layer '{layer.name}' runs as a loop, which LiteRT takes "
                "with builtin ops only at a fixed batch size or sequence length: pass "
                "batch_size=1 (or any int) to to_litert, or fix the length in "
                "keras.Input"
            )
        try:
            for sub in recurrent:
                if hasattr(sub, "fused"):
                    sub.fused = False
                sub.unroll = sub.unroll or unroll
            if getattr(layer, "_call_has_training_arg", False):
                kwargs["training"] = False
            return layer(*args, **kwargs)
        finally:
            for sub, (fused, unrolled) in zip(recurrent, saved):
                if hasattr(sub, "fused"):
                    sub.fused = fused
                sub.unroll = unrolled

    def _check_fusable(self, owner, layer, args, kwargs):

        name = f"to_litert: layer '{owner.name}'"
        if getattr(layer, "stateful", False):
            raise ValueError(
                f"{name} has stateful=True; build the exported model with "
                "stateful=False and call to_litert(..., stateful=True), whose fused ops "
                "carry their state from one invocation to the next"
            )
        if self.quantize == "int8" and _lstm_weights(layer)[3] is not None:
            raise ValueError(
                f"{name} has peepholes, which the converter's int8 LSTM cannot "
                "calibrate; use quantize='dynamic' or 'float16'"
            )

    def _masked(self, layer, args, kwargs, states_in=False):
        """Whether an LSTM layer call needs what LiteRT's fused op lacks: a
        mask (the op has no sequence lengths) or ``return_state`` (it outputs
        the sequence only); for a ``Bidirectional`` (``states_in=False``),
        ``initial_state`` too. Such a layer converts as a loop of builtin ops,
        which computes them as Keras does, with a warning. A single LSTM's
        ``initial_state`` goes into the fused op (``states_in=True``), except
        with int8 at a dynamic batch."""
        from keras_seqmodels._compat import get_keras_mask

        reasons = []
        if kwargs.get("mask") is not None or (args and get_keras_mask(args[0]) is not None):
            reasons.append("receives a mask")
        given = kwargs.get("initial_state") is not None or len(args) > 1
        dynamic = bool(args) and getattr(args[0], "shape", (None,))[0] is None
        if given and not states_in:
            reasons.append("is called with `initial_state`")
        elif given and dynamic and self.quantize == "int8":
            reasons.append("is called with `initial_state` at a dynamic batch size with int8")
        if getattr(layer, "return_state", False):
            reasons.append("has return_state=True")
        if not reasons:
            return False
        warnings.warn(
            f"to_litert: layer '{layer.name}' {' and '.join(reasons)}, which LiteRT's fused "
            "LSTM cannot carry (no sequence lengths, no state inputs or outputs); it "
            "converts as a loop of builtin ops",
            stacklevel=3,
        )
        return True

    def _fused_lstm(self, layer):
        return "lstm" in self.fuse and _lstm_weights(layer) is not None

    def _elman_fusable(self, layer, args, kwargs):
        """Whether LiteRT's fused RNN computes this Elman layer as called.
        Unlike the LSTM's, these cases are not refused: the layer runs as a
        loop of builtin ops, as it did before the fused op."""
        from keras_seqmodels._compat import get_keras_mask

        if layer is None or "rnn" not in self.fuse or _elman_weights(layer) is None:
            return False
        if not self.fuse_elman:
            warnings.warn(
                f"to_litert: layer '{layer.name}' converts as a WHILE loop, not as "
                "LiteRT's fused UNIDIRECTIONAL_SEQUENCE_RNN: a TFLiteConverter ran in "
                "this process before the first to_litert, which makes the fused op "
                "unbuildable here; call to_litert in a fresh process (seqmodels export "
                "does) for the fused op",
                stacklevel=2,
            )
            return False
        if kwargs.get("mask") is not None or get_keras_mask(args[0]) is not None:
            return False  # the fused op has no sequence lengths
        if kwargs.get("initial_state") is not None or len(args) > 1:
            return False  # its state starts from zeros (a variable tensor)
        if getattr(layer, "return_state", False) or getattr(layer, "stateful", False):
            return False
        # The fused RNN kernel has a float and a hybrid (int8 weights) path
        # but no full-integer one.
        return self.quantize != "int8"

    def elman(self, layer, x, go_backwards):
        """The layer's output through the stub op that the converter turns
        into ``UNIDIRECTIONAL_SEQUENCE_RNN`` (``_sequence_rnn``)."""
        import tensorflow as tf

        kernel, recurrent, bias = (
            None if w is None else self.values[id(w)] for w in _elman_weights(layer)[:3]
        )
        activation = _elman_weights(layer)[3]
        units = int(recurrent.shape[0])
        dtype = x.dtype
        x = tf.cast(x, tf.float32)
        if go_backwards:
            x = tf.reverse(x, axis=[1])
        # A static state shape, batch 1 for a dynamic batch, as for the LSTM.
        state = tf.zeros((x.shape[0] or 1, units), tf.float32)
        self.fused_rnn.append((layer.name, kernel, activation))
        if bias is None:
            bias = np.zeros((units,), np.float32)
        sequence = _sequence_rnn(
            tf.transpose(x, (1, 0, 2)),
            tf.constant(kernel.T),
            tf.constant(recurrent.T),
            tf.constant(bias),
            state,
        )
        out = tf.transpose(sequence, (1, 0, 2)) if layer.return_sequences else sequence[-1]
        return tf.cast(out, dtype)

    def lstm(self, layer, x, go_backwards, initial_state=None):
        """The layer's output through a function marked as a Keras LSTM;
        ``initial_state``: ``[h0, c0]`` tensors, which the converter wires
        into the fused op's state tensors (zeros if ``None``)."""
        import tensorflow as tf

        kernel, recurrent, bias, peepholes = (
            None if w is None else self.values[id(w)] for w in _lstm_weights(layer)
        )
        units = int(recurrent.shape[0])
        dtype = x.dtype
        x = tf.cast(x, tf.float32)
        if go_backwards:
            x = tf.reverse(x, axis=[1])
        batch = x.shape[0]
        # The converter needs a static state shape; for a dynamic batch the
        # stored state has batch 1 and is resized at run time (run_litert).
        zeros = tf.zeros((batch or 1, units), tf.float32)
        h0, c0 = zeros, zeros
        if initial_state is not None:
            h0, c0 = (tf.cast(state, tf.float32) for state in initial_state)
            if batch is None:
                # The converter fuses only static state shapes: the op starts
                # from stored zeros, and feed_states writes h0, c0 into them.
                self.state_feeds.append((kernel, h0, c0))
                h0, c0 = zeros, zeros
        self.fused.append((layer.name, kernel, peepholes))
        if bias is None:
            bias = np.zeros((4 * units,), np.float32)
        kernel, recurrent, bias = (tf.constant(w) for w in (kernel, recurrent, bias))
        function = _marked_lstm(peepholes)
        last, sequence, _, _, _ = function(x, h0, c0, kernel, recurrent, bias)
        out = sequence if layer.return_sequences else last
        return tf.cast(out, dtype)

    def bidirectional(self, wrapper, *args, **kwargs):
        import tensorflow as tf

        forward, backward = wrapper.forward_layer, wrapper.backward_layer
        run = self.lstm if _lstm_weights(forward) is not None else self.elman
        if run == self.lstm:
            for sub in (forward, backward):
                self._check_fusable(wrapper, sub, args, kwargs)
        if getattr(wrapper, "return_state", False):
            raise ValueError(
                f"to_litert: layer '{wrapper.name}' has return_state=True; LiteRT's "
                "fused LSTM returns only its outputs"
            )
        x = args[0]
        fw = run(forward, x, False)
        # The package's wrapper runs a forward layer over the reversed input;
        # Keras's runs its go_backwards copy over the input.
        bw = run(backward, x, True)
        if wrapper.return_sequences:
            bw = tf.reverse(bw, axis=[1])
        mode = wrapper.merge_mode
        if mode is None:
            return [fw, bw]
        if mode == "concat":
            return tf.concat([fw, bw], axis=-1)
        if mode == "sum":
            return fw + bw
        if mode in ("ave", "mean"):
            return (fw + bw) * 0.5
        return fw * bw


def _lstm_weights(layer):
    """``(kernel, recurrent_kernel, bias, peepholes)`` of an LSTM layer the
    fused op computes (the package's ``Recurrent(LSTMCell)`` or Keras's
    ``LSTM``, tanh and sigmoid), else ``None``; ``bias`` and ``peepholes``
    (``(3, units)``) may be ``None``."""
    import keras

    from keras_seqmodels.layers import Recurrent
    from keras_seqmodels.layers.fused_rnn import cell_kind

    if isinstance(layer, Recurrent):
        cell = layer.cell
        if cell_kind(cell) != "lstm":
            return None
        peepholes = cell.peephole_kernel if cell.use_peepholes else None
    elif type(layer) is keras.layers.LSTM:
        cell = layer.cell
        tanh, sigmoid = keras.activations.tanh, keras.activations.sigmoid
        if cell.activation is not tanh or cell.recurrent_activation is not sigmoid:
            return None
        peepholes = None
    else:
        return None
    return cell.kernel, cell.recurrent_kernel, cell.bias, peepholes


def _elman_weights(layer):
    """``(kernel, recurrent_kernel, bias, activation)`` of an Elman layer the
    fused RNN op computes (``Recurrent`` over exactly ``ElmanCell``, the
    package's ``SimpleRNN``, Keras's ``SimpleRNN``; tanh or relu), else
    ``None``; ``bias`` may be ``None``."""
    import keras

    from keras_seqmodels.cells import ElmanCell
    from keras_seqmodels.layers import Recurrent

    if isinstance(layer, Recurrent):
        # A subclass of the cell may change its step: only the class itself.
        if type(layer.cell) is not ElmanCell:
            return None
    elif type(layer) is not keras.layers.SimpleRNN:
        return None
    cell = layer.cell
    names = {keras.activations.tanh: "tanh", keras.activations.relu: "relu"}
    activation = names.get(cell.activation)
    if activation is None:
        return None
    return cell.kernel, cell.recurrent_kernel, cell.bias, activation


def _numpy(variable):
    """A variable's value as NumPy (float32)."""
    import tensorflow as tf

    with tf.init_scope():
        return np.asarray(tf.convert_to_tensor(variable.value), np.float32)


def _recurrent_sublayers(layer, seen=None):
    """The recurrent runners in ``layer``: itself and any layer held in its
    attributes (a wrapper's, a model's, a composite layer's), recursively."""
    import keras

    from keras_seqmodels.layers import Recurrent

    seen = set() if seen is None else seen
    if id(layer) in seen:
        return []
    seen.add(id(layer))
    found = [layer] if isinstance(layer, (Recurrent, keras.layers.RNN)) else []
    for value in vars(layer).values():
        values = value if isinstance(value, (list, tuple)) else [value]
        for sub in values:
            if isinstance(sub, keras.layers.Layer):
                found.extend(_recurrent_sublayers(sub, seen))
    return found


def _marked_lstm(peepholes):
    """A ``tf.function`` the converter replaces by its fused LSTM: Keras 2's
    attributes and ``standard_lstm``'s argument and result order. Its body
    (the LSTM as a ``tf.scan``, with the peepholes as constants: a captured
    tensor would add a seventh argument, which the converter reads as a mask
    and refuses) is what TensorFlow runs before conversion."""
    import tensorflow as tf

    attributes = {
        "api_implements": f"lstm_{uuid.uuid4()}",
        "api_preferred_device": "CPU",
        "time_major": False,
        "go_backwards": False,
    }

    @tf.function(experimental_attributes=attributes, autograph=False)
    def lstm(inputs, init_h, init_c, kernel, recurrent_kernel, bias):
        batch = tf.shape(inputs)[0]
        h0 = init_h + tf.zeros((batch, 1), init_h.dtype)
        c0 = init_c + tf.zeros((batch, 1), init_c.dtype)
        p = None if peepholes is None else tf.constant(peepholes, tf.float32)
        z = tf.einsum("btf,fg->tbg", inputs, kernel) + bias

        def step(carry, z_t):
            h, c = carry
            a_i, a_f, a_g, a_o = tf.split(z_t + tf.matmul(h, recurrent_kernel), 4, axis=1)
            if p is not None:
                a_i, a_f = a_i + p[0] * c, a_f + p[1] * c
            c = tf.sigmoid(a_f) * c + tf.sigmoid(a_i) * tf.tanh(a_g)
            if p is not None:
                a_o = a_o + p[2] * c
            return tf.sigmoid(a_o) * tf.tanh(c), c

        hs, cs = tf.scan(step, z, initializer=(h0, c0))
        sequence = tf.transpose(hs, (1, 0, 2))
        return hs[-1], sequence, hs[-1], cs[-1], tf.constant(0.0)

    return lstm


# The converter's TensorFlow dialect keeps a stub op for the Elman RNN, left
# from TF 1's OpHint: ``legalize_tf.cc``'s ``LegalizeUnidirectionalSequenceRnn``
# rewrites a ``tf.UnidirectionalSequenceRnn`` that carries the attribute
# ``_tflite_input_indices`` and has five operands (time-major input, weights
# ``(units, in)``, recurrent weights ``(units, units)``, bias, state) and two
# results into ``tfl.unidirectional_sequence_rnn`` (tanh, time major), the
# second result being the output sequence. No composite function is
# recognised for an RNN (``prepare_composite_functions_tf.cc`` knows LSTMs,
# embedding lookups and a few image and text ops). The op has no kernel in
# TensorFlow: it is registered by name so that the graph can be traced and
# saved for the converter, never run.
_RNN_STUB = "UnidirectionalSequenceRnn"
_RNN_OPDEF = f"""
name: "{_RNN_STUB}"
input_arg {{ name: "input" type: DT_FLOAT }}
input_arg {{ name: "weights" type: DT_FLOAT }}
input_arg {{ name: "recurrent_weights" type: DT_FLOAT }}
input_arg {{ name: "bias" type: DT_FLOAT }}
input_arg {{ name: "hidden_state" type: DT_FLOAT }}
output_arg {{ name: "last_state" type: DT_FLOAT }}
output_arg {{ name: "output" type: DT_FLOAT }}
"""


def _register_rnn_stub():
    """Register the stub op's definition unless its name is taken; returns
    whether graphs can hold the op.

    TensorFlow's converter registers its own definition of the name the
    first time it runs in a process (for OpHint's graphs). That definition
    declares ``_tflite_input_indices`` as an attribute, which TensorFlow's
    node validation never finds (it skips names starting with ``_``), so no
    traced graph can hold the op: after a ``TFLiteConverter`` ran in this
    process before the first ``to_litert``, Elman layers convert as loops.
    """
    from keras_seqmodels._compat import register_op_defs, registered_op_def

    op_def = registered_op_def(_RNN_STUB)
    if op_def is None:
        # Registered once: a second registration of a name aborts the process.
        register_op_defs([_RNN_OPDEF])
        return True
    return not any(attr.name.startswith("_") for attr in op_def.attr)


def _sequence_rnn(inputs, weights, recurrent_weights, bias, state):
    """The stub op in the graph being traced: inputs ``(time, batch, in)``,
    returns the output sequence ``(time, batch, units)``."""
    import tensorflow as tf

    from keras_seqmodels._compat import create_graph_op

    indices = tf.compat.v1.AttrValue(list=tf.compat.v1.AttrValue.ListValue(i=range(5)))
    graph = tf.compat.v1.get_default_graph()
    op = create_graph_op(
        graph,
        _RNN_STUB,
        [inputs, weights, recurrent_weights, bias, state],
        dtypes=[tf.float32, tf.float32],
        attrs={"_tflite_input_indices": indices},
    )
    sequence = op.outputs[1]
    sequence.set_shape(inputs.shape[:2].concatenate(weights.shape[:1]))
    return sequence


# Conversion -----------------------------------------------------------------


def _convert(graph, tracer, quantize, representative_data, batch_size):
    import keras
    import tensorflow as tf

    specs = []
    for i, tensor in enumerate(graph.inputs):
        shape = list(tensor.shape)
        if batch_size is not None:
            shape[0] = batch_size
        specs.append(tf.TensorSpec(shape, tensor.dtype, name=f"input_{i}"))

    # Every weight enters the graph as a constant (a variable would stay a
    # VAR_HANDLE / READ_VARIABLE, unquantized, with the fused op's weight
    # splits computed at run time).
    def serve(*inputs):
        tracer.fused, tracer.fused_rnn, tracer.state_feeds = [], [], []
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
            converter.representative_dataset = _representative(representative_data, specs)
        try:
            return converter.convert()
        except Exception as error:  # the converter raises its own types
            first = str(error).strip().splitlines()
            detail = next((line for line in first if "error" in line.lower()), first[0])
            raise ValueError(
                "to_litert: the LiteRT converter could not express the model with "
                f"builtin ops ({detail.strip()[:300]}); a fixed batch_size and "
                "sequence length help the loop of non-LSTM layers"
            ) from None
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _representative(data, specs):
    if callable(data):
        return data
    arrays = data if isinstance(data, (list, tuple)) else [data]
    arrays = [np.asarray(a) for a in arrays]
    if len(arrays) != len(specs):
        raise ValueError(
            f"to_litert: `representative_data` must hold one array per model input "
            f"({len(specs)}). Received {len(arrays)}"
        )
    count = len(arrays[0])
    batch = specs[0].shape[0] or 1

    def generate():
        for start in range(0, count - batch + 1, batch):
            yield [
                a[start : start + batch].astype(s.dtype.as_numpy_dtype)
                for a, s in zip(arrays, specs)
            ]

    return generate


# The flatbuffer ------------------------------------------------------------


def _read(content):
    from tensorflow.lite.tools import flatbuffer_utils

    return flatbuffer_utils.read_model_from_bytearray(bytearray(content))


def _patch_fused_ops(content, fused, fused_rnn=()):
    """Set ``cell_clip`` to 0 and add the peephole weights of each fused LSTM
    op, matching ops to layers by their forget-gate input weights; set the
    activation of each fused RNN op (the converter's rewrite sets tanh),
    matching by its input weights."""
    from tensorflow.lite.python import schema_py_generated as schema
    from tensorflow.lite.tools import flatbuffer_utils

    if not fused and not fused_rnn:
        return content
    model = _read(content)
    graph = model.subgraphs[0]
    candidates = list(fused)
    rnn_candidates = list(fused_rnn)
    drop_unread(model, graph, (FUSED_RNN, "DEQUANTIZE"))
    for op in graph.operators:
        if op_name(model, op) == FUSED_RNN:
            _float32_states(model, graph, op, schema, (_RNN_STATE,))
            values = tensor_values(model, graph, int(op.inputs[_RNN_WEIGHTS]))
            if values is None or not rnn_candidates:
                continue
            best = min(
                range(len(rnn_candidates)),
                key=lambda i: weight_distance(values, rnn_candidates[i][1], blocks=1),
            )
            if rnn_candidates.pop(best)[2] == "relu":
                relu = schema.ActivationFunctionType.RELU
                op.builtinOptions.fusedActivationFunction = relu
            continue
        if op_name(model, op) != FUSED_LSTM:
            continue
        op.builtinOptions.cellClip = 0.0
        _float32_states(model, graph, op, schema)
        values = tensor_values(model, graph, int(op.inputs[_FORGET_WEIGHTS]))
        if values is None or not candidates:
            continue
        best = min(
            range(len(candidates)),
            key=lambda i: weight_distance(values, candidates[i][1]),
        )
        _, _, peepholes = candidates.pop(best)
        if peepholes is None:
            continue
        weights_type = graph.tensors[int(op.inputs[_FORGET_WEIGHTS])].type
        for position, row in zip(_PEEPHOLES, peepholes):
            op.inputs[position] = _add_constant(model, graph, row, weights_type, schema)
    return bytes(flatbuffer_utils.convert_object_to_bytearray(model))


def _float32_states(model, graph, op, schema, positions=_STATES):
    """Give the op float32 variable state tensors of its own where the
    converter did not: with float16 weights it stores the zero states as
    float16 behind a ``DEQUANTIZE`` (whose output is rewritten to batch 1 at
    every run), and it may feed the fused RNN the same zeros as another op
    (e.g. the initial state of a following ``WHILE`` loop), which would then
    read the state that the fused kernel wrote in place."""
    for position in positions:
        index = int(op.inputs[position])
        producer = next((o for o in graph.operators if index in list(o.outputs)), None)
        readers = [o for o in graph.operators for i in o.inputs if int(i) == index]
        shared = len(readers) > 1 or index in [int(i) for i in graph.outputs]
        if not shared and (producer is None or op_name(model, producer) != "DEQUANTIZE"):
            continue
        old = graph.tensors[index]
        tensor = schema.TensorT()
        tensor.shape = list(old.shape)
        tensor.shapeSignature = None if old.shapeSignature is None else list(old.shapeSignature)
        tensor.name = f"{(old.name or b'state').decode()}_float32"
        tensor.type = schema.TensorType.FLOAT32
        tensor.isVariable = True
        tensor.buffer = 0  # no data: the runtime allocates it, zeroed
        graph.tensors.append(tensor)
        op.inputs[position] = len(graph.tensors) - 1
        read = {int(i) for o in graph.operators for i in o.inputs}
        if producer is not None and not any(int(i) in read for i in producer.outputs):
            graph.operators.remove(producer)


def _add_constant(model, graph, values, weights_type, schema):
    """Append a rank-1 constant (float32, or int8 with a symmetric scale when
    the op's weights are int8: the hybrid kernel's peepholes) to the graph."""
    tensor = schema.TensorT()
    tensor.shape = [len(values)]
    tensor.name = f"peephole_{len(graph.tensors)}"
    if weights_type == schema.TensorType.INT8:
        scale = float(np.max(np.abs(values))) / 127.0 or 1.0
        data = np.clip(np.round(values / scale), -127, 127).astype(np.int8)
        tensor.type = schema.TensorType.INT8
        tensor.quantization = schema.QuantizationParametersT()
        tensor.quantization.scale = [scale]
        tensor.quantization.zeroPoint = [0]
    else:
        data = np.asarray(values, np.float32)
        tensor.type = schema.TensorType.FLOAT32
    buffer = schema.BufferT()
    buffer.data = np.frombuffer(data.tobytes(), np.uint8)
    model.buffers.append(buffer)
    tensor.buffer = len(model.buffers) - 1
    graph.tensors.append(tensor)
    return len(graph.tensors) - 1


def _share_tied_weights(content, matrices=()):
    """Store a tied embedding matrix once in a quantized file.

    A model whose logits reuse its embedding matrix (``ReversibleEmbedding``,
    or any ``x @ E.T`` with ``E`` an embedding table) converts to a ``GATHER``
    on ``E`` and a ``FULLY_CONNECTED`` whose weights are ``E`` too: one
    buffer in a float file, two once quantized, as the converter gives the
    lookup table one scale (with ``"int8"``, the calibrated range of the
    lookup's output, with a zero point) and the output layer's weights one
    symmetric scale per row. Here each ``FULLY_CONNECTED`` whose int8
    weights hold the same matrix as an int8 ``GATHER`` table (same shape,
    values within a quantization step) reads that table instead, with one
    symmetric per-tensor scale (the fully-connected kernels take per-tensor
    weights in their integer and hybrid paths, and no zero point). A table
    with a zero point is first requantized to ``max|E| / 127`` from the float
    matrix (one of ``matrices``, else the output layer's dequantized
    weights), and the lookups' outputs (and what passes them on unchanged,
    such as a ``RESHAPE``) get that scale; an int32 bias is requantized to
    the new weight scale; the unused weights' buffer is emptied."""
    from tensorflow.lite.python import schema_py_generated as schema
    from tensorflow.lite.tools import flatbuffer_utils

    model = _read(content)
    graph = model.subgraphs[0]
    lookups = [op for op in graph.operators if op_name(model, op) == "GATHER"]
    tables = sorted(
        {
            int(op.inputs[0])
            for op in lookups
            if _int8_constant(model, graph.tensors[int(op.inputs[0])], schema)
            and len(graph.tensors[int(op.inputs[0])].quantization.scale) == 1
        }
    )
    shared = False
    for op in graph.operators:
        if not tables or op_name(model, op) != "FULLY_CONNECTED":
            continue
        index = int(op.inputs[1])
        weights = graph.tensors[index]
        if not _int8_constant(model, weights, schema):
            continue
        values = _dequantized(model, weights)
        for table in tables:
            tensor = graph.tensors[table]
            if table == index or list(tensor.shape) != list(weights.shape):
                continue
            step = max(
                float(tensor.quantization.scale[0]), float(np.max(weights.quantization.scale))
            )
            if np.mean(np.abs(_dequantized(model, tensor) - values)) > 0.5 * step:
                continue
            if tensor.quantization.zeroPoint[0] != 0:
                floats = [m for m in matrices if m.shape == values.shape]
                floats = [m for m in floats if np.mean(np.abs(m - values)) <= 0.5 * step]
                _symmetric_table(model, graph, table, floats[0] if floats else values, schema)
            scale = float(tensor.quantization.scale[0])
            bias = int(op.inputs[2]) if len(op.inputs) > 2 else -1
            if bias >= 0 and graph.tensors[bias].type == schema.TensorType.INT32:
                _requantize_bias(model, graph, op, bias, scale, schema)
            op.inputs[1] = table
            shared = True
            break
    if not shared:
        return content
    used = {0}
    for g in model.subgraphs:
        read = {int(i) for op in g.operators for i in list(op.inputs) + list(op.outputs)}
        read |= {int(i) for op in g.operators for i in _list(op.intermediates)}
        read |= {int(i) for i in list(g.inputs) + list(g.outputs)}
        used |= {int(g.tensors[i].buffer) for i in read if i >= 0}
    for i, buffer in enumerate(model.buffers):
        if i not in used:
            buffer.data = None
    return bytes(flatbuffer_utils.convert_object_to_bytearray(model))


# Ops whose int8 output is their input's bytes (the converter gives it the
# input's scale and zero point).
_SAME_SCALE = {
    "RESHAPE",
    "SQUEEZE",
    "EXPAND_DIMS",
    "TRANSPOSE",
    "SLICE",
    "STRIDED_SLICE",
    "GATHER",
    "SPLIT",
    "SPLIT_V",
    "PACK",
    "UNPACK",
}


def _list(values):
    return [] if values is None else list(values)


def _symmetric_table(model, graph, table, matrix, schema):
    """Requantize an int8 lookup table to one symmetric scale and give that
    scale to the lookups' outputs, following ops that pass them on
    unchanged."""
    scale = float(np.max(np.abs(matrix))) / 127.0 or 1.0
    data = np.clip(np.round(matrix / scale), -127, 127).astype(np.int8)
    buffer = schema.BufferT()
    buffer.data = np.frombuffer(data.tobytes(), np.uint8)
    model.buffers.append(buffer)
    tensor = graph.tensors[table]
    tensor.buffer = len(model.buffers) - 1
    tensor.quantization.scale, tensor.quantization.zeroPoint = [scale], [0]
    pending = [
        int(o)
        for op in graph.operators
        if op_name(model, op) == "GATHER" and int(op.inputs[0]) == table
        for o in op.outputs
    ]
    while pending:
        index = pending.pop()
        q = graph.tensors[index].quantization
        if q is None or q.scale is None or len(q.scale) != 1:
            continue
        q.scale, q.zeroPoint = [scale], [0]
        for op in graph.operators:
            if op_name(model, op) in _SAME_SCALE and int(op.inputs[0]) == index:
                pending.extend(int(o) for o in op.outputs)


def _int8_constant(model, tensor, schema):
    data = model.buffers[tensor.buffer].data
    q = tensor.quantization
    return (
        tensor.type == schema.TensorType.INT8
        and data is not None
        and len(data) > 0
        and q is not None
        and q.scale is not None
        and len(q.scale) > 0
    )


def _dequantized(model, tensor):
    """An int8 constant's values, per-tensor or per-channel."""
    q = tensor.quantization
    values = np.frombuffer(bytes(model.buffers[tensor.buffer].data), np.int8)
    values = values.reshape(tensor.shape).astype(np.float64)
    shape = [1] * values.ndim
    if len(q.scale) > 1:
        shape[q.quantizedDimension] = len(q.scale)
    scale = np.asarray(q.scale, np.float64).reshape(shape)
    zero = np.asarray(q.zeroPoint, np.float64).reshape(shape)
    return (values - zero) * scale


def _requantize_bias(model, graph, op, bias, scale, schema):
    """An integer fully-connected op's int32 bias (scale: input scale times
    each weight row's) for weights of one ``scale``, in a buffer of its own."""
    tensor = graph.tensors[bias]
    old = np.asarray(tensor.quantization.scale, np.float64)
    values = np.frombuffer(bytes(model.buffers[tensor.buffer].data), np.int32) * old
    new = float(graph.tensors[int(op.inputs[0])].quantization.scale[0]) * scale
    data = np.round(values / new).clip(-(2**31), 2**31 - 1).astype(np.int32)
    buffer = schema.BufferT()
    buffer.data = np.frombuffer(data.tobytes(), np.uint8)
    model.buffers.append(buffer)
    tensor.buffer = len(model.buffers) - 1
    tensor.quantization.scale = [new]
    tensor.quantization.zeroPoint = [0]
    tensor.quantization.quantizedDimension = 0


def _check_ops(content, fused, fused_rnn=()):
    model = _read(content)
    names = [op_name(model, op) for op in model.subgraphs[0].operators]
    every = {op_name(model, op) for graph in model.subgraphs for op in graph.operators}
    bad = sorted(n for n in every if n.startswith("Flex") or not n.isupper())
    if bad:
        raise ValueError(
            f"to_litert: the converted file needs non-builtin ops {bad}; please report "
            "the model (the exporter should have kept to builtin ops)"
        )
    for kind, op, layers in (("LSTM", FUSED_LSTM, fused), ("Elman", FUSED_RNN, fused_rnn)):
        count = names.count(op)
        if count != len(layers):
            raise ValueError(
                f"to_litert: {len(layers)} {kind} layer(s) were marked for fusion but "
                f"the file has {count} {op} op(s) (ops: {sorted(set(names))})"
            )
