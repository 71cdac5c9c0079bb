"""How ``to_litert`` traces each Keras layer (``litert_export``): the
layer-by-layer tracer and the per-layer conversions.

``_Tracer`` calls a functional model's layers one by one (TensorFlow
backend). A supported LSTM layer is computed through a function marked as a
Keras 2 LSTM (``_marked_lstm``), which the converter fuses into
``UNIDIRECTIONAL_SEQUENCE_LSTM``; a supported Elman layer through the stub op
``UnidirectionalSequenceRnn`` (``_register_rnn_stub``, ``_sequence_rnn``),
which it legalizes into ``UNIDIRECTIONAL_SEQUENCE_RNN``; every other layer
is called as usual and converts as builtin ops (a ``WHILE`` loop for a
recurrent layer; a ``linear_rnn`` layer's scan as ``scan.TFExportScan``,
blocks of unrolled steps around a ``WHILE`` loop without tensor lists, in
``_Tracer.linear``). A new layer
type with a fused LiteRT form gets its weight reader (like
``_lstm_weights``), its case in ``_Tracer.call`` and its traced function
here, and its flatbuffer fix-ups, if any, in ``litert_flatbuffer``.
"""

import uuid
import warnings

import numpy as np

FUSE = ("lstm", "rnn")  # the layer kinds ``to_litert(fuse=...)`` can write as fused ops


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
        if _linear_sublayers(layer):
            return self.linear(layer, *args, **kwargs)
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

    def linear(self, layer, *args, **kwargs):
        """A layer of ``keras_seqmodels.linear_rnn`` (or a wrapper holding
        one): its scan as ``scan.TFExportScan``, blocks of 16 unrolled steps
        (their ends in blocks of 16) around a ``WHILE`` loop over the rest,
        with static-shape states and no tensor lists, which converts with
        builtin ops at any batch size and length and costs time linear in
        the length (the training kernel's ``tf.scan`` becomes tensor-list
        ops, which LiteRT lacks). Any
        other recurrent layer in a wrapper is traced as in ``plain``.

        ``quantize="int8"``: TensorFlow's int8 calibrator crashes the process
        on a ``WHILE`` loop (a segmentation fault in its calibration run), so
        the scan is unrolled at the sequence length
        (``scan.TFUnrolledExportScan``), which must then be fixed in
        ``keras.Input``; the steps count towards ``checks.check_unroll``'s
        bound."""
        from keras_seqmodels.export import checks
        from keras_seqmodels.linear_rnn import scan

        if self.quantize != "int8":
            with scan.use_kernels("tf_export"):
                return self.plain(layer, *args, **kwargs)
        shape = getattr(args[0], "shape", None) if args else None
        if shape is None or len(shape) < 2 or shape[1] is None:
            raise ValueError(
                f"to_litert: layer {type(layer).__name__} '{layer.name}' runs its scan "
                "unrolled with quantize='int8' (TensorFlow's calibrator crashes on a WHILE "
                "loop), which needs a known sequence length: fix it in keras.Input, or use "
                "quantize='dynamic' or 'float16' (any length)"
            )
        copies = int(shape[1]) * len(_linear_sublayers(layer))
        self.unrolled = checks.check_unroll(getattr(self, "unrolled", 0), layer, copies, "int8")
        with scan.use_kernels("tf_export_unrolled"):
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
    fused op computes (a ``Recurrent`` whose cell declares the form
    ``"lstm"``, ``keras_seqmodels.cells.forms``, e.g. ``LSTMCell``, or
    Keras's ``LSTM``; tanh and sigmoid), else ``None``; ``bias`` and
    ``peepholes`` (``(3, units)``) may be ``None``."""
    import keras

    from keras_seqmodels.cells.forms import cell_form, declared_form
    from keras_seqmodels.layers import Recurrent

    if isinstance(layer, Recurrent):
        form = declared_form(layer.cell)  # the package's cells declare theirs
    elif type(layer) is keras.layers.LSTM:
        form = cell_form(layer.cell)
    else:
        return None
    cell = layer.cell
    tanh, sigmoid = keras.activations.tanh, keras.activations.sigmoid
    if form != "lstm" or cell.activation is not tanh or cell.recurrent_activation is not sigmoid:
        return None
    peepholes = getattr(cell, "peephole_kernel", None)
    return cell.kernel, cell.recurrent_kernel, cell.bias, peepholes


def _elman_weights(layer):
    """``(kernel, recurrent_kernel, bias, activation)`` of an Elman layer the
    fused RNN op computes (a ``Recurrent`` whose cell declares the form
    ``"elman"``, ``keras_seqmodels.cells.forms``, e.g. ``ElmanCell`` and the
    package's ``SimpleRNN``, or Keras's ``SimpleRNN``; tanh or relu), else
    ``None``; ``bias`` may be ``None``."""
    import keras

    from keras_seqmodels.cells.forms import cell_form, declared_form
    from keras_seqmodels.layers import Recurrent

    if isinstance(layer, Recurrent):
        form = declared_form(layer.cell)  # the package's cells declare theirs
    elif type(layer) is keras.layers.SimpleRNN:
        form = cell_form(layer.cell)
    else:
        return None
    cell = layer.cell
    if form != "elman":
        return None
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


def _linear_sublayers(layer):
    """The ``linear_rnn`` layers in ``layer`` (itself, or wrapped)."""
    from keras_seqmodels.linear_rnn import LinearRecurrent

    if isinstance(layer, LinearRecurrent):
        return [layer]
    subs = getattr(layer, "_flatten_layers", None)
    if subs is None:
        return []
    return [sub for sub in subs(include_self=False) if isinstance(sub, LinearRecurrent)]


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
