"""The ``keras.ops`` operations of a functional graph, as ONNX ops.

A functional model records, between its layers, the operations that compute
their masks (from ``Embedding(mask_zero=True)``, ``Masking`` and the merge
layers). ``_convert_op`` writes those as ONNX ops: comparisons, ``Any`` and
``All``, the logical ops, ``ExpandDims``, ``ZerosLike`` and ``OnesLike``,
``Concatenate`` and a cast to bool. Any other operation raises a
``ValueError`` naming it.
"""

from keras_seqmodels.export.onnx_graph import OTHER_FORMATS, _as_bool, _concat_shape, _Tensor


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
        out = g.op("Concat", names, hint, axis=axis)
        return _Tensor(out, _concat_shape(parts, axis), dtype=dtype)
    if kind == "Cast" and str(op.dtype) == "bool":
        return _Tensor(_as_bool(g, x), x.shape, dtype="bool")
    raise ValueError(
        f"to_onnx: operation {kind} '{op.name}' of the model's graph cannot be written as "
        f"ONNX (only the mask operations of Embedding, Masking and merge layers are); "
        f"{OTHER_FORMATS}"
    )
