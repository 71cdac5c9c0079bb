"""The ONNX graph under construction, for ``onnx_export.to_onnx`` and its
converters.

- ``_Graph`` collects nodes and initializers: fresh value names, constants
  (one initializer per Keras variable and per int64 value), and ``op``, which
  appends one node and returns its outputs' names;
- ``_Tensor`` is one value of that graph with its Keras shape, dtype and
  ``_Mask``: its Keras mask as a boolean (batch, time) value, built on first
  use;
- ``_unsupported`` is the ``ValueError`` for a layer ONNX cannot carry,
  saying why and which formats can;
- small helpers shared by the converters: a value as bool, a
  concatenation's shape.
"""

import numpy as np

OTHER_FORMATS = "use keras_seqmodels.export.to_litert or the SavedModel export"


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


class _Mask:
    """A Keras mask: a boolean (batch, time) value built on first use and
    shared by the tensors it masks (in a functional model the recurrent
    layers take their mask from the graph's own mask operations instead)."""

    def __init__(self, build):
        self._build = build
        self._name = None

    def name(self):
        if self._name is None:
            self._name = self._build()
        return self._name


class _Tensor:
    """A value of the ONNX graph: its name, its Keras shape, its ``_Mask``
    where the Keras tensor has a mask, and its dtype."""

    def __init__(self, name, shape, mask=None, dtype="float32"):
        self.name = name
        self.shape = tuple(shape)
        self.mask = mask
        self.dtype = dtype

    @property
    def mask_name(self):
        """The boolean (batch, time) mask's name, or None."""
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
        """The ``_Mask`` of a (batch, time) mask tensor of the graph, one per
        mask."""
        key = ("mask", mask.name)
        if key not in self._weights:
            self._weights[key] = _Mask(lambda: _as_bool(self, mask))
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


def _as_bool(g, t):
    return t.name if t.dtype == "bool" else g.op("Cast", [t.name], "as_bool", to=9)


def _concat_shape(tensors, axis):
    """The Keras shape of ``tensors`` concatenated along ``axis`` (not negative)."""
    widths = [t.shape[axis] for t in tensors]
    shape = tensors[0].shape
    return shape[:axis] + (None if None in widths else sum(widths),) + shape[axis + 1 :]
