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
- a mask from ``Embedding(mask_zero=True)``, ``Masking`` or a merge ->
  each row's unmasked steps moved to its front and counted as the nodes'
  ``sequence_lens``, the outputs read back at Keras's steps
  (``onnx_steps``): exact for every mask, left padding and holes too.
- the ``linear_rnn`` layers -> their gates as ``MatMul`` and elementwise
  ops and the linear recurrence as one ``Scan`` node over time
  (``onnx_linear``; the one place a ``Scan`` is written), alone or in a
  ``Bidirectional`` (two ``Scan`` nodes).

Around them: ``InputLayer``, ``Embedding`` and ``ReversibleEmbedding``
(``Gather``; the reverse call a ``MatMul`` by the transposed matrix),
``ks.layers.Bias``, ``Dense``, ``Activation``, ``Softmax``, ``ReLU``,
``Dropout`` and the other inference-time identities, ``Masking``,
``Concatenate``, ``Add``, ``Subtract``, ``Multiply``, ``Average``,
``TimeDistributed`` over those, ``Rescaling``, ``Reshape``, ``Flatten``,
``LayerNormalization`` (last axis), ``GlobalAveragePooling1D`` and nested
functional or ``Sequential`` models. Any other layer raises a
``ValueError`` naming it and the formats that can carry it.

Numbers are float32 throughout (weights of a mixed precision model are
cast); inputs keep their Keras dtype (float inputs become float32). The
batch and an unknown number of steps are symbolic dimensions of the graph.

The converters live beside this module, one concern each: ``onnx_graph``
(the graph under construction and its values), ``onnx_activations``,
``onnx_recurrent`` (the recurrent nodes), ``onnx_steps`` (their input and
outputs under a mask), ``onnx_layers`` (the other
layers) and ``onnx_ops`` (the mask operations of a functional graph). This
module walks the model and dispatches each layer call to them.

Example:

>>> import os, tempfile, numpy as np, keras, keras_seqmodels as ks
>>> model = keras.Sequential([keras.Input((None, 3)),
...                           ks.layers.Recurrent(ks.cells.LSTMCell(4))])
>>> path = ks.export.to_onnx(model, os.path.join(tempfile.mkdtemp(), "m.onnx"))
>>> import onnx
>>> [node.op_type for node in onnx.load(path).graph.node].count("LSTM")
1
"""

import inspect

from keras_seqmodels.export.atomic import atomic_file
from keras_seqmodels.export.checks import check_weight_bytes
from keras_seqmodels.export.onnx_activations import _apply_activation
from keras_seqmodels.export.onnx_graph import _WHY_NOT, _Graph, _Tensor, _unsupported
from keras_seqmodels.export.onnx_layers import (
    _convert_character_encoder,
    _convert_dense,
    _convert_embedding,
    _convert_four_directional,
    _convert_global_average_pooling_1d,
    _convert_layer_normalization,
    _convert_masking,
    _convert_merge,
    _convert_reshape,
)
from keras_seqmodels.export.onnx_linear import (
    _convert_linear,
    _convert_linear_bidirectional,
    _is_linear,
)
from keras_seqmodels.export.onnx_ops import _convert_op
from keras_seqmodels.export.onnx_recurrent import _convert_bidirectional, _convert_recurrent
from keras_seqmodels.utils.loading import load_model_file

DEFAULT_OPSET = 17
MIN_OPSET = 14  # LSTM/GRU/RNN 14, axes of Squeeze/ReduceSum as inputs (13)


# Walking the model -------------------------------------------------------------


def _bind(layer, args, kwargs):
    try:
        bound = inspect.signature(layer.call).bind(*args, **kwargs)
    except TypeError as error:
        raise _unsupported(layer, f"its call arguments could not be read ({error})") from None
    return dict(bound.arguments)


def _convert_layer(g, layer, args, kwargs, recorded=False):
    """The ONNX form of one layer call: returns the outputs as ``_Tensor`` s,
    in Keras's output structure. ``recorded``: a call of a functional
    model's graph, whose arguments say which mask Keras passed."""
    import keras

    from keras_seqmodels.layers import Bias, Bidirectional, FourDirectional2D, Recurrent
    from keras_seqmodels.tagging.character_encoder import CharacterEncoder

    if not isinstance(layer, keras.layers.Layer):
        return _convert_op(g, layer, args)
    call = _bind(layer, args, kwargs)
    inputs = [v for v in call.values() if isinstance(v, _Tensor)]
    x = next(iter(call.values()))
    mask = call.pop("mask", None)
    masked = True
    if isinstance(mask, _Tensor) and isinstance(x, _Tensor):
        # A functional model passes each layer its mask, computed by ops of
        # the graph (converted by onnx_ops); a Sequential one leaves it to us.
        x = _Tensor(x.name, x.shape, g.lens_of(mask, layer.name), x.dtype)
    elif recorded and mask is None:
        # Keras passes a call its input's mask only when it has one tensor
        # argument: a recurrent layer given initial_state reads every step.
        masked = False

    if isinstance(layer, keras.Model):
        return _walk(g, layer, x if isinstance(x, (list, tuple)) else [x])
    bidirectional = (Bidirectional, keras.layers.Bidirectional)
    if isinstance(layer, (Recurrent, keras.layers.RNN, *bidirectional)) or _is_linear(layer):
        states = call.get("initial_state")
        if isinstance(states, _Tensor):
            states = [states]
        if states is not None and not all(isinstance(s, _Tensor) for s in states):
            raise _unsupported(layer, "`initial_state` must be model tensors (Keras inputs)")
        if _is_linear(layer):
            return _convert_linear(g, layer, x, states, masked)
        if isinstance(layer, bidirectional):
            if _is_linear(getattr(layer, "forward_layer", None)):
                return _convert_linear_bidirectional(g, layer, x, states, masked)
            return _convert_bidirectional(g, layer, x, states, masked)
        return _convert_recurrent(g, layer, x, states, masked)
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
    if kind is keras.layers.LayerNormalization:
        return _convert_layer_normalization(g, layer, x)
    if kind is keras.layers.GlobalAveragePooling1D:
        return _convert_global_average_pooling_1d(g, layer, x)
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
        model, inputs, lambda op, *args, **kwargs: _convert_layer(g, op, args, kwargs, True)
    )
    return list(keras.tree.flatten(outputs))


# Writing the file ------------------------------------------------------------


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
        model = load_model_file(model, option="to_onnx")
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
        network = getattr(model, "network", None)
        if why is None and isinstance(network, keras.Model) and getattr(network, "inputs", None):
            advice = ("its id-level network is a functional model: export model.network (the "
                      "model's call is that network's, so the outputs are the same)")  # fmt: skip
        elif why:
            advice = f"{why}; use the SavedModel export"
        else:
            advice = "build it with keras.Input (a functional or Sequential model)"
        raise ValueError(
            f"to_onnx: model {type(model).__name__} '{model.name}' has no symbolic inputs "
            f"(a subclassed model); {advice}"
        )
    strings = [t.name for t in keras_inputs if str(t.dtype) == "string"]
    if strings:
        inner = [layer.name for layer in model.layers if isinstance(layer, keras.Model)]
        hint = f" (here perhaps model.get_layer({inner[0]!r}))" if inner else ""
        raise ValueError(
            f"to_onnx: input '{strings[0]}' of model '{model.name}' holds strings, which "
            "ONNX's numeric graph does not preprocess; export the id-level network inside "
            f"it{hint} and tokenize in your code, or use the SavedModel export"
        )
    # The graph has a few nodes per layer whatever the length; its size is
    # the weights', bounded by one protobuf's 2 GiB.
    check_weight_bytes(model, "to_onnx")
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
    with atomic_file(path) as partial:  # complete or not at all
        onnx.save(proto, partial)
    return path


__all__ = ["to_onnx"]
