"""ONNX form of the ``keras_seqmodels.linear_rnn`` layers (``to_onnx``).

``MinGRU``, ``MinLSTM`` and ``RGLRU`` are written as their equations: the
input projection of every step at once (``MatMul``, ``Add``, ``Split``), the
coefficients ``a`` and ``b`` of ``h(t) = a(t) h(t-1) + b(t)`` elementwise
(``Sigmoid``, ``Softplus``, ``Where`` for the positive ``g``; RGLRU's
``Exp``, ``Sqrt``), and the
recurrence one ONNX ``Scan`` node over time whose body is ``Mul`` and
``Add``. A Keras mask sets ``a = 1, b = 0`` on masked steps (``Where``), as
the layer does, so the state is kept there and the outputs zeroed;
``go_backwards`` reverses the time axis first (``Slice`` with step -1);
``initial_state`` (model inputs) and ``return_state`` are carried. The
other layers (``LRU``, ``HawkBlock``, ``SelectiveSSM``) have no
ONNX form yet: ``to_onnx`` refuses them naming the layer.
"""

import numpy as np

from keras_seqmodels.export.onnx_graph import _numpy, _Tensor, _unsupported

MAPPED = ("MinGRU", "MinLSTM", "RGLRU")
_NOT_YET = "its ONNX form is not written yet (MinGRU, MinLSTM and RGLRU have one)"


def _is_linear(layer):
    from keras_seqmodels.linear_rnn import LinearRecurrent

    return isinstance(layer, LinearRecurrent)


def _scan_body(units):
    """The ``Scan`` body: state ``h`` (batch, units), scan inputs ``a_t`` and
    ``b_t`` (batch, units) -> ``h = a_t * h + b_t``, also as the step's output."""
    from onnx import TensorProto, helper

    def info(name):
        return helper.make_tensor_value_info(name, TensorProto.FLOAT, ["batch", units])

    nodes = [
        helper.make_node("Mul", ["a_t", "h_in"], ["ah"], name="scan/Mul"),
        helper.make_node("Add", ["ah", "b_t"], ["h_out"], name="scan/Add"),
        helper.make_node("Identity", ["h_out"], ["y_t"], name="scan/Identity"),
    ]
    return helper.make_graph(
        nodes, "linear_scan", [info("h_in"), info("a_t"), info("b_t")],
        [info("h_out"), info("y_t")],
    )  # fmt: skip


def _candidate(g, k, activation, hint):
    if activation == "linear":
        return k
    # g(v) = v + 0.5 for v >= 0, sigmoid(v) below.
    positive = g.op("GreaterOrEqual", [k, g.const(0.0, "zero_f")], hint)
    shifted = g.op("Add", [k, g.const(0.5, "half_f")], hint)
    return g.op("Where", [positive, shifted, g.op("Sigmoid", [k], hint)], hint)


def _rglru_coefficients(g, layer, x):
    """``a`` and ``b`` (batch, time, units) of RGLRU: ``log a = -c
    sigmoid(gate_a) softplus(a_param)``, ``b = sqrt(1 - a^2) sigmoid(gate_x) x``."""
    hint = layer.name

    def affine(gate):
        kernel = g.weight(getattr(layer, f"{gate}_kernel"), f"{hint}/{gate}_kernel")
        bias = g.weight(getattr(layer, f"{gate}_bias"), f"{hint}/{gate}_bias")
        return g.op("Add", [g.op("MatMul", [x, kernel], hint), bias], hint)

    a_param = _numpy(layer.a_param).astype("float64")
    rate = (-layer.c * np.logaddexp(0.0, a_param)).astype("float32")  # -c softplus(a_param)
    log_a = g.op("Mul", [g.op("Sigmoid", [affine("gate_a")], hint), g.const(rate, hint)], hint)
    a = g.op("Exp", [log_a], hint)
    a2 = g.op("Exp", [g.op("Add", [log_a, log_a], hint)], hint)
    multiplier = g.op("Sqrt", [g.op("Sub", [g.const(1.0, "one_f"), a2], hint)], hint)
    gated = g.op("Mul", [g.op("Sigmoid", [affine("gate_x")], hint), x], hint)
    return a, g.op("Mul", [multiplier, gated], hint)


def _coefficients(g, layer, x):
    """``a`` and ``b`` (batch, time, units) of MinGRU / MinLSTM / RGLRU."""
    if type(layer).__name__ == "RGLRU":
        return _rglru_coefficients(g, layer, x)
    hint = layer.name
    k = g.op("MatMul", [x, g.weight(layer.kernel, f"{hint}/kernel")], hint)
    if layer.use_bias:
        k = g.op("Add", [k, g.weight(layer.bias, f"{hint}/bias")], hint)
    n = layer.n_parts
    parts = g.op("Split", [k, g.ints([layer.units] * n, "split")], hint, outputs=n, axis=-1)
    if type(layer).__name__ == "MinGRU":
        k_z, k_h = parts
        a = g.op("Sigmoid", [g.op("Neg", [k_z], hint)], hint)
        gate = g.op("Sigmoid", [k_z], hint)
    else:  # MinLSTM: d = softplus(-k_f) - softplus(-k_i), a = sigmoid(-d), b = sigmoid(d) h~
        k_f, k_i, k_h = parts
        soft_f = g.op("Softplus", [g.op("Neg", [k_f], hint)], hint)
        soft_i = g.op("Softplus", [g.op("Neg", [k_i], hint)], hint)
        d = g.op("Sub", [soft_f, soft_i], hint)
        a = g.op("Sigmoid", [g.op("Neg", [d], hint)], hint)
        gate = g.op("Sigmoid", [d], hint)
    b = g.op("Mul", [gate, _candidate(g, k_h, layer.activation, hint)], hint)
    return a, b


def _reverse_time(g, name, hint):
    big = np.iinfo(np.int64).max
    return g.op(
        "Slice",
        [name, g.ints([-1], "rev_start"), g.ints([-big], "rev_end"), g.ints([1], "axis_time"),
         g.ints([-1], "rev_step")],
        hint,
    )  # fmt: skip


def _convert_linear(g, layer, x, states, masked):
    """``layer`` (a ``linear_rnn`` layer) on ``x``: its outputs as
    ``_Tensor`` s, in Keras's output structure."""
    kind = type(layer).__name__
    if kind not in MAPPED:
        raise _unsupported(layer, _NOT_YET)
    if layer.stateful:
        why = "stateful=True carries states between calls, which an ONNX graph does not"
        raise _unsupported(layer, f"{why}; pass the states as initial_state inputs")
    hint = layer.name
    units = layer.units
    mask = x.mask_name if masked else None
    seq = x.name if x.dtype == "float32" else g.op("Cast", [x.name], hint, to=1)
    if layer.go_backwards:
        seq = _reverse_time(g, seq, hint)
        if mask is not None:
            mask = _reverse_time(g, mask, hint)
    a, b = _coefficients(g, layer, seq)
    if mask is not None:
        keep = g.op("Unsqueeze", [mask, g.ints([-1], "axes_last")], hint)
        a = g.op("Where", [keep, a, g.const(1.0, "one_f")], hint)
        b = g.op("Where", [keep, b, g.const(0.0, "zero_f")], hint)
    if states:
        if len(states) != 1:
            raise _unsupported(layer, f"`initial_state` must be one tensor [h]; got {len(states)}")
        h0 = states[0].name
    else:  # zeros (batch, units), sized by the batch of the graph
        first = g.op("Gather", [a, g.ints(0, "zero_i")], hint, axis=1)
        h0 = g.op("Mul", [first, g.const(0.0, "zero_f")], hint)
    final, hs = g.op(
        "Scan", [h0, a, b], hint, outputs=2, body=_scan_body(units), num_scan_inputs=2,
        scan_input_axes=[1, 1], scan_output_axes=[1],
    )  # fmt: skip
    batch, time = x.shape[0], x.shape[1]
    if layer.return_sequences:
        out = hs
        if mask is not None:
            out = g.op("Where", [keep, hs, g.const(0.0, "zero_f")], hint)
        output = _Tensor(out, (batch, time, units), x.mask if masked else None)
    else:
        out = final  # the state after the last unmasked step: that step's output
        if mask is not None:  # zeros for a row without unmasked steps
            steps = g.op("Cast", [mask], hint, to=1)
            any_step = g.op("ReduceSum", [steps, g.ints([1], "axes_time")], hint, keepdims=1)
            has = g.op("Greater", [any_step, g.const(0.0, "zero_f")], hint)
            out = g.op("Where", [has, final, g.const(0.0, "zero_f")], hint)
        output = _Tensor(out, (batch, units))
    if not layer.return_state:
        return output
    return [output, _Tensor(final, (batch, units))]
