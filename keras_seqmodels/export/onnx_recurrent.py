"""Recurrent layers as native ONNX ``LSTM``, ``GRU`` and ``RNN`` nodes.

- ``_cell_weights`` lays out one cell's Keras weights as the node's ``W``,
  ``R``, ``B`` and ``P`` (gate blocks reordered, the GRU's reset-after
  biases split) with its activations;
- ``_recurrent_node`` writes one node for one or two directions, with the
  initial states, over an input prepared by ``onnx_steps._Steps`` (each
  row's unmasked steps first, and their number as ``sequence_lens``);
- ``_convert_recurrent`` (``Recurrent`` and Keras's RNN layers, stacked
  cells one node each) and ``_convert_bidirectional`` (one bidirectional
  node and its merge mode) turn the node's ``Y``, ``Y_h``, ``Y_c`` back
  into Keras's outputs, at Keras's steps (``_Steps.sequence``, ``last``,
  ``state``): exact for every mask, also left padding and holes.
"""

import numpy as np

from keras_seqmodels.export.onnx_activations import _rnn_activation
from keras_seqmodels.export.onnx_graph import _numpy, _Tensor, _unsupported
from keras_seqmodels.export.onnx_steps import _Steps

# The ONNX node of each cell form (``keras_seqmodels.cells.forms``).
_NODES = {"lstm": "LSTM", "gru": "GRU", "gru_after": "GRU", "elman": "RNN"}


def _cell_kind(cell):
    """The ONNX node ("LSTM", "GRU", "RNN") of a cell, or None: from the form
    its own class declares (a subclass may change the step), or Keras's."""
    from keras_seqmodels.cells.forms import cell_form

    return _NODES.get(cell_form(cell))


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


def _recurrent_node(g, layer, runners, inputs, steps, states, direction):
    """One ONNX LSTM/GRU/RNN node over the time-major ``inputs`` (of
    ``steps``: its unmasked steps first) for one or two runners (forward,
    backward). Returns ``(Y, Y_h, Y_c)`` ONNX names (Y_c None but for LSTM),
    with the padding row and step of ``steps``."""
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
    inits = ["", ""]
    if states:
        # Keras order: each direction's [h, c]; ONNX: initial_h, initial_c,
        # each (num_directions, batch, units).
        n = _state_count(kind)
        per_dir = [states[i * n : (i + 1) * n] for i in range(len(runners))]
        for k in range(n):
            parts = [steps.initial(d[k].name) for d in per_dir]
            inits[k] = parts[0] if len(parts) == 1 else g.op("Concat", parts, hint, axis=0)
    inputs = [inputs, w, r, b, steps.node_lens, inits[0]]
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


def _state_output(g, value, hint):
    """(batch, units) of a one-direction state (1, batch, units)."""
    return g.op("Squeeze", [value, g.ints([0], "axes0")], hint)


def _direction_state(g, value, index, hint, tag):
    """(batch, units) of direction ``index`` of a state (2, batch, units)."""
    return _state_output(g, _direction_slice(g, value, 0, index, f"{hint}/{tag}{index}"), hint)


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


def _last_step_only(layer):
    """Keras's RNN layers with ``zero_output_for_mask=True`` return their
    output at the last step read, zeros if it is masked."""
    import keras

    return isinstance(layer, keras.layers.RNN) and bool(layer.zero_output_for_mask)


def _unmasked(x, masked):
    """``x`` as the layer reads it: without its mask where Keras passed none
    (the outputs keep it, as Keras's do)."""
    return x if masked else _Tensor(x.name, x.shape, None, x.dtype)


def _convert_recurrent(g, layer, x, states, masked=True):
    """``Recurrent`` or a Keras RNN layer: returns Keras's outputs. Stacked
    cells (``StackedCells``, a list of cells) become one node per cell, each
    reading the whole output sequence of the one below: the same numbers as
    stacking them within each step, in either direction. ``masked``: whether
    the layer reads ``x``'s mask."""
    from types import SimpleNamespace

    from keras_seqmodels.cells import StackedCells

    cells = list(layer.cell.cells) if isinstance(layer.cell, StackedCells) else [layer.cell]
    runners = [SimpleNamespace(cell=c, stateful=getattr(layer, "stateful", False)) for c in cells]
    for runner in runners:
        _check_runner(layer, runner)
    batch, hint = x.shape[0], layer.name
    backwards = bool(layer.go_backwards)
    direction = "reverse" if backwards else "forward"
    steps = _Steps(g, _unmasked(x, masked), hint)
    states = list(states or [])
    finals, seq = [], steps.time_major
    for k, runner in enumerate(runners):
        n = _state_count(_cell_kind(runner.cell))
        mine, states = states[:n], states[n:]
        y, y_h, y_c = _recurrent_node(g, layer, [runner], seq, steps, mine, direction)
        units = runner.cell.units
        finals += [
            (v, units, mine[j].name if mine else None)
            for j, v in enumerate((y_h, y_c))
            if v is not None
        ]
        if k + 1 < len(runners):
            # ONNX's Y is in time order in both directions, zeros after each
            # row's unmasked steps: the next node's input as it is.
            seq = g.op("Squeeze", [y, g.ints([1], "axes1")], hint)

    if layer.return_sequences:
        zero = bool(getattr(layer, "zero_output_for_mask", False))
        out = steps.sequence(_sequence_output(g, y, f"{hint}/sequences"), backwards, zero)
        if backwards:
            out = _reverse_time(g, out, hint)
        output = _Tensor(out, (batch, x.shape[1], units), x.mask)
    else:
        last = _state_output(g, y_h, f"{hint}/state")
        output = _Tensor(steps.last(last, backwards, _last_step_only(layer)), (batch, units))
    if not layer.return_state:
        return output
    final_states = [
        _Tensor(steps.state(_state_output(g, v, f"{hint}/state"), start), (batch, n))
        for v, n, start in finals
    ]
    return [output] + final_states


def _merge(g, mode, a, b, hint):
    if mode == "concat":
        return g.op("Concat", [a, b], hint, axis=-1)
    if mode == "sum":
        return g.op("Add", [a, b], hint)
    if mode == "mean":
        return g.op("Mul", [g.op("Add", [a, b], hint), g.const(0.5, "half")], hint)
    return g.op("Mul", [a, b], hint)


def _convert_bidirectional(g, layer, x, states, masked=True):
    """This package's ``Bidirectional`` or Keras's: one bidirectional node.

    ONNX's reverse direction reads each row's unmasked steps (moved to its
    front by ``_Steps``) last first, as both wrappers do; with
    ``return_sequences`` both wrappers output zeros at masked steps, without
    it each direction's output at the last unmasked step it read."""
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
    hint = layer.name
    steps = _Steps(g, _unmasked(x, masked), hint)
    states = list(states or [])
    y, y_h, y_c = _recurrent_node(
        g, layer, [fw, bw], steps.time_major, steps, states, "bidirectional"
    )
    batch, units = x.shape[0], fw.cell.units
    parts = []
    for k in range(2):
        if layer.return_sequences:
            part = _direction_slice(g, y, 1, k, f"{hint}/dir{k}")
            part = steps.sequence(_sequence_output(g, part, f"{hint}/sequences{k}"), k == 1)
            parts.append(_Tensor(part, (batch, x.shape[1], units), x.mask))
        else:
            last = steps.last(_direction_state(g, y_h, k, hint, "dir"), k == 1)
            parts.append(_Tensor(last, (batch, units)))
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
    n = len(states) // 2
    fw_states, bw_states = [], []
    for k, target in enumerate((fw_states, bw_states)):
        for j, value in enumerate(v for v in (y_h, y_c) if v is not None):
            start = states[k * n + j].name if states else None
            final = steps.state(_direction_state(g, value, k, hint, "state"), start)
            target.append(_Tensor(final, (batch, units)))
    return outputs + fw_states + bw_states
