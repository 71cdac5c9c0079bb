"""Edits of a converted LiteRT flatbuffer (``litert_export``): where the
converter's rewrite departs from the Keras layer.

``_patch_fused_ops`` sets each fused LSTM's ``cell_clip`` to 0 and adds its
peephole weights, and sets each fused RNN's activation; ``_share_tied_weights``
stores a matrix that is both looked up and multiplied by once, in int8 with
one scale; ``_check_ops`` refuses a file with a Flex or custom op, or with
fewer fused ops than fused layers.
"""

import numpy as np

from keras_seqmodels.export.litert_runtime import (
    FUSED_LSTM,
    FUSED_RNN,
    drop_unread,
    op_name,
    tensor_values,
    weight_distance,
)

# Operand positions of LiteRT's LSTM kernels (tflite/kernels/lstm_shared.h).
_FORGET_WEIGHTS = 2
_PEEPHOLES = (9, 10, 11)
_STATES = (18, 19)
# and of its RNN kernel (tflite/kernels/unidirectional_sequence_rnn.cc).
_RNN_WEIGHTS = 1
_RNN_STATE = 4


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
