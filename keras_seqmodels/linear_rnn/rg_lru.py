"""``RGLRU``: the Real-Gated Linear Recurrent Unit of Griffin and Hawk (De et al., 2024)."""

import math

import keras
from keras import ops

from keras_seqmodels.linear_rnn.base import LinearRecurrent
from keras_seqmodels.utils import validation

# The anchor's bound on the derivative of sqrt(1 - a^2) (recurrentgemma's
# ``sqrt_bound_derivative(..., 1000)``): below x = 1 / (4 * 1000^2) the
# gradient is that of sqrt at this floor.
_SQRT_GRAD_BOUND = 1000.0


def bounded_grad_sqrt(x):
    """``sqrt(x)``, with the gradient of ``sqrt(max(x, 1 / (4 * 1000^2)))``.

    The value is exactly ``sqrt(x)``; only the derivative is bounded (by
    1000), so a gate driving ``a -> 1`` (``x = 1 - a^2 -> 0``) gives no
    infinite gradient. The same bound as the anchor's custom VJP, written
    with ``stop_gradient`` so it works on every backend.
    """
    floor = 1.0 / (4.0 * _SQRT_GRAD_BOUND**2)
    slope = ops.stop_gradient(0.5 / ops.sqrt(ops.maximum(x, floor)))
    return ops.stop_gradient(ops.sqrt(x)) + (x - ops.stop_gradient(x)) * slope


def rglru_coefficients(x, gate_a, gate_x, a_param, c):
    """``(a, b)`` of ``h(t) = a(t) h(t-1) + b(t)`` for the RG-LRU.

    ``gate_a``, ``gate_x``: the gate pre-activations ``W_a x + b_a`` and
    ``W_x x + b_x``. ``log a(t) = -c * sigmoid(gate_a) * softplus(a_param)``,
    ``b(t) = sqrt(1 - a(t)^2) * sigmoid(gate_x) * x(t)``; ``1 - a^2`` is
    ``-expm1(2 log a)``, exact for ``a`` near 1.
    """
    log_a = -c * ops.sigmoid(gate_a) * ops.softplus(a_param)
    a = ops.exp(log_a)
    multiplier = bounded_grad_sqrt(-ops.expm1(2.0 * log_a))
    return a, multiplier * (ops.sigmoid(gate_x) * x)


def a_param_initializer(min_rad, max_rad):
    """The anchor's ring initialisation of ``a_param``: ``a = exp(-softplus(a_param))``
    drawn with ``a^2`` uniform in ``[min_rad^2, max_rad^2]``."""

    def init(shape, dtype=None):
        u = keras.random.uniform(shape, dtype="float32")
        log_a = 0.5 * ops.log(u * (max_rad**2 - min_rad**2) + min_rad**2)
        # softplus^-1(-log a) = log(exp(-log a) - 1) = log(expm1(-log a)).
        return ops.cast(ops.log(ops.expm1(-log_a)), dtype or "float32")

    return init


def check_radii(name, min_rad, max_rad):
    for arg, value in (("min_rad", min_rad), ("max_rad", max_rad)):
        if not validation.is_real(value) or not math.isfinite(value):
            raise ValueError(f"{name}: `{arg}` must be a finite number. Received: {arg}={value!r}")
    if not 0.0 < min_rad < max_rad < 1.0:
        raise ValueError(
            f"{name}: the radii must satisfy 0 < min_rad < max_rad < 1. "
            f"Received: min_rad={min_rad!r}, max_rad={max_rad!r}"
        )
    return float(min_rad), float(max_rad)


def check_c(name, c):
    if not validation.is_real(c) or not math.isfinite(c) or c <= 0:
        raise ValueError(f"{name}: `c` must be a finite number > 0. Received: c={c!r}")
    return float(c)


def default_gate_initializer():
    """The anchor's gate and projection initialiser: variance scaling 1, fan-in,
    truncated normal (flax's ``"normal"`` is truncated too)."""
    return keras.initializers.VarianceScaling(1.0, "fan_in", "truncated_normal")


@keras.saving.register_keras_serializable(package="keras_seqmodels")
class RGLRU(LinearRecurrent):
    """The Real-Gated Linear Recurrent Unit (RG-LRU) of Griffin and Hawk.

    For each step t, with gates computed from the input only:

        r(t) = sigmoid(W_a x(t) + b_a)               recurrence gate
        i(t) = sigmoid(W_x x(t) + b_x)               input gate
        a(t) = a^(c r(t)),  a = exp(-softplus(a_param)) in (0, 1)
        h(t) = a(t) * h(t-1) + sqrt(1 - a(t)^2) * (i(t) * x(t))

    and the output is ``h(t)``. The state update is linear in ``h``, so the
    whole sequence runs as one gate product and one linear scan
    (``keras_seqmodels.linear_rnn.linear_scan``); ``step`` runs one step at
    a time for streaming, with the same equations. ``c = 8`` makes
    ``a(t)`` range from 1 (``r = 0``: the state is kept, the input ignored)
    to ``a^8``; ``sqrt(1 - a(t)^2)`` keeps the state's scale when ``a(t) ->
    1``. The recurrence is elementwise, so the output width is the input
    width (``units`` must equal it; ``keras_seqmodels.linear_rnn.HawkBlock``
    wraps the RG-LRU with projections of any width).

    What is new relative to Keras: Keras has no gated linear recurrence and
    no scan-trained recurrent layer; this is one, with masks,
    ``initial_state``, ``go_backwards``, ``stateful`` and a step form.

    Where it differs from the anchor (google-deepmind/recurrentgemma,
    ``layers.RGLRU``):

    - The gates are dense ``(units, units)`` matrices; the anchor's are
      block-diagonal (``BlockDiagonalLinear`` with ``num_heads`` blocks), a
      sharding choice for large widths. A dense gate holds a block-diagonal
      one (zeros off the blocks).
    - No document resets. The anchor takes ``segment_pos`` and, at a
      document's first token, drops ``a(t) h(t-1)`` and does not scale the
      input by ``sqrt(1 - a^2)``. Here every step is normalised, including
      the first, so a stateful layer over chunks equals one call over the
      whole sequence; a new document is a new sequence (zero state). From a
      zero state the two differ only in the first input's scale.
    - ``a_param`` and its initialisation are the anchor's code: ``a`` drawn
      with ``a^2`` uniform in ``[min_rad^2, max_rad^2] = [0.81, 0.998]``. The
      paper's text puts ``a^c`` in ``[0.9, 0.999]``; the code, which the
      released models use, puts ``a`` there.
    - The derivative of ``sqrt(1 - a^2)`` is bounded by 1000 as the anchor
      does (``bounded_grad_sqrt``), written with ``stop_gradient``.
    - Real state only (the anchor's ``only_real=True`` default).

    Args:
        units: width of the state, the input and the output.
        c: the fixed scale of the recurrence gate's exponent (default 8).
        min_rad, max_rad: ring of the initial ``a`` (defaults 0.9, 0.999).
        gate_initializer: initializer of ``gate_a_kernel`` and
            ``gate_x_kernel`` (default: the anchor's variance scaling).
        **kwargs: ``return_sequences``, ``return_state``, ``go_backwards``,
            ``stateful`` and the ``keras.layers.Layer`` arguments, as in
            ``keras_seqmodels.linear_rnn.LinearRecurrent``.

    Call arguments:
        sequences: float tensor ``(batch, time, units)``.
        initial_state: optional list ``[h]``, ``(batch, units)``.
        mask: optional boolean ``(batch, time)``; masked steps keep the state.
        training: unused.

    Example:

    >>> import numpy as np, keras_seqmodels as ks
    >>> layer = ks.linear_rnn.RGLRU(8, return_sequences=True)
    >>> layer(np.random.rand(2, 10, 8).astype("float32")).shape
    (2, 10, 8)

    Reference:
        De, Smith, Fernando, Botev, Cristian-Muraru, Gu, Haroun, Berrada,
        Chen, Srinivasan, Desjardins, Doucet, Budden, Teh, Pascanu, de
        Freitas & Gulcehre, "Griffin: Mixing Gated Linear Recurrences with
        Local Attention for Efficient Language Models", 2024
        (arXiv:2402.19427), section 2.4.
    """

    def __init__(self, units, c=8.0, min_rad=0.9, max_rad=0.999, gate_initializer=None, **kwargs):
        super().__init__(**kwargs)
        name = type(self).__name__
        self.units = validation.check_positive_int(name, "units", units)
        self.c = check_c(name, c)
        self.min_rad, self.max_rad = check_radii(name, min_rad, max_rad)
        self.gate_initializer = keras.initializers.get(
            gate_initializer if gate_initializer is not None else default_gate_initializer()
        )

    def build(self, sequences_shape, initial_state_shape=None):
        self._check_sequences_shape(sequences_shape)
        if sequences_shape[-1] != self.units:
            raise ValueError(
                f"{self.name}: the RG-LRU is elementwise, so the last dimension of "
                f"`sequences` must equal `units`={self.units}. Received shape "
                f"{tuple(sequences_shape)}. Project the input first (a Dense layer), "
                "or use HawkBlock, which has projections of any width."
            )
        u = self.units
        for gate in ("gate_a", "gate_x"):
            kernel = self.add_weight(
                shape=(u, u), initializer=self.gate_initializer, name=f"{gate}_kernel"
            )
            bias = self.add_weight(shape=(u,), initializer="zeros", name=f"{gate}_bias")
            setattr(self, f"{gate}_kernel", kernel)
            setattr(self, f"{gate}_bias", bias)
        self.a_param = self.add_weight(
            shape=(u,), initializer=a_param_initializer(self.min_rad, self.max_rad), name="a_param"
        )
        super().build(sequences_shape)

    def scan_shape(self):
        return (self.units,)

    @property
    def output_size(self):
        return self.units

    def coefficients(self, sequences, extra_states, mask, training):
        dtype = sequences.dtype

        def affine(kernel, bias):
            return ops.matmul(sequences, ops.cast(kernel, dtype)) + ops.cast(bias, dtype)

        a, b = rglru_coefficients(
            sequences,
            affine(self.gate_a_kernel, self.gate_a_bias),
            affine(self.gate_x_kernel, self.gate_x_bias),
            ops.cast(self.a_param, dtype),
            self.c,
        )
        return (a,), (b,), None, []

    def readout(self, h, context, training):
        return h[0]

    def get_config(self):
        config = {
            "units": self.units,
            "c": self.c,
            "min_rad": self.min_rad,
            "max_rad": self.max_rad,
            "gate_initializer": keras.initializers.serialize(self.gate_initializer),
        }
        return {**super().get_config(), **config}
