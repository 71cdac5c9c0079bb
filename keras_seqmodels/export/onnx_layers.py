"""The layers around the recurrent ones, as ONNX ops.

``Embedding`` and ``ReversibleEmbedding`` (``Gather``, or a ``MatMul`` by the
transposed matrix for the reverse call), ``Dense``, ``Masking``, the merge
layers (``Concatenate``, ``Add``, ``Subtract``, ``Multiply``, ``Average``,
``Maximum``, ``Minimum``), ``Reshape``, ``Flatten``,
``LayerNormalization`` (last axis) and ``GlobalAveragePooling1D``; and this package's
``FourDirectional2D`` and ``CharacterEncoder``, built on bidirectional
recurrent nodes. Each converter takes the graph, the layer and its input
``_Tensor`` (s) and returns the output ``_Tensor``, with the ``_Mask`` of
its mask where Keras gives it one.
"""

import numpy as np

from keras_seqmodels.export.onnx_activations import _apply_activation
from keras_seqmodels.export.onnx_graph import _concat_shape, _Mask, _Tensor, _unsupported
from keras_seqmodels.export.onnx_recurrent import (
    _convert_bidirectional,
    _direction_state,
    _recurrent_node,
)
from keras_seqmodels.export.onnx_steps import _Steps


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
    mask = x.mask
    if layer.mask_zero:
        if len(x.shape) != 2:
            raise _unsupported(layer, "mask_zero needs ids of shape (batch, time)")

        def nonzero():
            ids = g.op("Cast", [x.name], hint, to=7)
            return g.op("Not", [g.op("Equal", [ids, g.ints(0, "zero")], hint)], hint)

        mask = _Mask(nonzero)
    return _Tensor(out, x.shape + (layer.output_dim,), mask)


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

    def mask():
        return g.op("Squeeze", [keep, g.ints([-1], "axes_last")], hint)

    return _Tensor(out, x.shape, _Mask(mask))


def _merged_mask(g, tensors, hint):
    # Keras merges masks with a logical or when every input has one: an
    # unmasked input makes the result unmasked (Concatenate gives it an
    # all-true mask, the other merges return no mask).
    masks = [t.mask_name for t in tensors]
    out = masks[0]
    for m in masks[1:]:
        out = g.op("Or", [out, m], f"{hint}/mask")
    return out


def _convert_merge(g, layer, inputs):
    import keras

    hint = layer.name
    names = [t.name for t in inputs]
    concatenate = isinstance(layer, keras.layers.Concatenate)
    masked = any(t.mask is not None for t in inputs)
    every = all(t.mask is not None for t in inputs)
    mask = _Mask(lambda: _merged_mask(g, inputs, hint)) if every else None
    shape = inputs[0].shape
    if concatenate:
        axis = layer.axis if layer.axis >= 0 else len(shape) + layer.axis
        if masked and axis != len(shape) - 1:
            raise _unsupported(layer, "masked inputs concatenated along a non-feature axis")
        out = g.op("Concat", names, hint, axis=axis)
        return _Tensor(out, _concat_shape(inputs, axis), mask)
    if isinstance(layer, keras.layers.Subtract):
        return _Tensor(g.op("Sub", names, hint), shape, mask)
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
    return _Tensor(out, shape, mask)


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
    steps = _Steps(g, chars, hint)
    _, y_h, _ = _recurrent_node(
        g, layer, [layer.forward, layer.backward], steps.time_major, steps, None, "bidirectional"
    )
    # Keras's LSTMs without return_sequences: the output at the last
    # unmasked step read, in each direction (zeros for a word without one).
    fw, bw = (_direction_state(g, y_h, k, hint, "dir") for k in range(2))
    both = g.op("Concat", [steps.last(fw), steps.last(bw, reverse=True)], hint, axis=-1)
    out = _reshape(g, both, [_shape_of(g, x.name, 0, 2, hint), g.ints([2 * layer.units])], hint)
    return _Tensor(out, x.shape[:2] + (2 * layer.units,))


def _mean_last(g, x, hint):
    """``ReduceMean`` over the last axis, kept (axes an input from opset 18)."""
    if g.opset >= 18:
        return g.op("ReduceMean", [x, g.ints([-1], "axes_last")], hint, keepdims=1)
    return g.op("ReduceMean", [x], hint, axes=[-1], keepdims=1)


def _convert_layer_normalization(g, layer, x):
    """``(x - mean) / sqrt(var + epsilon) * gamma + beta`` over the last axis."""
    axis = layer.axis if isinstance(layer.axis, int) else list(layer.axis)
    last = (-1, len(x.shape) - 1)
    if getattr(layer, "rms_scaling", False) or not (
        axis in last or (isinstance(axis, list) and len(axis) == 1 and axis[0] in last)
    ):  # fmt: skip
        raise _unsupported(layer, "only a LayerNormalization over the last axis, without "
                           "rms_scaling, is mapped")  # fmt: skip
    hint = layer.name
    centered = g.op("Sub", [x.name, _mean_last(g, x.name, hint)], hint)
    var = _mean_last(g, g.op("Mul", [centered, centered], hint), hint)
    std = g.op("Sqrt", [g.op("Add", [var, g.const(layer.epsilon, f"{hint}/epsilon")], hint)], hint)
    out = g.op("Div", [centered, std], hint)
    if layer.scale:
        out = g.op("Mul", [out, g.weight(layer.gamma, f"{hint}/gamma")], hint)
    if layer.center:
        out = g.op("Add", [out, g.weight(layer.beta, f"{hint}/beta")], hint)
    return _Tensor(out, x.shape, x.mask)


def _convert_global_average_pooling_1d(g, layer, x):
    """The mean over time (over the unmasked steps where ``x`` has a mask)."""
    if layer.data_format != "channels_last":
        raise _unsupported(layer, "only data_format='channels_last' is mapped")
    hint = layer.name
    keepdims = int(bool(layer.keepdims))
    shape = (x.shape[0], 1, x.shape[2]) if keepdims else (x.shape[0], x.shape[2])
    if x.mask is None:
        if g.opset >= 18:
            out = g.op("ReduceMean", [x.name, g.ints([1], "axes_time")], hint, keepdims=keepdims)
        else:
            out = g.op("ReduceMean", [x.name], hint, axes=[1], keepdims=keepdims)
        return _Tensor(out, shape)
    time = g.ints([1], "axes_time")
    steps = g.op("Unsqueeze", [g.op("Cast", [x.mask_name], hint, to=1), g.ints([-1], "axes_last")],
                 hint)  # fmt: skip
    total = g.op("ReduceSum", [g.op("Mul", [x.name, steps], hint), time], hint, keepdims=keepdims)
    count = g.op("ReduceSum", [steps, time], hint, keepdims=keepdims)
    return _Tensor(g.op("Div", [total, count], hint), shape)
