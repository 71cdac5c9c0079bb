"""Rewrites that make a LiteRT file answer as ``model.predict`` in LiteRT's runtime.

**Zero states on every call** (``zero_states_each_call``). LiteRT's
``UNIDIRECTIONAL_SEQUENCE_LSTM`` and ``UNIDIRECTIONAL_SEQUENCE_RNN`` read
their initial state from *variable* tensors and write their final state back
into them, so that a long sequence can be streamed in chunks. A file written
that way is stateful: its second ``invoke`` starts where the first ended and
no longer agrees with ``model.predict`` (measured: max error 3e-8 on the
first call, 0.03 on the second, for a small LSTM), unless every caller knows
to reset the variables first; and with a dynamic batch the state tensors stay
at batch 1 unless the caller resizes them by index. The rewrite fills each
fused op's state tensors with zeros (``FILL``, shaped ``[batch, units]`` from
the op's own input at run time) right before the op runs: the file answers
every call as ``model.predict`` does, at any batch size, through the plain
interpreter API (``resize_tensor_input``, ``allocate_tensors``, ``invoke``).
Quantized states are filled with their zero point.

**Given initial states** (``feed_states``). The converter fuses an LSTM only
with static state shapes; at a dynamic batch ``to_litert`` traces the op from
stored zeros, keeps the layer's ``initial_state`` alive as extra outputs, and
this rewrite puts an ``ADD`` that writes them into the op's state tensors
right before it (such states are then left alone by the zeroing above).

**float32 weights for the fused ops** (``float32_fused_weights``). In a
float16 file the converter feeds the fused LSTM and RNN their weights through
``DEQUANTIZE`` ops; LiteRT's kernels then answer wrongly once the
interpreter is resized (measured: 4e-5 at batch 1, 0.5 at batch 3 and again
at batch 1 after it, on the same interpreter; re-allocating at the same size
is fine). In a file with a dynamic batch, which is resized per request, the
rewrite gives the ops their weights as float32 constants (the float16 values,
widened), so only the other layers' weights stay float16; a file with a
fixed batch keeps them all in float16.
"""

import numpy as np

FUSED_LSTM = "UNIDIRECTIONAL_SEQUENCE_LSTM"
FUSED_RNN = "UNIDIRECTIONAL_SEQUENCE_RNN"
# The state inputs of each op (TFLite's kernels: activation and cell state
# of the LSTM, the hidden state of the RNN).
STATE_INPUTS = {FUSED_LSTM: (18, 19), FUSED_RNN: (4,)}


def zero_states_each_call(content):
    """Fill every fused sequence op's state tensors with zeros before the op runs.

    Args:
        content: the bytes of a ``.tflite`` file.

    Returns:
        The bytes of the rewritten file (``content`` unchanged when it has
        no fused sequence op).
    """
    from tensorflow.lite.python import schema_py_generated as schema
    from tensorflow.lite.tools import flatbuffer_utils

    model = flatbuffer_utils.read_model_from_bytearray(bytearray(content))
    changed = False
    for graph in model.subgraphs:
        operators = []
        for op in graph.operators:
            name = op_name(model, op)
            if name in STATE_INPUTS:
                positions = _own_state_tensors(model, graph, op, STATE_INPUTS[name], schema)
                if positions:
                    operators.extend(_zero_fill(model, graph, op, positions, schema))
                    changed = True
            operators.append(op)
        graph.operators = operators
        drop_unread(model, graph)
    if not changed:
        return content
    return bytes(flatbuffer_utils.convert_object_to_bytearray(model))


def feed_states(content, kernels, prefix, positions, kind):
    """Write given initial states into fused LSTM ops' state tensors.

    The converter fuses an LSTM only with static state shapes; at a dynamic
    batch ``to_litert`` traces the op from stored zeros and keeps the initial
    states ``h0, c0`` alive as extra outputs named ``{prefix}{k}_h`` /
    ``_c``. This rewrite finds, for each ``k``, the fused op whose
    forget-gate input weights are those of ``kernels[k]`` (Keras layout
    ``(in, 4 * units)``), puts an ``ADD(h0, 0)`` (and ``c0``) writing into its
    state tensors right before it, and removes the extra outputs.

    Args:
        content: the bytes of a ``.tflite`` file.
        kernels: the input kernel of each fed layer, in feed order.
        prefix: the extra outputs' name prefix.
        positions: the op's state input positions (``h``, ``c``).
        kind: the fused op's name (``UNIDIRECTIONAL_SEQUENCE_LSTM``).

    Returns:
        The bytes of the rewritten file.
    """
    from tensorflow.lite.python import schema_py_generated as schema
    from tensorflow.lite.tools import flatbuffer_utils

    model = flatbuffer_utils.read_model_from_bytearray(bytearray(content))
    graph = model.subgraphs[0]
    signature = model.signatureDefs[0]
    named = {m.name.decode() if isinstance(m.name, bytes) else m.name: int(m.tensorIndex)
             for m in signature.outputs}  # fmt: skip
    fused = [op for op in graph.operators if op_name(model, op) == kind]
    inserted = {}
    for k, kernel in enumerate(kernels):
        op = min(
            fused,
            key=lambda o, w=kernel: weight_distance(
                tensor_values(model, graph, int(o.inputs[2])), w
            ),
        )
        fused.remove(op)
        zero = _tensor(model, graph, [], schema.TensorType.FLOAT32, schema,
                       np.asarray(0.0, np.float32))  # fmt: skip
        for position, part in zip(positions, ("h", "c")):
            source = named[f"{prefix}{k}_{part}"]
            inserted.setdefault(id(op), []).append(
                _operator(
                    model,
                    schema.BuiltinOperator.ADD,
                    [source, zero],
                    [int(op.inputs[position])],
                    schema,
                    schema.AddOptionsT(),
                    schema.BuiltinOptions.AddOptions,
                )  # fmt: skip
            )
    operators = []
    for op in graph.operators:
        operators.extend(inserted.get(id(op), []))
        operators.append(op)
    graph.operators = operators
    fed = {named[n] for n in named if n.startswith(prefix)}
    graph.outputs = [i for i in graph.outputs if int(i) not in fed]
    signature.outputs = [m for m in signature.outputs if int(m.tensorIndex) not in fed]
    return bytes(flatbuffer_utils.convert_object_to_bytearray(model))


def tensor_values(model, graph, index):
    """A constant tensor's values as float64 (dequantized: a zero point, one
    scale per tensor or per row), following a ``DEQUANTIZE`` back to its
    constant (float16 weights); ``None`` for a tensor computed at run time."""
    from tensorflow.lite.python import schema_py_generated as schema

    tensor = graph.tensors[index]
    data = model.buffers[tensor.buffer].data
    if data is None or not len(data):
        producer = next((o for o in graph.operators if index in list(o.outputs)), None)
        if producer is not None and op_name(model, producer) == "DEQUANTIZE":
            return tensor_values(model, graph, int(producer.inputs[0]))
        return None
    dtypes = {
        schema.TensorType.FLOAT32: np.float32,
        schema.TensorType.FLOAT16: np.float16,
        schema.TensorType.INT8: np.int8,
    }
    if tensor.type not in dtypes:
        return None
    values = np.frombuffer(bytes(data), dtypes[tensor.type]).astype(np.float64)
    values = values.reshape(tensor.shape)
    q = tensor.quantization
    if q is not None and q.scale is not None and len(q.scale):
        scale = np.asarray(q.scale, np.float64)
        zero = np.asarray(q.zeroPoint if q.zeroPoint is not None else [0], np.float64)
        if scale.size > 1 and values.ndim and scale.size == values.shape[0]:  # per row
            shape = (-1,) + (1,) * (values.ndim - 1)
            values = (values - zero.reshape(shape)) * scale.reshape(shape)
        else:
            values = (values - zero[0]) * scale[0]
    return values


def weight_distance(values, kernel, blocks=4):
    """How far an op's weights ``values`` are from the forget-gate block of
    an LSTM ``kernel`` (``blocks=4``) or from a whole Elman ``kernel``
    (``blocks=1``); both are Keras's ``(in, blocks * units)``, the op's
    weights ``(units, in)``. ``inf`` for ``None`` or another shape."""
    if values is None:
        return np.inf
    if blocks == 1:
        weights = kernel.T
    else:
        units = kernel.shape[1] // 4
        weights = kernel[:, units : 2 * units].T
    if weights.shape != values.shape:
        return np.inf
    return float(np.mean(np.abs(values - weights)))


def float32_fused_weights(content):
    """Give each fused LSTM and RNN op of a dynamic batch float32 constant
    weights where a ``DEQUANTIZE`` (float16 storage) feeds them.

    Args:
        content: the bytes of a ``.tflite`` file.

    Returns:
        The bytes of the rewritten file (``content`` unchanged when no fused
        op of a dynamic batch reads its weights from a ``DEQUANTIZE``).
    """
    from tensorflow.lite.python import schema_py_generated as schema
    from tensorflow.lite.tools import flatbuffer_utils

    model = flatbuffer_utils.read_model_from_bytearray(bytearray(content))
    changed = False
    for graph in model.subgraphs:
        producers = {int(i): op for op in graph.operators for i in op.outputs}
        for op in graph.operators:
            name = op_name(model, op)
            if name not in STATE_INPUTS or _fixed_batch(graph, op):
                continue
            for position, index in enumerate(int(i) for i in op.inputs):
                if position in STATE_INPUTS[name]:
                    continue  # a state, zeroed by zero_states_each_call
                producer = producers.get(index)
                if producer is None or op_name(model, producer) != "DEQUANTIZE":
                    continue
                source = graph.tensors[int(producer.inputs[0])]
                data = model.buffers[source.buffer].data
                if source.type != schema.TensorType.FLOAT16 or data is None or not len(data):
                    continue
                values = np.frombuffer(bytes(data), np.float16).astype(np.float32)
                op.inputs[position] = _tensor(
                    model, graph, source.shape, schema.TensorType.FLOAT32, schema,
                    values.reshape(source.shape),
                )  # fmt: skip
                changed = True
        drop_unread(model, graph)
    if not changed:
        return content
    _empty_unused_buffers(model)
    return bytes(flatbuffer_utils.convert_object_to_bytearray(model))


def _empty_unused_buffers(model):
    """Drop the data of constant buffers that no op of any graph reads any
    more (the float16 copies the float32 weights replaced)."""
    used = set()
    for graph in model.subgraphs:
        read = {int(i) for op in graph.operators for i in list(op.inputs) + list(op.outputs)}
        read |= {int(i) for i in graph.inputs} | {int(i) for i in graph.outputs}
        used |= {graph.tensors[i].buffer for i in read if i >= 0}
    for index, buffer in enumerate(model.buffers):
        if index not in used and buffer.data is not None and len(buffer.data):
            buffer.data = None


def _fixed_batch(graph, op):
    """Whether ``op``'s input has a batch size fixed in the file."""
    signature = _signature(graph.tensors[int(op.inputs[0])])
    axis = 1 if bool(getattr(op.builtinOptions, "timeMajor", False)) else 0
    return signature is not None and int(signature[axis]) > 0


def _signature(tensor):
    """A tensor's shape with -1 for sizes set at run time; ``None`` where the
    file does not record it (e.g. after a ``TRANSPOSE``)."""
    signature = tensor.shapeSignature if tensor.shapeSignature is not None else tensor.shape
    if signature is None or len(signature) != 3:  # the sequence ops take rank 3
        return None
    return signature


def stateful_ops(content):
    """The fused sequence ops of a file whose state carries over between calls
    (neither the caller nor an earlier op, such as a ``FILL``, writes their
    state before them), as ``[op name, ...]``.

    Example: a file written by ``to_litert`` has none.
    """
    from tensorflow.lite.tools import flatbuffer_utils

    model = flatbuffer_utils.read_model_from_bytearray(bytearray(content))
    found = []
    for graph in model.subgraphs:
        written = {int(i) for i in graph.inputs}  # set by the caller at every call
        for op in graph.operators:
            name = op_name(model, op)
            if name in STATE_INPUTS:
                if not all(int(op.inputs[p]) in written for p in STATE_INPUTS[name]):
                    found.append(name)
            written.update(int(i) for i in op.outputs)  # FILL, or a computed state
    return found


def _own_state_tensors(model, graph, op, positions, schema):
    """The state positions of ``op`` to zero before each call: those that
    start from the converter's stored zeros. A state that is a graph input or
    computed by the model (an LSTM called with ``initial_state``) is written
    by the caller or by its op at every call and is left alone. Where the
    zeros come through a ``DEQUANTIZE`` (float16 files), ``op`` gets a float32
    variable state tensor of its own."""
    inputs = {int(i) for i in graph.inputs}
    zeroed = []
    for position in positions:
        index = int(op.inputs[position])
        if index in inputs:
            continue
        producer = next((o for o in graph.operators if index in list(o.outputs)), None)
        if producer is None:
            zeroed.append(position)
            continue
        source = graph.tensors[int(producer.inputs[0])] if len(producer.inputs) else None
        data = None if source is None else model.buffers[source.buffer].data
        stored = data is not None and len(data) > 0
        if op_name(model, producer) != "DEQUANTIZE" or not stored:
            continue  # computed by the model
        zeroed.append(position)
        old = graph.tensors[index]
        tensor = schema.TensorT()
        tensor.shape = list(old.shape)
        tensor.shapeSignature = None if old.shapeSignature is None else list(old.shapeSignature)
        tensor.name = f"{(old.name or b'state').decode()}_zeroed".encode()
        tensor.type = schema.TensorType.FLOAT32
        tensor.isVariable = True
        tensor.buffer = 0
        graph.tensors.append(tensor)
        op.inputs[position] = len(graph.tensors) - 1
    return tuple(zeroed)


def drop_unread(model, graph, kinds=("DEQUANTIZE",)):
    """Remove the ops of ``kinds`` whose outputs nothing reads (nor the graph
    returns), until none is left."""
    outputs = {int(i) for i in graph.outputs}
    while True:
        read = {int(i) for o in graph.operators for i in o.inputs} | outputs
        dead = [
            o
            for o in graph.operators
            if op_name(model, o) in kinds and not any(int(i) in read for i in o.outputs)
        ]
        if not dead:
            return
        for o in dead:
            graph.operators.remove(o)


def op_name(model, op):
    """The name of a flatbuffer operator: its builtin name (``"FILL"``), or its
    custom code for a custom op."""
    from tensorflow.lite.python import schema_py_generated as schema

    code = model.operatorCodes[op.opcodeIndex]
    builtin = max(code.builtinCode, code.deprecatedBuiltinCode)
    if builtin == schema.BuiltinOperator.CUSTOM:
        return (code.customCode or b"CUSTOM").decode()
    names = {v: k for k, v in vars(schema.BuiltinOperator).items() if not k.startswith("_")}
    return names.get(builtin, "CUSTOM")


def _opcode(model, builtin, schema):
    for index, code in enumerate(model.operatorCodes):
        if max(code.builtinCode, code.deprecatedBuiltinCode) == builtin:
            return index
    code = schema.OperatorCodeT()
    code.builtinCode = builtin
    code.deprecatedBuiltinCode = min(builtin, 127)
    code.version = 1
    model.operatorCodes.append(code)
    return len(model.operatorCodes) - 1


def _tensor(model, graph, shape, dtype, schema, values=None, like=None):
    tensor = schema.TensorT()
    tensor.shape = list(shape)
    tensor.type = dtype
    tensor.name = f"litert_runtime_{len(graph.tensors)}".encode()
    if like is not None and like.quantization is not None:
        quantization = schema.QuantizationParametersT()
        quantization.scale = (
            None if like.quantization.scale is None else list(like.quantization.scale)
        )
        quantization.zeroPoint = (
            None if like.quantization.zeroPoint is None else list(like.quantization.zeroPoint)
        )
        tensor.quantization = quantization
    if values is None:
        tensor.buffer = 0
    else:
        buffer = schema.BufferT()
        buffer.data = np.frombuffer(np.ascontiguousarray(values).tobytes(), np.uint8)
        model.buffers.append(buffer)
        tensor.buffer = len(model.buffers) - 1
    graph.tensors.append(tensor)
    return len(graph.tensors) - 1


def _operator(model, builtin, inputs, outputs, schema, options=None, options_type=None):
    op = schema.OperatorT()
    op.opcodeIndex = _opcode(model, builtin, schema)
    op.inputs = list(inputs)
    op.outputs = list(outputs)
    if options is not None:
        op.builtinOptionsType = options_type
        op.builtinOptions = options
    return op


_NUMPY = {
    "FLOAT32": np.float32,
    "FLOAT16": np.float16,
    "INT8": np.int8,
    "INT16": np.int16,
    "UINT8": np.uint8,
}


def _zero_fill(model, graph, op, positions, schema):
    """The ops that fill ``op``'s state inputs with zeros: ``FILL`` on a
    ``[batch, units]`` shape, constant when the batch is fixed, else taken
    from the op's input at run time."""
    ops = schema.BuiltinOperator
    int32 = schema.TensorType.INT32
    source = graph.tensors[int(op.inputs[0])]
    time_major = bool(getattr(op.builtinOptions, "timeMajor", False))
    axis = 1 if time_major else 0
    signature = _signature(source)
    units = [int(graph.tensors[int(op.inputs[p])].shape[-1]) for p in positions]
    dims_of = {}
    added = []
    for position, width in zip(positions, units):
        if width not in dims_of:
            if signature is not None and int(signature[axis]) > 0:  # fixed: a constant
                shape = np.asarray([int(source.shape[axis]), width], np.int32)
                dims_of[width] = _tensor(model, graph, [2], int32, schema, shape)
            else:
                dims_of[width] = _runtime_dims(model, graph, op, axis, width, added, schema)
        state = graph.tensors[int(op.inputs[position])]
        names = {v: k for k, v in vars(schema.TensorType).items() if not k.startswith("_")}
        dtype = _NUMPY[names[state.type]]
        zero_point = 0
        q = state.quantization
        if q is not None and q.zeroPoint is not None and len(q.zeroPoint):
            zero_point = int(q.zeroPoint[0])
        value = _tensor(
            model, graph, [], state.type, schema, np.asarray(zero_point, dtype), like=state
        )
        added.append(
            _operator(
                model,
                ops.FILL,
                [dims_of[width], value],
                [int(op.inputs[position])],
                schema,
                schema.FillOptionsT(),
                schema.BuiltinOptions.FillOptions,
            )  # fmt: skip
        )
    return added


def _runtime_dims(model, graph, op, axis, width, added, schema):
    """``[batch, width]`` as an int32 tensor computed from the op's input."""
    ops = schema.BuiltinOperator
    int32 = schema.TensorType.INT32
    source = int(op.inputs[0])
    shape = _tensor(model, graph, [3], int32, schema)  # the sequence ops take rank 3
    options = schema.ShapeOptionsT()
    options.outType = int32
    added.append(
        _operator(
            model, ops.SHAPE, [source], [shape], schema, options, schema.BuiltinOptions.ShapeOptions
        )  # fmt: skip
    )
    batch = _tensor(model, graph, [1], int32, schema)
    begin = _tensor(model, graph, [1], int32, schema, np.asarray([axis], np.int32))
    size = _tensor(model, graph, [1], int32, schema, np.asarray([1], np.int32))
    added.append(
        _operator(
            model,
            ops.SLICE,
            [shape, begin, size],
            [batch],
            schema,
            schema.SliceOptionsT(),
            schema.BuiltinOptions.SliceOptions,
        )  # fmt: skip
    )
    dims = _tensor(model, graph, [2], int32, schema)
    units = _tensor(model, graph, [1], int32, schema, np.asarray([width], np.int32))
    concat = schema.ConcatenationOptionsT()
    concat.axis = 0
    added.append(
        _operator(
            model,
            ops.CONCATENATION,
            [batch, units],
            [dims],
            schema,
            concat,
            schema.BuiltinOptions.ConcatenationOptions,
        )  # fmt: skip
    )
    return dims
