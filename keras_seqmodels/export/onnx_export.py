"""ONNX export with native recurrent nodes: ``to_onnx(model, path)``.

``to_onnx`` walks a Keras functional or ``Sequential`` model layer by layer
and writes an ONNX graph in which each recurrent layer is one ONNX ``LSTM``,
``GRU`` or ``RNN`` node (no ``Loop``, no ``Scan``), built directly with the
``onnx`` package from the weights read back as NumPy arrays, so it works the
same on every Keras backend.

What is new relative to Keras's ``model.export(format="onnx")`` and
tf2onnx: those trace the TensorFlow graph, so this package's fused LSTM or
GRU kernel becomes a ``PartitionedCall`` that onnxruntime refuses, and the
generic loop becomes a ``Loop`` of small ops (tf2onnx's rewriters recognise
only Keras's own LSTM graph). Here the layers are read, not traced:

- ``Recurrent(LSTMCell)`` -> ``LSTM`` (peepholes as its ``P`` input),
  ``Recurrent(GRUCell)`` -> ``GRU`` (``linear_before_reset=1`` for the
  reset-after form, 0 for reset-before), ``Recurrent(ElmanCell)`` -> ``RNN``;
  Keras's ``LSTM``, ``GRU`` and ``SimpleRNN`` the same way;
- ``Bidirectional`` (this package's and Keras's) -> one node with
  ``direction="bidirectional"`` and its merge mode (concat, sum, mean,
  product, or none); ``go_backwards`` -> ``direction="reverse"``;
- ``return_sequences`` (``Y``) or not (``Y_h``), ``return_state``
  (``Y_h``, ``Y_c``), initial states that are model inputs, stacked layers;
- a mask from ``Embedding(mask_zero=True)`` or ``Masking`` -> the nodes'
  ``sequence_lens`` (the number of unmasked steps per row: exact for
  right-padded rows, the usual case; a mask with holes is not expressible).

Around them: ``InputLayer``, ``Embedding`` and ``ReversibleEmbedding``
(``Gather``; the reverse call a ``MatMul`` by the transposed matrix),
``ks.layers.Bias``, ``Dense``, ``Activation``, ``Softmax``, ``ReLU``,
``Dropout`` and the other inference-time identities, ``Masking``,
``Concatenate``, ``Add``, ``Subtract``, ``Multiply``, ``Average``,
``TimeDistributed`` over those, ``Rescaling``, ``Reshape``, ``Flatten`` and
nested functional or ``Sequential`` models. Any other layer raises a
``ValueError`` naming it and the formats that can carry it.

Numbers are float32 throughout (weights of a mixed precision model are
cast); inputs keep their Keras dtype (float inputs become float32). The
batch and an unknown number of steps are symbolic dimensions of the graph.

Example:

>>> import os, tempfile, numpy as np, keras, keras_seqmodels as ks
>>> model = keras.Sequential([keras.Input((None, 3)),
...                           ks.layers.Recurrent(ks.cells.LSTMCell(4))])
>>> path = ks.export.to_onnx(model, os.path.join(tempfile.mkdtemp(), "m.onnx"))
>>> import onnx
>>> [node.op_type for node in onnx.load(path).graph.node]
['Transpose', 'LSTM', 'Squeeze', 'Identity']
"""

import inspect

import numpy as np

from keras_seqmodels.utils.bounds import check_keras_file

DEFAULT_OPSET = 17
MIN_OPSET = 14  # LSTM/GRU/RNN 14, axes of Squeeze/ReduceSum as inputs (13)
OTHER_FORMATS = "use keras_seqmodels.export.to_litert or the SavedModel export"


class _Lens:
    """A ``sequence_lens`` (int32, (batch,)) built on first use and shared by
    the tensors it masks: in a functional model the recurrent layers take
    their mask from the graph's own mask operations instead."""

    def __init__(self, build):
        self._build = build
        self._name = None

    def name(self):
        if self._name is None:
            self._name = self._build()
        return self._name


class _Tensor:
    """A value of the ONNX graph: its name, its Keras shape, its ``_Lens``
    where the Keras tensor has a mask, and its dtype."""

    def __init__(self, name, shape, mask=None, dtype="float32"):
        self.name = name
        self.shape = tuple(shape)
        self.mask = mask
        self.dtype = dtype

    @property
    def lens(self):
        return None if self.mask is None else self.mask.name()


class _Graph:
    def __init__(self, opset):
        self.opset = opset
        self.nodes = []
        self.initializers = []
        self._names = set()
        self._weights = {}

    def fresh(self, hint):
        hint = "".join(c if c.isalnum() or c in "_./" else "_" for c in str(hint)) or "t"
        name, k = hint, 0
        while name in self._names:
            k += 1
            name = f"{hint}_{k}"
        self._names.add(name)
        return name

    def const(self, value, hint="const", dtype="float32"):
        from onnx import numpy_helper

        name = self.fresh(hint)
        self.initializers.append(numpy_helper.from_array(np.asarray(value, dtype), name))
        return name

    def weight(self, variable, hint):
        """One initializer per Keras variable, however often it is used
        (a tied embedding is stored once)."""
        key = id(variable)
        if key not in self._weights:
            self._weights[key] = self.const(_numpy(variable), hint)
        return self._weights[key]

    def lens_of(self, mask, hint):
        """The ``_Lens`` of a boolean (batch, time) mask tensor, one per mask."""
        key = ("lens", mask.name)
        if key not in self._weights:
            self._weights[key] = _Lens(lambda: _lens_from_mask(self, _as_bool(self, mask), hint))
        return self._weights[key]

    def ints(self, values, hint="shape"):
        """An int64 constant (axes, shapes), one initializer per value."""
        key = ("int64", np.shape(values), tuple(np.ravel(values).tolist()))
        if key not in self._weights:
            self._weights[key] = self.const(np.asarray(values, "int64"), hint, "int64")
        return self._weights[key]

    def op(self, op_type, inputs, hint=None, outputs=1, **attrs):
        from onnx import helper

        hint = hint or op_type.lower()
        names = [self.fresh(f"{hint}_{i}" if outputs > 1 else hint) for i in range(outputs)]
        node_name = self.fresh(f"{hint}/{op_type}")
        self.nodes.append(helper.make_node(op_type, list(inputs), names, name=node_name, **attrs))
        return names if outputs > 1 else names[0]


def _numpy(variable):
    import keras

    return np.asarray(keras.ops.convert_to_numpy(variable), "float32")


# Why the package's layers that have no ONNX form have none.
_WHY_NOT = {
    "CRF": "Viterbi decoding is a dynamic program over the tags, which needs a Loop; "
    "export the emission scores (the model up to the layer before the CRF) and decode "
    "them in Python with the CRF layer's decode(scores, mask)",
    "NTM": "its state is a memory matrix read and written by attention at every step, "
    "which ONNX's LSTM/GRU/RNN nodes (vector states only) cannot carry",
    "MemoryNetwork": "the end-to-end memory network's hops over a story are not mapped",
    "TreeLSTM": "it recurses over a tree, not over time",
    "RNTN": "it recurses over a tree, not over time",
    "RecursiveNN": "it recurses over a tree, not over time",
    "Translator": "beam search decoding is a loop over output steps with a growing beam",
}


def _unsupported(layer, why=None):
    why = why or _WHY_NOT.get(type(layer).__name__)
    detail = f": {why}" if why else ""
    return ValueError(
        f"to_onnx: layer {type(layer).__name__} '{layer.name}' cannot be written as ONNX"
        f"{detail}; {OTHER_FORMATS}"
    )


# Activations ---------------------------------------------------------------

# Keras activation name -> (ONNX recurrent activation, alpha, beta).
_RNN_ACTIVATIONS = {
    "tanh": ("Tanh", None, None),
    "sigmoid": ("Sigmoid", None, None),
    "relu": ("Relu", None, None),
    "hard_sigmoid": ("HardSigmoid", 1.0 / 6.0, 0.5),  # Keras 3: relu6(x + 3) / 6
    "softsign": ("Softsign", None, None),
    "softplus": ("Softplus", None, None),
    "linear": ("Affine", 1.0, 0.0),
}


_KERAS_ACTIVATIONS = (
    "linear", "tanh", "sigmoid", "relu", "hard_sigmoid", "softsign", "softplus", "elu",
    "selu", "exponential", "softmax", "log_softmax", "swish", "silu", "relu6", "leaky_relu",
    "gelu", "mish", "hard_silu", "tanh_shrink",
)  # fmt: skip


def _activation_name(fn):
    """The Keras name of a built-in activation; else the function's own name
    (for the message refusing it)."""
    import keras

    if fn is None:
        return "linear"
    for name in _KERAS_ACTIVATIONS:
        try:
            if keras.activations.get(name) is fn:
                return name
        except ValueError:  # not in this Keras version
            continue
    return getattr(fn, "__name__", type(fn).__name__)


def _rnn_activation(layer, arg, fn):
    name = _activation_name(fn)
    if name not in _RNN_ACTIVATIONS:
        raise ValueError(
            f"to_onnx: layer {type(layer).__name__} '{layer.name}': its `{arg}` {name!r} has "
            f"no ONNX recurrent equivalent (ONNX has {sorted(_RNN_ACTIVATIONS)}); retrain "
            f"with one of those or {OTHER_FORMATS}"
        )
    return _RNN_ACTIVATIONS[name]


def _apply_activation(g, x, fn, layer):
    name = _activation_name(fn)
    hint = layer.name
    simple = {
        "relu": "Relu",
        "tanh": "Tanh",
        "sigmoid": "Sigmoid",
        "softplus": "Softplus",
        "softsign": "Softsign",
        "exponential": "Exp",
        "selu": "Selu",
        "elu": "Elu",
    }
    if name == "linear":
        return x
    if name in simple:
        return g.op(simple[name], [x], hint)
    if name in ("softmax", "log_softmax"):
        return g.op("Softmax" if name == "softmax" else "LogSoftmax", [x], hint, axis=-1)
    if name in ("swish", "silu"):
        return g.op("Mul", [x, g.op("Sigmoid", [x], hint)], hint)
    if name == "hard_sigmoid":
        return g.op("HardSigmoid", [x], hint, alpha=1.0 / 6.0, beta=0.5)
    if name == "relu6":
        return g.op("Clip", [x, g.const(0.0, "zero"), g.const(6.0, "six")], hint)
    if name == "leaky_relu":
        return g.op("LeakyRelu", [x], hint, alpha=0.2)
    raise ValueError(
        f"to_onnx: layer {type(layer).__name__} '{layer.name}': activation {name!r} is not "
        f"mapped to ONNX (mapped: linear, {', '.join(sorted(simple))}, softmax, log_softmax, "
        f"swish, hard_sigmoid, relu6, leaky_relu); {OTHER_FORMATS}"
    )


# Recurrent layers ------------------------------------------------------------


def _cell_kind(cell):
    """The ONNX node ("LSTM", "GRU", "RNN") of a cell, or None.

    Exact classes only: a subclass may change the step."""
    import keras

    from keras_seqmodels.cells import ElmanCell, GRUCell, LSTMCell

    kinds = {
        LSTMCell: "LSTM",
        keras.layers.LSTMCell: "LSTM",
        GRUCell: "GRU",
        keras.layers.GRUCell: "GRU",
        ElmanCell: "RNN",
        keras.layers.SimpleRNNCell: "RNN",
    }
    return kinds.get(type(cell))


def _blocks(matrix, order, units):
    """Columns of ``matrix`` (in, k * units) as ONNX rows (k * units, in), blocks
    in ``order``."""
    return np.concatenate([matrix[:, j * units : (j + 1) * units].T for j in order], axis=0)


def _cell_weights(layer, cell):
    """ONNX ``W``, ``R``, ``B``, ``P`` (or None), activations and attributes of
    one direction, from the cell's Keras weights."""
    kind = _cell_kind(cell)
    units = cell.units
    kernel, recurrent = _numpy(cell.kernel), _numpy(cell.recurrent_kernel)
    bias = _numpy(cell.bias) if getattr(cell, "use_bias", True) and cell.bias is not None else None
    attrs, peep = {}, None
    if kind == "LSTM":
        order = [0, 3, 1, 2]  # Keras [i, f, c, o] -> ONNX [i, o, f, c]
        wb = np.zeros(4 * units, "float32") if bias is None else bias
        wb = np.concatenate([wb[j * units : (j + 1) * units] for j in order])
        rb = np.zeros_like(wb)
        pk = getattr(cell, "peephole_kernel", None)
        if pk is not None:
            pk = _numpy(pk)  # rows p_i, p_f, p_o -> ONNX P[iof] = [p_i, p_o, p_f]
            peep = np.concatenate([pk[0], pk[2], pk[1]])
        acts = [
            _rnn_activation(layer, "recurrent_activation", cell.recurrent_activation),
            _rnn_activation(layer, "activation", cell.activation),
            _rnn_activation(layer, "activation", cell.activation),
        ]
    elif kind == "GRU":
        order = [0, 1, 2]  # [u, r, h] is ONNX's [z, r, h]; h = z h(t-1) + (1 - z) h~ in both
        if cell.reset_after:
            attrs["linear_before_reset"] = 1
            wb, rb = (np.zeros(3 * units, "float32"),) * 2 if bias is None else (bias[0], bias[1])
        else:
            attrs["linear_before_reset"] = 0
            wb = np.zeros(3 * units, "float32") if bias is None else bias
            rb = np.zeros_like(wb)
        acts = [
            _rnn_activation(layer, "recurrent_activation", cell.recurrent_activation),
            _rnn_activation(layer, "activation", cell.activation),
        ]
    else:
        order = [0]
        wb = np.zeros(units, "float32") if bias is None else bias
        rb = np.zeros_like(wb)
        acts = [_rnn_activation(layer, "activation", cell.activation)]
    w = _blocks(kernel, order, units)
    r = _blocks(recurrent, order, units)
    return kind, w, r, np.concatenate([wb, rb]), peep, acts, attrs


def _check_runner(layer, runner):
    """The cell of a recurrent runner (this package's ``Recurrent`` or a Keras
    RNN layer) that an ONNX node can run, or a ValueError saying why not."""
    cell = getattr(runner, "cell", None)
    if cell is None or _cell_kind(cell) is None:
        cname = type(cell).__name__ if cell is not None else "none"
        raise _unsupported(
            layer,
            f"its cell {cname} has no ONNX recurrent node (ONNX has LSTM, GRU and RNN: "
            "keras_seqmodels.cells.LSTMCell, GRUCell, ElmanCell and Keras's LSTM, GRU, "
            "SimpleRNN cells)",
        )
    if getattr(runner, "stateful", False):
        raise _unsupported(
            layer,
            "stateful=True carries states between calls, which an ONNX graph does not "
            "keep; export a stateless copy (stateful=False, same weights) and pass the "
            "states as inputs (initial_state)",
        )
    return cell


def _state_count(kind):
    return 2 if kind == "LSTM" else 1


def _recurrent_node(g, layer, runners, x, states, direction):
    """One ONNX LSTM/GRU/RNN node over ``x`` for one or two runners (forward,
    backward). Returns ``(Y, Y_h, Y_c)`` ONNX names (Y_c None but for LSTM)."""
    specs = [_cell_weights(layer, _check_runner(layer, r)) for r in runners]
    kind = specs[0][0]
    units = runners[0].cell.units
    if any(s[0] != kind for s in specs) or any(r.cell.units != units for r in runners):
        raise _unsupported(layer, "its two directions must have the same cell type and units")
    if any(s[6] != specs[0][6] for s in specs):
        raise _unsupported(layer, "its two GRU directions must have the same reset_after")
    hint = layer.name
    w = g.const(np.stack([s[1] for s in specs]), f"{hint}/W")
    r = g.const(np.stack([s[2] for s in specs]), f"{hint}/R")
    b = g.const(np.stack([s[3] for s in specs]), f"{hint}/B")
    peeps = [s[4] for s in specs]
    if any(p is not None for p in peeps):
        p = g.const(
            np.stack([np.zeros(3 * units, "float32") if q is None else q for q in peeps]),
            f"{hint}/P",
        )
    else:
        p = ""
    acts = [a for s in specs for a in s[5]]
    attrs = dict(specs[0][6])
    attrs["activations"] = [a[0] for a in acts]
    if any(a[1] is not None for a in acts):
        attrs["activation_alpha"] = [a[1] for a in acts if a[1] is not None]
        attrs["activation_beta"] = [a[2] for a in acts if a[2] is not None]
    x_tm = g.op("Transpose", [x.name], f"{hint}/time_major", perm=[1, 0, 2])
    inits = ["", ""]
    if states:
        # Keras order: each direction's [h, c]; ONNX: initial_h, initial_c,
        # each (num_directions, batch, units).
        n = _state_count(kind)
        per_dir = [states[i * n : (i + 1) * n] for i in range(len(runners))]
        for k in range(n):
            parts = [
                g.op("Unsqueeze", [d[k].name, g.ints([0], "axes0")], f"{hint}/state")
                for d in per_dir
            ]
            inits[k] = parts[0] if len(parts) == 1 else g.op("Concat", parts, hint, axis=0)
    inputs = [x_tm, w, r, b, x.lens or "", inits[0]]
    if kind == "LSTM":
        inputs += [inits[1], p]
    while inputs[-1] == "":
        inputs.pop()
    outs = g.op(
        kind,
        inputs,
        hint,
        outputs=3 if kind == "LSTM" else 2,
        hidden_size=units,
        direction=direction,
        **attrs,
    )
    return outs[0], outs[1], outs[2] if kind == "LSTM" else None


def _direction_slice(g, value, axis, index, hint):
    return g.op(
        "Slice",
        [value, g.ints([index]), g.ints([index + 1]), g.ints([axis])],
        hint,
    )


def _sequence_output(g, y, hint):
    """(batch, time, units) of one direction of ``Y`` (time, dirs, batch, units)."""
    y = g.op("Squeeze", [y, g.ints([1], "axes1")], hint)
    return g.op("Transpose", [y], hint, perm=[1, 0, 2])


def _reverse_time(g, y, hint):
    # Keras's go_backwards returns the outputs in the order it read the steps.
    return g.op(
        "Slice",
        [y, g.ints([-1]), g.ints([np.iinfo(np.int64).min]), g.ints([1]), g.ints([-1])],
        hint,
    )


def _hold_last_output(g, y, y_h, lens, hint):
    """Keras RNNs with ``zero_output_for_mask=False`` repeat the last unmasked
    output at padded steps, where ONNX writes zeros."""
    shape = g.op("Shape", [y], hint)
    time = g.op("Gather", [shape, g.ints(1, "one")], hint, axis=0)
    steps = g.op("Range", [g.ints(0, "zero"), time, g.ints(1, "one")], hint)
    lens64 = g.op("Cast", [lens], hint, to=7)
    valid = g.op(
        "Less",
        [g.op("Unsqueeze", [steps, g.ints([0], "axes0")], hint),
         g.op("Unsqueeze", [lens64, g.ints([1], "axes1")], hint)],
        hint,
    )  # fmt: skip
    valid = g.op("Unsqueeze", [valid, g.ints([2], "axes2")], hint)
    last = g.op("Unsqueeze", [y_h, g.ints([1], "axes1")], hint)
    return g.op("Where", [valid, y, last], hint)


def _convert_recurrent(g, layer, x, states):
    """``Recurrent`` or a Keras RNN layer: returns Keras's outputs. Stacked
    cells (``StackedCells``, a list of cells) become one node per cell, each
    reading the whole output sequence of the one below: the same numbers as
    stacking them within each step, in either direction."""
    from types import SimpleNamespace

    from keras_seqmodels.cells import StackedCells

    cells = list(layer.cell.cells) if isinstance(layer.cell, StackedCells) else [layer.cell]
    runners = [SimpleNamespace(cell=c, stateful=getattr(layer, "stateful", False)) for c in cells]
    for runner in runners:
        _check_runner(layer, runner)
    batch, hint = x.shape[0], layer.name
    direction = "reverse" if layer.go_backwards else "forward"
    states = list(states or [])
    finals, seq = [], x
    for k, runner in enumerate(runners):
        n = _state_count(_cell_kind(runner.cell))
        mine, states = states[:n], states[n:]
        y, y_h, y_c = _recurrent_node(g, layer, [runner], seq, mine, direction)
        units = runner.cell.units
        finals += [(v, units) for v in (y_h, y_c) if v is not None]
        if k + 1 < len(runners):  # ONNX's Y is in time order in both directions
            seq = _Tensor(_sequence_output(g, y, hint), (batch, x.shape[1], units), x.mask)

    def state(value):
        return g.op("Squeeze", [value, g.ints([0], "axes0")], f"{hint}/state")

    if layer.return_sequences:
        out = _sequence_output(g, y, f"{hint}/sequences")
        if layer.go_backwards:
            out = _reverse_time(g, out, hint)
        elif x.lens and not getattr(layer, "zero_output_for_mask", True):
            out = _hold_last_output(g, out, state(y_h), x.lens, hint)
        output = _Tensor(out, (batch, x.shape[1], units), x.mask)
    else:
        output = _Tensor(state(y_h), (batch, units))
    if not layer.return_state:
        return output
    return [output] + [_Tensor(state(v), (batch, n)) for v, n in finals]


def _merge(g, mode, a, b, hint):
    if mode == "concat":
        return g.op("Concat", [a, b], hint, axis=-1)
    if mode == "sum":
        return g.op("Add", [a, b], hint)
    if mode == "mean":
        return g.op("Mul", [g.op("Add", [a, b], hint), g.const(0.5, "half")], hint)
    return g.op("Mul", [a, b], hint)


def _convert_bidirectional(g, layer, x, states):
    """This package's ``Bidirectional`` or Keras's: one bidirectional node.

    ONNX's reverse direction reads each row's first ``sequence_lens`` steps
    last first, as both wrappers do with a right-padded mask."""
    fw, bw = layer.forward_layer, layer.backward_layer
    for sub in (fw, bw):
        _check_runner(layer, sub)
    if type(fw) is not type(bw):
        raise _unsupported(
            layer,
            f"its forward and backward layers must be of one class (one ONNX node); "
            f"received {type(fw).__name__} and {type(bw).__name__}",
        )
    if getattr(fw, "go_backwards", False):
        raise _unsupported(layer, "its forward layer has go_backwards=True")
    y, y_h, y_c = _recurrent_node(g, layer, [fw, bw], x, states, "bidirectional")
    hint = layer.name
    batch, units = x.shape[0], fw.cell.units
    parts = []
    if layer.return_sequences:
        for k in range(2):
            part = _direction_slice(g, y, 1, k, f"{hint}/dir{k}")
            part = _sequence_output(g, part, f"{hint}/sequences{k}")
            parts.append(_Tensor(part, (batch, x.shape[1], units), x.mask))
    else:
        for k in range(2):
            part = _direction_slice(g, y_h, 0, k, f"{hint}/dir{k}")
            parts.append(_Tensor(g.op("Squeeze", [part, g.ints([0], "axes0")], hint),
                                 (batch, units)))  # fmt: skip
    mode = layer.merge_mode
    mode = {"ave": "mean", "mul": "product"}.get(mode, mode)
    if mode is None:
        outputs = parts
    else:
        a, b = parts
        width = 2 * units if mode == "concat" else units
        merged = _merge(g, mode, a.name, b.name, hint)
        outputs = [_Tensor(merged, a.shape[:-1] + (width,), a.mask)]
    if not layer.return_state:
        return outputs[0] if len(outputs) == 1 else outputs
    fw_states, bw_states = [], []
    for k, target in enumerate((fw_states, bw_states)):
        for value in (y_h, y_c):
            if value is None:
                continue
            part = _direction_slice(g, value, 0, k, f"{hint}/state{k}")
            part = g.op("Squeeze", [part, g.ints([0], "axes0")], hint)
            target.append(_Tensor(part, (batch, units)))
    return outputs + fw_states + bw_states


# Other layers ----------------------------------------------------------------


def _lens_from_mask(g, mask_bt, hint):
    as_int = g.op("Cast", [mask_bt], hint, to=6)  # int32
    return g.op("ReduceSum", [as_int, g.ints([1], "axes1")], f"{hint}/sequence_lens", keepdims=0)


def _convert_embedding(g, layer, x, reverse=False):
    hint = layer.name
    if reverse:
        if getattr(layer, "tie_weights", True):
            table = g.weight(layer.embeddings, f"{hint}/embeddings")
            matrix = g.op("Transpose", [table], f"{hint}/reverse", perm=[1, 0])
            width = layer.input_dim
        else:
            matrix = g.weight(layer.reverse_embeddings, f"{hint}/reverse")
            width = layer.reverse_embeddings.shape[1]
        out = g.op("MatMul", [x.name, matrix], hint)
        cap = getattr(layer, "logit_soft_cap", None)
        if cap:
            scaled = g.op("Div", [out, g.const(cap, "cap")], hint)
            out = g.op("Mul", [g.op("Tanh", [scaled], hint), g.const(cap, "cap")], hint)
        return _Tensor(out, x.shape[:-1] + (width,), x.mask)
    table = g.weight(layer.embeddings, f"{hint}/embeddings")
    out = g.op("Gather", [table, x.name], hint, axis=0)
    lens = x.mask
    if layer.mask_zero:
        if len(x.shape) != 2:
            raise _unsupported(layer, "mask_zero needs ids of shape (batch, time)")

        def nonzero():
            ids = g.op("Cast", [x.name], hint, to=7)
            return g.op("Not", [g.op("Equal", [ids, g.ints(0, "zero")], hint)], hint)

        lens = _Lens(lambda: _lens_from_mask(g, nonzero(), hint))
    return _Tensor(out, x.shape + (layer.output_dim,), lens)


def _convert_dense(g, layer, x):
    if getattr(layer, "quantization_mode", None):
        raise _unsupported(layer, "quantized Dense layers are not mapped")
    hint = layer.name
    out = g.op("MatMul", [x.name, g.weight(layer.kernel, f"{hint}/kernel")], hint)
    if layer.use_bias:
        out = g.op("Add", [out, g.weight(layer.bias, f"{hint}/bias")], hint)
    out = _apply_activation(g, out, layer.activation, layer)
    return _Tensor(out, x.shape[:-1] + (layer.units,), x.mask)


def _convert_masking(g, layer, x):
    hint = layer.name
    value = g.const(layer.mask_value, f"{hint}/mask_value")
    differs = g.op("Cast", [g.op("Not", [g.op("Equal", [x.name, value], hint)], hint)], hint, to=1)
    count = g.op("ReduceSum", [differs, g.ints([-1], "axes_last")], hint, keepdims=1)
    keep = g.op("Greater", [count, g.const(0.0, "zero_f")], hint)
    out = g.op("Mul", [x.name, g.op("Cast", [keep], hint, to=1)], hint)

    def lens():
        keep_bt = g.op("Squeeze", [keep, g.ints([-1], "axes_last")], hint)
        return _lens_from_mask(g, keep_bt, hint)

    return _Tensor(out, x.shape, _Lens(lens))


def _merged_lens(g, tensors, hint, concatenate=False):
    # Keras merges masks with a logical or; Concatenate gives an unmasked
    # input an all-true mask, so then the result is unmasked.
    lens = [t.lens for t in tensors if t.lens]
    if not lens or (concatenate and len(lens) < len(tensors)):
        return None
    return lens[0] if len(lens) == 1 else g.op("Max", lens, f"{hint}/sequence_lens")


def _convert_merge(g, layer, inputs):
    import keras

    hint = layer.name
    names = [t.name for t in inputs]
    concatenate = isinstance(layer, keras.layers.Concatenate)
    masked = any(t.mask is not None for t in inputs)
    lens = _Lens(lambda: _merged_lens(g, inputs, hint, concatenate)) if masked else None
    shape = inputs[0].shape
    if concatenate:
        axis = layer.axis if layer.axis >= 0 else len(shape) + layer.axis
        if masked and axis != len(shape) - 1:
            raise _unsupported(layer, "masked inputs concatenated along a non-feature axis")
        widths = [t.shape[axis] for t in inputs]
        width = None if None in widths else sum(widths)
        out = g.op("Concat", names, hint, axis=axis)
        return _Tensor(out, shape[:axis] + (width,) + shape[axis + 1 :], lens)
    if isinstance(layer, keras.layers.Subtract):
        return _Tensor(g.op("Sub", names, hint), shape, lens)
    op = {
        keras.layers.Add: "Sum",
        keras.layers.Multiply: "Mul",
        keras.layers.Average: "Mean",
        keras.layers.Maximum: "Max",
        keras.layers.Minimum: "Min",
    }[type(layer)]
    if op == "Mul":
        out = names[0]
        for n in names[1:]:
            out = g.op("Mul", [out, n], hint)
    else:
        out = g.op(op, names, hint)
    return _Tensor(out, shape, lens)


def _convert_reshape(g, layer, x):
    import keras

    hint = layer.name
    if isinstance(layer, keras.layers.Flatten):
        width = None if None in x.shape[1:] else int(np.prod(x.shape[1:]))
        return _Tensor(g.op("Flatten", [x.name], hint, axis=1), (x.shape[0], width))
    target = [0] + [int(d) for d in layer.target_shape]
    out = g.op("Reshape", [x.name, g.ints(target, f"{hint}/shape")], hint)
    return _Tensor(out, (x.shape[0],) + tuple(layer.target_shape))


def _shape_of(g, x, start, end, hint):
    """The dimensions ``start:end`` of ``x`` at run time, an int64 vector."""
    return g.op("Slice", [g.op("Shape", [x], hint), g.ints([start]), g.ints([end])], hint)


def _reshape(g, x, parts, hint):
    return g.op("Reshape", [x, g.op("Concat", parts, hint, axis=0)], hint)


def _convert_four_directional(g, layer, x):
    """``FourDirectional2D``: patches, then each axis swept by one
    bidirectional node over all rows (or columns) of all images."""
    hint = layer.name
    (ph, pw), c = layer.patch_size, x.shape[-1]
    grid = x.name
    if (ph, pw) != (1, 1):
        h, w = x.shape[1], x.shape[2]
        pad_h, pad_w = (-h) % ph, (-w) % pw
        if pad_h or pad_w:
            pads = g.ints([0, 0, 0, 0, 0, pad_h, pad_w, 0], "pads")
            grid = g.op("Pad", [grid, pads], hint)
        gh, gw = (h + pad_h) // ph, (w + pad_w) // pw
        grid = g.op("Reshape", [grid, g.ints([0, gh, ph, gw, pw, c])], hint)
        grid = g.op("Transpose", [grid], hint, perm=[0, 1, 3, 2, 4, 5])
        grid = g.op("Reshape", [grid, g.ints([0, gh, gw, ph * pw * c])], hint)

    def sweep(bidirectional, value, width):
        rows = _reshape(g, value, [g.ints([-1]), _shape_of(g, value, 2, 4, hint)], hint)
        out = _convert_bidirectional(g, bidirectional, _Tensor(rows, (None, None, width)), None)
        return _reshape(g, out.name, [_shape_of(g, value, 0, 3, hint), g.ints([-1])], hint)

    def columns(value, width):
        turned = g.op("Transpose", [value], hint, perm=[0, 2, 1, 3])
        return g.op("Transpose", [sweep(layer.vertical, turned, width)], hint, perm=[0, 2, 1, 3])

    features = ph * pw * c
    horizontal = sweep(layer.horizontal, grid, features)
    if layer.arrangement == "renet":
        out = columns(horizontal, 2 * layer.horizontal.forward_layer.cell.units)
    else:
        out = g.op("Concat", [horizontal, columns(grid, features)], hint, axis=-1)
    return _Tensor(out, layer.compute_output_shape(x.shape))


def _convert_character_encoder(g, layer, x):
    """``CharacterEncoder``: all words as one batch of character sequences,
    one bidirectional LSTM node, its final states side by side."""
    hint = layer.name
    flat = _reshape(g, x.name, [g.ints([-1]), _shape_of(g, x.name, 2, 3, hint)], hint)
    ids = _Tensor(flat, (None, x.shape[2]), dtype=x.dtype)
    chars = _convert_embedding(g, layer.embedding, ids)
    _, y_h, _ = _recurrent_node(
        g, layer, [layer.forward, layer.backward], chars, None, "bidirectional"
    )
    both = g.op("Transpose", [y_h], hint, perm=[1, 0, 2])  # (words, 2, units)
    out = _reshape(g, both, [_shape_of(g, x.name, 0, 2, hint), g.ints([2 * layer.units])], hint)
    return _Tensor(out, x.shape[:2] + (2 * layer.units,))


# Walking the model -------------------------------------------------------------


def _bind(layer, args, kwargs):
    try:
        bound = inspect.signature(layer.call).bind(*args, **kwargs)
    except TypeError as error:
        raise _unsupported(layer, f"its call arguments could not be read ({error})") from None
    return dict(bound.arguments)


def _convert_layer(g, layer, args, kwargs):
    """The ONNX form of one layer call: returns the outputs as ``_Tensor`` s,
    in Keras's output structure."""
    import keras

    from keras_seqmodels.layers import (
        Bias,
        Bidirectional,
        CharacterEncoder,
        FourDirectional2D,
        Recurrent,
    )

    if not isinstance(layer, keras.layers.Layer):
        return _convert_op(g, layer, args)
    call = _bind(layer, args, kwargs)
    inputs = [v for v in call.values() if isinstance(v, _Tensor)]
    x = next(iter(call.values()))
    mask = call.pop("mask", None)
    if isinstance(mask, _Tensor) and isinstance(x, _Tensor):
        # A functional model passes each layer its mask, computed by ops of
        # the graph (converted below); a Sequential one leaves it to us.
        x = _Tensor(x.name, x.shape, g.lens_of(mask, layer.name), x.dtype)

    if isinstance(layer, keras.Model):
        return _walk(g, layer, x if isinstance(x, (list, tuple)) else [x])
    if isinstance(layer, (Recurrent, keras.layers.RNN)) or (
        isinstance(layer, (Bidirectional, keras.layers.Bidirectional))
    ):
        states = call.get("initial_state")
        if isinstance(states, _Tensor):
            states = [states]
        if states is not None and not all(isinstance(s, _Tensor) for s in states):
            raise _unsupported(layer, "`initial_state` must be model tensors (Keras inputs)")
        if isinstance(layer, (Bidirectional, keras.layers.Bidirectional)):
            return _convert_bidirectional(g, layer, x, states)
        return _convert_recurrent(g, layer, x, states)
    kind = type(layer)
    identity = (
        keras.layers.Dropout,
        keras.layers.SpatialDropout1D,
        keras.layers.GaussianNoise,
        keras.layers.GaussianDropout,
        keras.layers.AlphaDropout,
        keras.layers.InputLayer,
    )
    if kind in identity:
        return x
    if kind in (keras.layers.Embedding, keras.layers.ReversibleEmbedding):
        return _convert_embedding(g, layer, x, reverse=bool(call.get("reverse", False)))
    if kind is keras.layers.Dense:
        return _convert_dense(g, layer, x)
    if kind is Bias:
        out = g.op("Add", [x.name, g.weight(layer.bias, f"{layer.name}/bias")], layer.name)
        return _Tensor(out, x.shape, x.mask)
    if kind is keras.layers.Activation:
        return _Tensor(_apply_activation(g, x.name, layer.activation, layer), x.shape, x.mask)
    if kind is keras.layers.Softmax:
        if layer.axis not in (-1, len(x.shape) - 1):
            raise _unsupported(layer, f"softmax over axis {layer.axis}; only the last axis")
        return _Tensor(g.op("Softmax", [x.name], layer.name, axis=-1), x.shape, x.mask)
    if kind is keras.layers.ReLU and layer.max_value is None and not layer.negative_slope:
        if layer.threshold == 0:
            return _Tensor(g.op("Relu", [x.name], layer.name), x.shape, x.mask)
    if kind is keras.layers.Masking:
        return _convert_masking(g, layer, x)
    if kind is keras.layers.Rescaling:
        out = g.op("Mul", [x.name, g.const(layer.scale, f"{layer.name}/scale")], layer.name)
        out = g.op("Add", [out, g.const(layer.offset, f"{layer.name}/offset")], layer.name)
        return _Tensor(out, x.shape, x.mask)
    if kind in (keras.layers.Reshape, keras.layers.Flatten):
        return _convert_reshape(g, layer, x)
    if kind in (
        keras.layers.Concatenate,
        keras.layers.Add,
        keras.layers.Subtract,
        keras.layers.Multiply,
        keras.layers.Average,
        keras.layers.Maximum,
        keras.layers.Minimum,
    ):
        return _convert_merge(g, layer, list(x) if isinstance(x, (list, tuple)) else inputs)
    if kind is FourDirectional2D:
        return _convert_four_directional(g, layer, x)
    if kind is CharacterEncoder:
        return _convert_character_encoder(g, layer, x)
    if kind is keras.layers.TimeDistributed:
        inner = layer.layer
        if not isinstance(inner, (keras.layers.Dense, keras.layers.Activation, *identity)):
            raise _unsupported(layer, f"TimeDistributed over {type(inner).__name__} is not "
                               "mapped (Dense, Activation and Dropout are)")  # fmt: skip
        out = _convert_layer(g, inner, (x,), {})
        return _Tensor(out.name, out.shape, x.mask)
    raise _unsupported(layer)


def _as_bool(g, t):
    return t.name if t.dtype == "bool" else g.op("Cast", [t.name], "as_bool", to=9)


def _operand(g, value, like):
    if isinstance(value, _Tensor):
        return value.name
    dtype = like.dtype if like.dtype != "bool" else "bool"
    return g.const(value, "scalar", dtype)


def _broadcast(a, b):
    a, b = (1,) * (len(b) - len(a)) + tuple(a), (1,) * (len(a) - len(b)) + tuple(b)
    return tuple(q if p == 1 else p if q == 1 or q is None else q for p, q in zip(a, b))


def _convert_op(g, op, args):
    """The ``keras.ops`` operations a functional graph records to compute
    masks (``Embedding(mask_zero=True)``, ``Masking``, merge layers)."""
    kind = type(op).__name__
    hint = op.name
    x = args[0]
    if kind in ("NotEqual", "Equal"):
        a, b = x, args[1]
        equal = g.op("Equal", [_operand(g, a, b), _operand(g, b, a)], hint)
        out = g.op("Not", [equal], hint) if kind == "NotEqual" else equal
        shape = a.shape if isinstance(a, _Tensor) else b.shape
        return _Tensor(out, shape, dtype="bool")
    if kind in ("Any", "All") and op.axis is not None:
        # any: a sum of ones over the axes is positive; all: none is false.
        axes = [a if a >= 0 else len(x.shape) + a for a in op.axis]
        value = _as_bool(g, x) if kind == "Any" else g.op("Not", [_as_bool(g, x)], hint)
        count = g.op("ReduceSum", [g.op("Cast", [value], hint, to=6), g.ints(axes, "axes")],
                     hint, keepdims=int(bool(op.keepdims)))  # fmt: skip
        out = g.op("Greater", [count, g.const(0, "zero_i", "int32")], hint)
        if kind == "All":
            out = g.op("Not", [out], hint)
        shape = tuple(d for k, d in enumerate(x.shape) if k not in axes or op.keepdims)
        if op.keepdims:
            shape = tuple(1 if k in axes else d for k, d in enumerate(x.shape))
        return _Tensor(out, shape, dtype="bool")
    if kind in ("LogicalOr", "LogicalAnd"):
        b = args[1]
        onnx_op = "Or" if kind == "LogicalOr" else "And"
        out = g.op(onnx_op, [_as_bool(g, x), _as_bool(g, b)], hint)
        return _Tensor(out, _broadcast(x.shape, b.shape), dtype="bool")
    if kind == "LogicalNot":
        return _Tensor(g.op("Not", [_as_bool(g, x)], hint), x.shape, dtype="bool")
    if kind == "ExpandDims":
        axis = op.axis if isinstance(op.axis, int) else op.axis[0]
        axis = axis if axis >= 0 else len(x.shape) + 1 + axis
        out = g.op("Unsqueeze", [x.name, g.ints([axis], "axes")], hint)
        return _Tensor(out, x.shape[:axis] + (1,) + x.shape[axis:], dtype=x.dtype)
    if kind in ("ZerosLike", "OnesLike") and op.dtype in (None, "bool"):
        # Only ever consumed by logical ops here: a bool tensor of x's shape.
        same = g.op("Equal", [x.name, x.name], hint)  # true, also for NaN-free x
        if x.dtype.startswith("float"):
            same = g.op("Or", [same, g.op("IsNaN", [x.name], hint)], hint)
        out = same if kind == "OnesLike" else g.op("Not", [same], hint)
        return _Tensor(out, x.shape, dtype="bool")
    if kind == "Concatenate":
        parts = list(x)
        axis = op.axis if op.axis >= 0 else len(parts[0].shape) + op.axis
        dtype = "bool" if all(p.dtype == "bool" for p in parts) else parts[0].dtype
        names = [_as_bool(g, p) if dtype == "bool" else p.name for p in parts]
        widths = [p.shape[axis] for p in parts]
        width = None if None in widths else sum(widths)
        shape = parts[0].shape[:axis] + (width,) + parts[0].shape[axis + 1 :]
        return _Tensor(g.op("Concat", names, hint, axis=axis), shape, dtype=dtype)
    if kind == "Cast" and str(op.dtype) == "bool":
        return _Tensor(_as_bool(g, x), x.shape, dtype="bool")
    raise ValueError(
        f"to_onnx: operation {kind} '{op.name}' of the model's graph cannot be written as "
        f"ONNX (only the mask operations of Embedding, Masking and merge layers are); "
        f"{OTHER_FORMATS}"
    )


def _walk(g, model, inputs):
    """Convert ``model``'s graph on the ONNX values ``inputs``; returns its
    flattened outputs."""
    import keras

    from keras_seqmodels import _compat

    if isinstance(model, keras.Sequential):
        x = inputs[0]
        for layer in model.layers:
            x = _convert_layer(g, layer, (x,), {})
        return [x] if isinstance(x, _Tensor) else list(x)
    outputs = _compat.run_functional_graph(
        model, inputs, lambda op, *args, **kwargs: _convert_layer(g, op, args, kwargs)
    )
    return list(keras.tree.flatten(outputs))


def _value_info(name, shape, dtype, dims):
    from onnx import TensorProto, helper

    kinds = {
        "float16": TensorProto.FLOAT,
        "bfloat16": TensorProto.FLOAT,
        "float32": TensorProto.FLOAT,
        "float64": TensorProto.FLOAT,
        "int32": TensorProto.INT32,
        "int64": TensorProto.INT64,
        "bool": TensorProto.BOOL,
    }
    if dtype not in kinds:
        raise ValueError(
            f"to_onnx: input '{name}' has dtype {dtype}; ONNX inputs here are float, "
            "int32, int64 or bool (strings are preprocessed in Python: feed the ids)"
        )
    shape = [d if d is not None else dims[k] if k < len(dims) else f"{name}_dim{k}"
             for k, d in enumerate(shape)]  # fmt: skip
    return helper.make_tensor_value_info(name, kinds[dtype], shape)


def _output_names(model):
    """The output layers' names; ``name_1``, ``name_2`` for a layer's further
    outputs (its states); ``output_k`` where Keras has no names."""
    import keras

    names = list(getattr(model, "output_names", None) or [])
    count = len(keras.tree.flatten(model.outputs))
    if len(names) != count:
        names = [f"output_{k}" for k in range(count)]
    seen, unique = {}, []
    for name in names:
        k = seen.get(name, 0)
        seen[name] = k + 1
        unique.append(name if k == 0 else f"{name}_{k}")
    return unique


def to_onnx(model, path, *, opset=None):
    """Write a Keras model as an ONNX file whose recurrent layers are native
    ONNX ``LSTM`` / ``GRU`` / ``RNN`` nodes.

    See the module docstring for the layers mapped and what is new relative
    to Keras's ``model.export(format="onnx")`` and tf2onnx.

    Args:
        model: a built functional or ``Sequential`` Keras model (or a path to
            a ``.keras`` file, loaded in safe mode).
        path: the ``.onnx`` file to write (its folder is created).
        opset: the ONNX opset to target, an integer from 14 to the installed
            ``onnx``'s newest; default 17 (read by onnxruntime since 1.11).

    Returns:
        ``path``.

    Raises:
        ValueError: for a layer that ONNX cannot carry (naming it and the
            formats that can), an activation an ONNX recurrent node lacks, a
            stateful layer, a string input, or an opset out of range.

    Inputs and outputs of the graph carry the names of the model's inputs
    and output layers; an unknown batch size or number of steps is a
    symbolic dimension (``batch``, ``time``).

    Example:

    >>> import os, tempfile, numpy as np, keras, keras_seqmodels as ks
    >>> ids = keras.Input((None,), dtype="int32", name="ids")
    >>> x = keras.layers.Embedding(20, 8, mask_zero=True)(ids)
    >>> x = ks.layers.Bidirectional(ks.layers.Recurrent(ks.cells.GRUCell(4)))(x)
    >>> model = keras.Model(ids, keras.layers.Dense(3, activation="softmax")(x))
    >>> path = to_onnx(model, os.path.join(tempfile.mkdtemp(), "m.onnx"))
    >>> import onnxruntime as ort
    >>> session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    >>> ids = np.array([[3, 4, 5, 0], [6, 7, 0, 0]], "int32")
    >>> got = session.run(None, {"ids": ids})[0]
    >>> bool(np.allclose(got, model.predict(ids, verbose=0), atol=1e-5))
    True
    """
    import os

    import keras
    import onnx
    from onnx import helper

    if isinstance(model, (str, os.PathLike)) and str(model).endswith(".keras"):
        check_keras_file(str(model))  # sizes in its config bounded first
        model = keras.saving.load_model(model, compile=False, safe_mode=True)
    if not isinstance(model, keras.Model):
        raise TypeError(
            "to_onnx: `model` must be a keras.Model or a path to a .keras file. "
            f"Received: {type(model).__name__}"
        )
    newest = onnx.defs.onnx_opset_version()
    opset = DEFAULT_OPSET if opset is None else opset
    if not isinstance(opset, int) or not MIN_OPSET <= opset <= newest:
        raise ValueError(
            f"to_onnx: `opset` must be an integer from {MIN_OPSET} to {newest}. "
            f"Received: opset={opset!r}"
        )
    try:
        keras_inputs = list(model.inputs)
    except (AttributeError, ValueError):
        keras_inputs = None
    if not keras_inputs:
        why = _WHY_NOT.get(type(model).__name__)
        raise ValueError(
            f"to_onnx: model {type(model).__name__} '{model.name}' has no symbolic inputs "
            "(a subclassed model); "
            + (f"{why}; use the SavedModel export" if why else "build it with keras.Input "
               "(a functional or Sequential model)")
        )  # fmt: skip
    strings = [t.name for t in keras_inputs if str(t.dtype) == "string"]
    if strings:
        inner = [layer.name for layer in model.layers if isinstance(layer, keras.Model)]
        hint = f" (here perhaps model.get_layer({inner[0]!r}))" if inner else ""
        raise ValueError(
            f"to_onnx: input '{strings[0]}' of model '{model.name}' holds strings, which "
            "ONNX's numeric graph does not preprocess; export the id-level network inside "
            f"it{hint} and tokenize in your code, or use the SavedModel export"
        )
    g = _Graph(opset)
    graph_inputs, values = [], []
    for k, t in enumerate(keras_inputs):
        name = g.fresh(getattr(t, "name", None) or f"input_{k}")
        if name.startswith("keras_tensor"):
            name = f"input_{k}"
        dims = ["batch", "time" if k == 0 else f"{name}_time"]
        graph_inputs.append(_value_info(name, t.shape, str(t.dtype), dims))
        dtype = str(t.dtype)
        values.append(_Tensor(name, t.shape, dtype="float32" if "float" in dtype else dtype))
    names = [g.fresh(name) for name in _output_names(model)]  # before the graph's own
    outputs = _walk(g, model, values)
    if len(outputs) != len(names):
        raise ValueError(
            f"to_onnx: model '{model.name}' gave {len(outputs)} outputs for its "
            f"{len(names)} output names {names}"
        )
    graph_outputs = []
    for name, out in zip(names, outputs):
        g.nodes.append(helper.make_node("Identity", [out.name], [name], name=g.fresh(name)))
        graph_outputs.append(onnx.ValueInfoProto(name=name))
    graph = helper.make_graph(g.nodes, model.name, graph_inputs, graph_outputs, g.initializers)
    proto = helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", opset)],
        producer_name="keras_seqmodels",
    )
    proto.ir_version = helper.find_min_ir_version_for(proto.opset_import)
    # The outputs' types and shapes come from ONNX's own shape inference.
    proto = onnx.shape_inference.infer_shapes(proto, strict_mode=True)
    onnx.checker.check_model(proto)
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    onnx.save(proto, path)
    return path


__all__ = ["to_onnx"]
