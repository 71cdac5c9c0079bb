"""Keras activations as ONNX: the ``activations`` attribute of a recurrent
node (``_rnn_activation``) and the ops after a ``Dense`` or ``Activation``
layer (``_apply_activation``). An activation ONNX lacks raises a
``ValueError`` naming it and the ones that are mapped."""

from keras_seqmodels.export.onnx_graph import OTHER_FORMATS

_HARD_SIGMOID = (1.0 / 6.0, 0.5)  # alpha, beta of Keras 3's relu6(x + 3) / 6

# Keras activation name -> (ONNX recurrent activation, alpha, beta).
_RNN_ACTIVATIONS = {
    "tanh": ("Tanh", None, None),
    "sigmoid": ("Sigmoid", None, None),
    "relu": ("Relu", None, None),
    "hard_sigmoid": ("HardSigmoid", *_HARD_SIGMOID),
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
        alpha, beta = _HARD_SIGMOID
        return g.op("HardSigmoid", [x], hint, alpha=alpha, beta=beta)
    if name == "relu6":
        return g.op("Clip", [x, g.const(0.0, "zero"), g.const(6.0, "six")], hint)
    if name == "leaky_relu":
        return g.op("LeakyRelu", [x], hint, alpha=0.2)
    raise ValueError(
        f"to_onnx: layer {type(layer).__name__} '{layer.name}': activation {name!r} is not "
        f"mapped to ONNX (mapped: linear, {', '.join(sorted(simple))}, softmax, log_softmax, "
        f"swish, hard_sigmoid, relu6, leaky_relu); {OTHER_FORMATS}"
    )
