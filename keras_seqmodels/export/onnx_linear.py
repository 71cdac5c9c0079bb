"""ONNX form of the ``keras_seqmodels.linear_rnn`` layers (``to_onnx``).

Every layer of ``keras_seqmodels.linear_rnn`` is written as its equations:
the input projections of every step at once (``MatMul``, ``Add``,
``Split``), the coefficients ``a`` and ``b`` of ``h(t) = a(t) h(t-1) +
b(t)`` elementwise (``Sigmoid``, ``Softplus``, ``Where`` for the positive
``g``; RGLRU's ``Exp``, ``Sqrt``; LRU's complex ``lambda`` a constant, its
state two real ones; SelectiveSSM's ``(channels, state)`` state;
HawkBlock's GELU gate and causal convolution as shifted ``Slice`` s), and
the recurrence one ONNX ``Scan`` node over time whose body is ``Mul`` and
``Add``. A Keras mask sets ``a = 1, b = 0`` on masked steps (``Where``), as
the layer does, so the state is kept there and the outputs zeroed;
``go_backwards`` reverses the time axis first (``Slice`` with step -1);
``initial_state`` (model inputs) and ``return_state`` are carried. A masked
``HawkBlock``'s convolution skips the masked steps, as the layer's does
(``TopK`` as an argsort, ``GatherElements``). The package's
``Bidirectional`` and Keras's over these layers become two such graphs,
the backward one reading each row's real steps last first
(``_convert_linear_bidirectional``). Refused, naming the layer:
``stateful=True``.
"""

import numpy as np

from keras_seqmodels.export.onnx_graph import _numpy, _Tensor, _unsupported

MAPPED = ("MinGRU", "MinLSTM", "RGLRU", "LRU", "SelectiveSSM", "HawkBlock")
_NOT_YET = "its ONNX form is not written yet"


def _is_linear(layer):
    from keras_seqmodels.linear_rnn import LinearRecurrent

    return isinstance(layer, LinearRecurrent)


def _scan_body(shape, complex_state=False):
    """The ``Scan`` body: states ``h`` (batch, *shape), scan inputs ``a_t`` and
    ``b_t`` -> ``h = a_t * h + b_t``, also as the step's outputs. Complex
    (LRU): ``h``, ``a_t``, ``b_t`` as real and imaginary parts."""
    from onnx import TensorProto, helper

    def info(name):
        return helper.make_tensor_value_info(name, TensorProto.FLOAT, ["batch", *shape])

    def node(op, inputs, output):
        return helper.make_node(op, inputs, [output], name=f"scan/{output}")

    if not complex_state:
        nodes = [
            node("Mul", ["a_t", "h_in"], "ah"),
            node("Add", ["ah", "b_t"], "h_out"),
            node("Identity", ["h_out"], "y_t"),
        ]
        return helper.make_graph(
            nodes, "linear_scan", [info("h_in"), info("a_t"), info("b_t")],
            [info("h_out"), info("y_t")],
        )  # fmt: skip
    nodes = [  # (a_re + i a_im)(h_re + i h_im) + b
        node("Mul", ["a_re", "h_re"], "rr"),
        node("Mul", ["a_im", "h_im"], "ii"),
        node("Mul", ["a_re", "h_im"], "ri"),
        node("Mul", ["a_im", "h_re"], "ir"),
        node("Sub", ["rr", "ii"], "re"),
        node("Add", ["ri", "ir"], "im"),
        node("Add", ["re", "b_re"], "h_re_out"),
        node("Add", ["im", "b_im"], "h_im_out"),
        node("Identity", ["h_re_out"], "y_re"),
        node("Identity", ["h_im_out"], "y_im"),
    ]
    inputs = ["h_re", "h_im", "a_re", "a_im", "b_re", "b_im"]
    outputs = ["h_re_out", "h_im_out", "y_re", "y_im"]
    return helper.make_graph(
        nodes, "complex_linear_scan", [info(n) for n in inputs], [info(n) for n in outputs]
    )


def _candidate(g, k, activation, hint):
    if activation == "linear":
        return k
    # g(v) = v + 0.5 for v >= 0, sigmoid(v) below.
    positive = g.op("GreaterOrEqual", [k, g.const(0.0, "zero_f")], hint)
    shifted = g.op("Add", [k, g.const(0.5, "half_f")], hint)
    return g.op("Where", [positive, shifted, g.op("Sigmoid", [k], hint)], hint)


def _affine(g, layer, x, name):
    kernel = g.weight(getattr(layer, f"{name}_kernel"), f"{layer.name}/{name}_kernel")
    bias = g.weight(getattr(layer, f"{name}_bias"), f"{layer.name}/{name}_bias")
    return g.op("Add", [g.op("MatMul", [x, kernel], layer.name), bias], layer.name)


def _gelu_tanh(g, x, hint):
    """``0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3)))`` (Keras's
    ``gelu(approximate=True)``; ONNX's ``Gelu`` needs opset 20)."""
    cube = g.op("Mul", [g.op("Mul", [x, x], hint), x], hint)
    inner = g.op("Add", [x, g.op("Mul", [cube, g.const(0.044715, f"{hint}/gelu_c")], hint)], hint)
    scaled = g.op("Mul", [inner, g.const(np.sqrt(2.0 / np.pi), f"{hint}/gelu_s")], hint)
    one_plus = g.op("Add", [g.op("Tanh", [scaled], hint), g.const(1.0, "one_f")], hint)
    return g.op("Mul", [g.op("Mul", [x, g.const(0.5, "half_f")], hint), one_plus], hint)


def _hawk_coefficients(g, layer, x, extra, mask=None):
    """HawkBlock: the GELU gate branch, the causal convolution (shifted
    ``Slice`` s of the buffer and the inputs; with a mask, reading the last
    real steps, ``_masked_conv``) and RGLRU's ``a``, ``b`` on its output;
    returns ``(a,), (b,), gate, [new buffer]``."""
    hint = layer.name
    gate = _gelu_tanh(g, _affine(g, layer, x, "linear_y"), hint)
    xs = _affine(g, layer, x, "linear_x")
    k = layer.conv_width
    kernel = _numpy(layer.conv_kernel)
    conv_bias = g.weight(layer.conv_bias, f"{hint}/conv_bias")
    if k == 1:
        v = g.op("Add", [g.op("Mul", [xs, g.const(kernel[0], f"{hint}/conv_k")], hint),
                         conv_bias], hint)  # fmt: skip
        new_extra = []
    else:
        if extra:
            buffer = extra[0]
        else:  # zeros (batch, K - 1, width)
            first = g.op("Slice", [xs, g.ints([0], "zero_l"), g.ints([1], "one_l"),
                                   g.ints([1], "axis_time")], hint)  # fmt: skip
            zeros = g.op("Mul", [first, g.const(0.0, "zero_f")], hint)
            buffer = g.op("Concat", [zeros] * (k - 1), hint, axis=1)
        full = g.op("Concat", [buffer, xs], hint, axis=1)
        big = np.iinfo(np.int64).max
        if mask is not None:
            v, new_buffer = _masked_conv(g, layer, full, mask, kernel, conv_bias)
            a, b = _rglru_coefficients(g, layer, v)
            return (a,), (b,), gate, [new_buffer] if layer.return_state else []
        v = conv_bias
        for i in range(k):
            stop = i - (k - 1)
            window = g.op("Slice", [full, g.ints([i], f"start_{i}"),
                                    g.ints([stop if stop else big], f"stop_{i}"),
                                    g.ints([1], "axis_time")], hint)  # fmt: skip
            term = g.op("Mul", [window, g.const(kernel[i], f"{hint}/conv_k{i}")], hint)
            v = g.op("Add", [v, term], hint)
        new_extra = []
        if layer.return_state:  # the last K - 1 inputs, for the next call
            new_extra = [g.op("Slice", [full, g.ints([1 - k], "buffer_start"),
                                        g.ints([big], "end"), g.ints([1], "axis_time")],
                              hint)]  # fmt: skip
    a, b = _rglru_coefficients(g, layer, v)
    return (a,), (b,), gate, new_extra


def _masked_conv(g, layer, full, mask, kernel, conv_bias):
    """The causal convolution under a mask, as ``causal_conv1d`` computes it:
    the real steps of ``full`` (the buffer, all real, then the inputs) moved
    to the front in their order (``TopK`` of their positions, smallest
    first: an argsort), and each step's ``K`` taps gathered by the count of
    real steps up to it (``CumSum``, ``GatherElements``); the new buffer is
    the last ``K - 1`` real steps. Returns ``(v, new_buffer)``."""
    hint = f"{layer.name}/conv"
    k = layer.conv_width
    steps = g.op("Cast", [mask], hint, to=7)  # int64 (batch, time)
    ones = g.op("Add", [g.op("Mul", [g.op("Slice", [steps, g.ints([0], "zero_l"),
                                                    g.ints([1], "one_l"),
                                                    g.ints([1], "axis_time")], hint),
                                      g.ints(0, "zero_i")], hint),
                        g.ints(1, "one_i")], hint)  # fmt: skip
    valid = g.op("Concat", [ones] * (k - 1) + [steps], hint, axis=1)  # (batch, K-1+T)
    length = g.op("Gather", [g.op("Shape", [valid], hint), g.ints([1], "one_l")], hint)
    position = g.op("Range", [g.ints(0, "zero_i"), g.op("Squeeze", [length], hint),
                              g.ints(1, "one_i")], hint)  # fmt: skip
    key = g.op("Where", [g.op("Cast", [valid], hint, to=9), position,
                         g.op("Add", [position, length], hint)], hint)  # fmt: skip
    _, order = g.op("TopK", [g.op("Cast", [key], hint, to=1), length], hint, outputs=2,
                    axis=1, largest=0, sorted=1)  # fmt: skip
    shape = g.op("Shape", [full], hint)

    def gather(values, index):  # out[b, j] = values[b, index[b, j]]
        wide = g.op("Unsqueeze", [index, g.ints([-1], "axes_last")], hint)
        size = g.op("Concat", [g.op("Shape", [index], hint),
                               g.op("Slice", [shape, g.ints([2], "two_l"), g.ints([3], "three_l")],
                                    hint)], hint, axis=0)  # fmt: skip
        return g.op("GatherElements", [values, g.op("Expand", [wide, size], hint)], hint, axis=1)

    packed = gather(full, order)
    count = g.op("CumSum", [valid, g.ints(1, "axis_one")], hint)
    big = np.iinfo(np.int64).max
    count = g.op("Slice", [count, g.ints([k - 1], "conv_start"), g.ints([big], "end"),
                           g.ints([1], "axis_time")], hint)  # fmt: skip
    v = conv_bias
    for j in range(k):  # j real steps back from t
        back = g.op("Sub", [count, g.ints(1 + j, f"int_{1 + j}")], hint)
        index = g.op("Max", [back, g.ints(0, "zero_i")], hint)
        term = g.op(
            "Mul",
            [gather(packed, index), g.const(kernel[k - 1 - j], f"{layer.name}/conv_k{k - 1 - j}")],
            hint,
        )
        v = g.op("Add", [v, term], hint)  # fmt: skip
    new_buffer = None
    if layer.return_state:  # the last K - 1 real steps, oldest first
        total = g.op("Slice", [count, g.ints([-1], "last_l"), g.ints([big], "end"),
                               g.ints([1], "axis_time")], hint)  # fmt: skip
        last = g.op("Add", [g.op("Sub", [total, g.ints(k - 1, f"int_{k - 1}")], hint),
                            g.ints(np.arange(k - 1)[None], "buffer_range")], hint)  # fmt: skip
        new_buffer = gather(packed, last)
    return v, new_buffer


def _sigmoid(g, z, hint):
    """``sigmoid(z)`` to float32 precision relative to its value also for a
    large negative ``z`` (onnxruntime's ``Sigmoid`` is exact only to
    about 1e-7 absolute): ``e / (1 + e)`` below 0, ``1 / (1 + e)`` above,
    ``e = exp(-|z|)``. RG-LRU's ``log a`` is proportional to it, and
    ``sqrt(1 - a^2)`` of an ``a`` near 1 magnifies its relative error."""
    e = g.op("Exp", [g.op("Neg", [g.op("Abs", [z], hint)], hint)], hint)
    one = g.const(1.0, "one_f")
    denominator = g.op("Add", [one, e], hint)
    negative = g.op("Less", [z, g.const(0.0, "zero_f")], hint)
    numerator = g.op("Where", [negative, e, one], hint)
    return g.op("Div", [numerator, denominator], hint)


def _expm1(g, x, hint):
    """``exp(x) - 1`` for ``x <= 0`` to float32 precision near 0, where ``1 -
    a^2`` of an ``a`` near 1 cancels (ONNX has no ``Expm1``): Kahan's ``(u -
    1) x / log(u)`` with ``u = exp(x)``; ``x`` itself where ``u`` rounds to
    1, ``u - 1`` below -1 (no cancellation there, and ``log(u)`` may be
    ``-inf``)."""
    u = g.op("Exp", [x], hint)
    one = g.const(1.0, "one_f")
    u_1 = g.op("Sub", [u, one], hint)
    kahan = g.op("Div", [g.op("Mul", [u_1, x], hint), g.op("Log", [u], hint)], hint)
    near = g.op("Where", [g.op("Equal", [u, one], hint), x, kahan], hint)
    return g.op("Where", [g.op("Less", [x, g.const(-1.0, "minus_one_f")], hint), u_1, near], hint)


def _rglru_coefficients(g, layer, x):
    """``a`` and ``b`` (batch, time, units) of RGLRU: ``log a = -c
    sigmoid(gate_a) softplus(a_param)``, ``b = sqrt(1 - a^2) sigmoid(gate_x) x``."""
    hint = layer.name

    def affine(gate):
        return _affine(g, layer, x, gate)

    import keras

    # As the layer computes it, (-c sigmoid(gate_a)) softplus(a_param), with
    # softplus on the layer's backend: a to the last bit (see LRU).
    softplus = keras.ops.convert_to_numpy(keras.ops.softplus(layer.a_param))
    scaled = g.op("Mul", [g.const(-layer.c, f"{hint}/minus_c"),
                          _sigmoid(g, affine("gate_a"), hint)], hint)  # fmt: skip
    log_a = g.op("Mul", [scaled, g.const(softplus, f"{hint}/softplus_a")], hint)
    a = g.op("Exp", [log_a], hint)
    multiplier = g.op("Sqrt", [g.op("Neg", [_expm1(g, g.op("Add", [log_a, log_a], hint), hint)],
                                    hint)], hint)  # fmt: skip
    gated = g.op("Mul", [g.op("Sigmoid", [affine("gate_x")], hint), x], hint)
    return a, g.op("Mul", [multiplier, gated], hint)


def _lru_coefficients(g, layer, x):
    """``a`` and ``b`` of LRU as ``(re, im)`` pairs (batch, time, state_units):
    ``a = lambda`` (constant, expanded over batch and time), ``b = gamma B x``."""
    import keras

    from keras_seqmodels.linear_rnn.lru import lru_lambda

    hint = layer.name
    # The layer's own functions on its backend: lambda to the last bit (over
    # thousands of steps with |lambda| near 1, one unit in the last place of
    # lambda shows in the outputs).
    lam = [keras.ops.convert_to_numpy(c) for c in lru_lambda(layer.nu_log, layer.theta_log)]
    gamma = g.const(keras.ops.convert_to_numpy(keras.ops.exp(layer.gamma_log)), f"{hint}/gamma")
    b = tuple(
        g.op("Mul", [g.op("MatMul", [x, g.weight(w, f"{hint}/{w.name}")], hint), gamma], hint)
        for w in (layer.b_real, layer.b_imag)
    )
    shape = g.op("Shape", [b[0]], hint)
    a = tuple(g.op("Expand", [g.const(c, f"{hint}/lambda"), shape], hint) for c in lam)
    return a, b


def _lru_readout(g, layer, h, x):
    """``y = Re(C h) + D x`` for every step."""
    hint = layer.name
    rr = g.op("MatMul", [h[0], g.weight(layer.c_real, f"{hint}/c_real")], hint)
    ii = g.op("MatMul", [h[1], g.weight(layer.c_imag, f"{hint}/c_imag")], hint)
    d = g.weight(layer.d, f"{hint}/d")
    skip = g.op("Mul" if len(layer.d.shape) == 1 else "MatMul", [x, d], hint)
    return g.op("Add", [g.op("Sub", [rr, ii], hint), skip], hint)


def _ssm_coefficients(g, layer, u):
    """``a``, ``b`` (batch, time, D, N) of SelectiveSSM and ``C`` (batch, time,
    N) for the readout: ``Delta = softplus(dt_in W_dt + b_dt)``, ``a =
    exp(Delta A)``, ``A = -exp(A_log)``, ``b = (Delta u) B``."""
    import keras

    hint = layer.name
    r, n = layer._rank(layer._channels), layer.state_size
    proj = g.op("MatMul", [u, g.weight(layer.x_proj_kernel, f"{hint}/x_proj_kernel")], hint)
    dt_in, b_t, c_t = g.op("Split", [proj, g.ints([r, n, n], "split")], hint, outputs=3, axis=-1)
    dt = g.op("MatMul", [dt_in, g.weight(layer.dt_kernel, f"{hint}/dt_kernel")], hint)
    dt = g.op("Add", [dt, g.weight(layer.dt_bias, f"{hint}/dt_bias")], hint)
    delta = g.op("Softplus", [dt], hint)
    last = g.ints([-1], "axes_last")
    a_matrix = g.const(-keras.ops.convert_to_numpy(keras.ops.exp(layer.a_log)), f"{hint}/A")
    a = g.op("Exp", [g.op("Mul", [g.op("Unsqueeze", [delta, last], hint), a_matrix], hint)], hint)
    du = g.op("Unsqueeze", [g.op("Mul", [delta, u], hint), last], hint)
    b = g.op("Mul", [du, g.op("Unsqueeze", [b_t, g.ints([-2], "axes_m2")], hint)], hint)
    return (a,), (b,), c_t


def _ssm_readout(g, layer, h, u, c_t):
    """``y = sum_N h C + D u`` for every step."""
    hint = layer.name
    hc = g.op("Mul", [h, g.op("Unsqueeze", [c_t, g.ints([-2], "axes_m2")], hint)], hint)
    y = g.op("ReduceSum", [hc, g.ints([-1], "axes_last")], hint, keepdims=0)
    skip = g.op("Mul", [u, g.weight(layer.d_skip, f"{hint}/d_skip")], hint)
    return g.op("Add", [y, skip], hint)


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
    units = layer.output_size
    mask = x.mask_name if masked else None
    seq = x.name if x.dtype == "float32" else g.op("Cast", [x.name], hint, to=1)
    if layer.go_backwards:
        seq = _reverse_time(g, seq, hint)
        if mask is not None:
            mask = _reverse_time(g, mask, hint)
    shape = tuple(layer.scan_shape())
    n_states = len(layer.state_shapes())
    if states and len(states) != n_states:
        raise _unsupported(
            layer, f"`initial_state` must be {n_states} tensor(s), as return_state gives; "
            f"got {len(states)}"
        )  # fmt: skip
    n = 2 if layer.complex_state else 1
    h_init = [s.name for s in states[:n]] if states else None
    context, new_extra = None, []
    if kind == "HawkBlock":
        extra = [s.name for s in states[n:]] if states else []
        a, b, context, new_extra = _hawk_coefficients(g, layer, seq, extra, mask)
    elif kind == "LRU":
        a, b = _lru_coefficients(g, layer, seq)
    elif kind == "SelectiveSSM":
        a, b, context = _ssm_coefficients(g, layer, seq)
    else:
        a, b = _coefficients(g, layer, seq)
        a, b = (a,), (b,)
    if mask is not None:
        axes = list(range(2, 2 + len(shape)))  # (batch, time, 1, ...) for the state
        keep_h = g.op("Unsqueeze", [mask, g.ints(axes, "axes_state")], hint)
        ones = (1.0, 0.0)[:n]  # a = 1 (+ 0i): the state is kept
        a = tuple(g.op("Where", [keep_h, c, g.const(v, "one_f" if v else "zero_f")], hint)
                  for c, v in zip(a, ones))  # fmt: skip
        b = tuple(g.op("Where", [keep_h, c, g.const(0.0, "zero_f")], hint) for c in b)
    if h_init:
        h0 = h_init
    else:  # zeros (batch, *shape), sized by the batch of the graph
        h0 = [
            g.op("Mul", [g.op("Gather", [c, g.ints(0, "zero_i")], hint, axis=1),
                         g.const(0.0, "zero_f")], hint)
            for c in b
        ]  # fmt: skip
    results = g.op(
        "Scan", [*h0, *a, *b], hint, outputs=2 * n, body=_scan_body(shape, n == 2),
        num_scan_inputs=2 * n, scan_input_axes=[1] * (2 * n), scan_output_axes=[1] * n,
    )  # fmt: skip
    finals, hs = results[:n], results[n:]
    batch, time = x.shape[0], x.shape[1]

    def zero():  # made where used: no unused initializer in the file
        return g.const(0.0, "zero_f")

    if kind == "LRU":
        ys = _lru_readout(g, layer, hs, seq)
    elif kind == "SelectiveSSM":
        ys = _ssm_readout(g, layer, hs[0], seq, context)
    elif kind == "HawkBlock":  # linear_out(h * gate)
        ys = _affine(g, layer, g.op("Mul", [hs[0], context], hint), "linear_out")
    else:
        ys = hs[0]  # the output is the state
    if layer.return_sequences:
        out = ys
        if mask is not None:
            keep = g.op("Unsqueeze", [mask, g.ints([-1], "axes_last")], hint)
            out = g.op("Where", [keep, ys, zero()], hint)
        output = _Tensor(out, (batch, time, units), x.mask if masked else None)
    elif kind not in ("LRU", "SelectiveSSM", "HawkBlock"):
        out = finals[0]  # the state after the last unmasked step: that step's output
        if mask is not None:  # zeros for a row without unmasked steps
            out = g.op("Where", [_has_step(g, mask, hint), out, zero()], hint)
        output = _Tensor(out, (batch, units))
    elif mask is None:
        output = _Tensor(g.op("Gather", [ys, g.ints(-1, "last_i")], hint, axis=1), (batch, units))
    else:  # the output of each row's last unmasked step (zeros if none)
        steps = g.op("Cast", [mask], hint, to=1)
        position = g.op("CumSum", [g.op("Add", [g.op("Mul", [steps, zero()], hint),
                                                g.const(1.0, "one_f")], hint),
                                   g.ints(1, "axis_one")], hint)  # fmt: skip
        last = g.op("ArgMax", [g.op("Mul", [steps, position], hint)], hint, axis=1, keepdims=0)
        depth = g.op("Gather", [g.op("Shape", [steps], hint), g.ints([1], "one_i")], hint)
        pick = g.op("OneHot", [last, depth, g.const([0.0, 1.0], "off_on")], hint, axis=-1)
        picked = g.op("Mul", [ys, g.op("Unsqueeze", [pick, g.ints([-1], "axes_last")], hint)],
                      hint)  # fmt: skip
        out = g.op("ReduceSum", [picked, g.ints([1], "axes_time")], hint, keepdims=0)
        # A row without steps: the readout of zero states and context, as the
        # layer gives (HawkBlock's: the bias of its output projection).
        empty = (
            g.weight(layer.linear_out_bias, f"{hint}/linear_out_bias")
            if kind == "HawkBlock"
            else zero()
        )
        output = _Tensor(g.op("Where", [_has_step(g, mask, hint), out, empty], hint),
                         (batch, units))  # fmt: skip
    if not layer.return_state:
        return output
    shapes = layer.state_shapes()
    return [output] + [_Tensor(f, (batch,) + tuple(s)) for f, s in zip(finals + new_extra, shapes)]


def _has_step(g, mask, hint):
    """(batch, 1) bool: the row has an unmasked step."""
    steps = g.op("Cast", [mask], hint, to=1)
    count = g.op("ReduceSum", [steps, g.ints([1], "axes_time")], hint, keepdims=1)
    return g.op("Greater", [count, g.const(0.0, "zero_f")], hint)


def _convert_linear_bidirectional(g, layer, x, states, masked):
    """This package's ``Bidirectional`` or Keras's over a ``linear_rnn``
    layer: the forward layer's graph on ``x`` and the backward layer's on the
    reversed sequence, merged.

    The package's wrapper reverses each row within its length (its real
    steps, last first, then its padding: one ``ScatterElements`` to the
    positions ``reversal_permutation`` computes) and reads the backward
    outputs back at the same positions (``GatherElements``); Keras's runs
    the backward layer with ``go_backwards=True`` and reverses its output
    sequence. Outputs as the wrapper's: the merged output (or both with
    ``merge_mode=None``), then the forward and the backward states."""
    import keras

    from keras_seqmodels.export.onnx_graph import _Mask
    from keras_seqmodels.export.onnx_recurrent import _merge

    fw, bw = layer.forward_layer, layer.backward_layer
    hint = layer.name
    states = list(states or [])
    half = len(states) // 2
    fw_init, bw_init = states[:half] or None, states[half:] or None
    mask = x.mask_name if masked else None
    forward = _convert_linear(g, fw, x, fw_init, masked)
    if isinstance(layer, keras.layers.Bidirectional):  # go_backwards=True, output reversed
        backward = _convert_linear(g, bw, x, bw_init, masked)
        unreverse = lambda name: _reverse_time(g, name, hint)  # noqa: E731
    elif mask is None:
        reversed_x = _Tensor(_reverse_time(g, x.name, hint), x.shape, None, x.dtype)
        backward = _convert_linear(g, bw, reversed_x, bw_init, False)
        unreverse = lambda name: _reverse_time(g, name, hint)  # noqa: E731
    else:
        inverse, reversed_mask = _reversal(g, mask, hint)

        def along_time(index, like):
            wide = g.op("Unsqueeze", [index, g.ints([-1], "axes_last")], hint)
            return g.op("Expand", [wide, g.op("Shape", [like], hint)], hint)

        seq = x.name if x.dtype == "float32" else g.op("Cast", [x.name], hint, to=1)
        moved = g.op("ScatterElements", [seq, along_time(inverse, seq), seq], hint, axis=1)
        reversed_x = _Tensor(moved, x.shape, _Mask(lambda: reversed_mask))
        backward = _convert_linear(g, bw, reversed_x, bw_init, True)

        def unreverse(name):
            return g.op("GatherElements", [name, along_time(inverse, name)], hint, axis=1)

    def split(result):
        return (result[0], list(result[1:])) if fw.return_state else (result, [])

    (fw_out, fw_states), (bw_out, bw_states) = split(forward), split(backward)
    if layer.return_sequences:
        bw_out = _Tensor(unreverse(bw_out.name), fw_out.shape, x.mask if masked else None)
    mode = {"ave": "mean", "mul": "product"}.get(layer.merge_mode, layer.merge_mode)
    if mode is None:
        outputs = [fw_out, bw_out]
    else:
        width = fw_out.shape[-1]
        width = 2 * width if mode == "concat" and width is not None else width
        merged = _merge(g, mode, fw_out.name, bw_out.name, hint)
        outputs = [_Tensor(merged, fw_out.shape[:-1] + (width,), fw_out.mask)]
    if not layer.return_state and len(outputs) == 1:
        return outputs[0]
    return outputs + fw_states + bw_states


def _reversal(g, mask, hint):
    """``reversal_permutation``'s ``inverse`` (int64, batch x time: the
    position of step t in the row reversed within its length) and the
    reversed rows' mask (``position < length``)."""
    valid = g.op("Cast", [mask], hint, to=7)
    length = g.op("ReduceSum", [valid, g.ints([1], "axes_time")], hint, keepdims=1)
    one = g.ints(1, "one_i")
    rank_valid = g.op("Sub", [g.op("CumSum", [valid, g.ints(1, "axis_one")], hint), one], hint)
    padded = g.op("Sub", [one, valid], hint)
    rank_pad = g.op("Sub", [g.op("CumSum", [padded, g.ints(1, "axis_one")], hint), one], hint)
    inverse = g.op("Where", [mask, g.op("Sub", [g.op("Sub", [length, one], hint), rank_valid],
                                         hint),
                             g.op("Add", [length, rank_pad], hint)], hint)  # fmt: skip
    position = g.op("Sub", [g.op("CumSum", [g.op("Add", [g.op("Mul", [valid, g.ints(0, "zero_i")],
                                                                hint), one], hint),
                                             g.ints(1, "axis_one")], hint), one], hint)  # fmt: skip
    return inverse, g.op("Less", [position, length], hint)
