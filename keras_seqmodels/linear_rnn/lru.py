"""``LRU``: the Linear Recurrent Unit of Orvieto et al. (2023), trained by a scan."""

import math

import keras
from keras import ops

from keras_seqmodels.linear_rnn.base import LinearRecurrent
from keras_seqmodels.utils import bounds, validation


def lru_lambda(nu_log, theta_log):
    """``(Re, Im)`` of the diagonal ``lambda = exp(-exp(nu_log) + i exp(theta_log))``;
    ``|lambda| = exp(-exp(nu_log)) < 1`` for every real ``nu_log``."""
    modulus = ops.exp(-ops.exp(nu_log))
    phase = ops.exp(theta_log)
    return modulus * ops.cos(phase), modulus * ops.sin(phase)


def lru_inputs(u, b_real, b_imag, gamma_log):
    """``(Re, Im)`` of ``gamma * (B u(t))`` for every step: ``u`` ``(..., H_in)``,
    ``B`` as ``(H_in, N)`` kernels, ``gamma = exp(gamma_log)`` ``(N,)``."""
    gamma = ops.exp(gamma_log)
    return ops.matmul(u, b_real) * gamma, ops.matmul(u, b_imag) * gamma


def lru_readout(h_real, h_imag, u, c_real, c_imag, d):
    """``y = Re(C h) + D u``: ``C`` as ``(N, H_out)`` kernels, ``D`` a vector
    ``(H,)`` (the paper's diagonal ``D``) or a matrix ``(H_in, H_out)``."""
    y = ops.matmul(h_real, c_real) - ops.matmul(h_imag, c_imag)
    skip = u * d if len(d.shape) == 1 else ops.matmul(u, d)
    return y + skip


def ring_nu_log(r_min, r_max):
    """Initializer of ``nu_log``: ``|lambda|`` on the ring ``[r_min, r_max]``,
    uniform in area (``|lambda|^2`` uniform), the paper's Lemma 3.2."""

    def init(shape, dtype=None):
        u = keras.random.uniform(shape, dtype="float32")
        nu = -0.5 * ops.log(u * (r_max**2 - r_min**2) + r_min**2)
        return ops.cast(ops.log(nu), dtype or "float32")

    return init


def ring_theta_log(max_phase):
    """Initializer of ``theta_log``: the phase of ``lambda`` uniform in ``[0, max_phase]``."""

    def init(shape, dtype=None):
        # The lower end keeps log(phase) finite (u = 0 has probability ~0 anyway).
        u = keras.random.uniform(shape, minval=1e-7, maxval=1.0, dtype="float32")
        return ops.cast(ops.log(max_phase * u), dtype or "float32")

    return init


@keras.saving.register_keras_serializable(package="keras_seqmodels")
class LRU(LinearRecurrent):
    """The Linear Recurrent Unit (LRU) of Orvieto et al. (2023), trained by a scan.

    A complex diagonal linear recurrence with a real read-out:

        lambda = exp(-exp(nu_log) + i exp(theta_log))          (N,), |lambda| < 1
        x(t) = lambda * x(t-1) + gamma * (B u(t))              x complex (N,)
        y(t) = Re(C x(t)) + D u(t)
        gamma = exp(gamma_log), initialised to sqrt(1 - |lambda|^2)

    ``B`` (``N x H_in``) and ``C`` (``H_out x N``) are complex, stored as
    real and imaginary kernels. The exponential parameterisation keeps
    ``|lambda| < 1`` for any value of the weights (a stable recurrence
    throughout training); the ring initialisation draws ``|lambda|`` uniform
    in area on ``[r_min, r_max]`` and its phase uniform in ``[0,
    max_phase]``; ``gamma`` normalises the input so the state's variance does
    not grow as ``|lambda| -> 1``. The whole sequence runs as two input
    products and one complex linear scan
    (``keras_seqmodels.linear_rnn.complex_linear_scan``); ``step`` runs one
    step at a time for streaming, with the same equations.

    Width of the skip term ``D u``. The paper has ``H_in = H_out = H`` and a
    diagonal ``D`` (a vector ``d``, ``D u = d * u``). Here ``units`` is the
    output width ``H_out``: when the input width equals ``units``, ``d`` is
    the paper's vector (``(units,)``, initialised N(0, 1) as the paper's
    code); otherwise ``d`` is a full ``(H_in, units)`` matrix (initialised
    N(0, 1 / H_in), so ``D u`` keeps the variance of the diagonal case). The
    shape is decided in ``build`` from the input width.

    What is new relative to Keras: Keras has no diagonal complex recurrence
    and no scan-trained recurrent layer; this is one, with masks,
    ``initial_state``, ``go_backwards``, ``stateful`` and a step form.

    Compared with the paper's code (appendix A): the equations, the ring
    initialisation and the scales of ``B``, ``C`` and ``D`` are its own, and
    ``gamma_log`` is, as there, a trained weight initialised from
    ``lambda`` (not recomputed from ``lambda`` at each call). It differs in
    the default ring (the paper's long-range setting rather than its code's
    ``[0, 1)``, ``2 pi``), in a dense ``D`` when the widths differ (above),
    in carrying the complex state as ``(Re, Im)`` pairs (``keras.ops`` has
    little complex support), and in running the recurrence in float32 under
    mixed precision.

    Args:
        units: output width ``H_out``.
        state_units: number of complex state units ``N`` (default ``units``).
        r_min, r_max: radii of the ring that ``|lambda|`` is drawn from,
            ``0 <= r_min < r_max < 1`` (default 0.9 and 0.999, the paper's
            long-range setting; its code's general default is ``[0, 1)``).
        max_phase: the phase of ``lambda`` is drawn from ``[0, max_phase]``,
            ``0 < max_phase <= 2 pi`` (default ``pi / 10``, the paper's
            long-range setting).
        **kwargs: ``return_sequences``, ``return_state``, ``go_backwards``,
            ``stateful`` and the ``keras.layers.Layer`` arguments, as in
            ``keras_seqmodels.linear_rnn.LinearRecurrent``.

    Call arguments:
        sequences: float tensor ``(batch, time, features)``.
        initial_state: optional list ``[x_real, x_imag]``, each
            ``(batch, state_units)``.
        mask: optional boolean ``(batch, time)``; masked steps keep the state.
        training: unused.

    Weights: ``nu_log``, ``theta_log``, ``gamma_log`` ``(N,)``; ``b_real``,
    ``b_imag`` ``(H_in, N)`` (``B`` transposed, initialised N(0, 1 / (2
    H_in)) each, as the paper); ``c_real``, ``c_imag`` ``(N, H_out)``
    (``C`` transposed, N(0, 1 / N)); ``d``.

    Example:

    >>> import numpy as np, keras_seqmodels as ks
    >>> layer = ks.linear_rnn.LRU(16, state_units=32, return_sequences=True)
    >>> layer(np.random.rand(2, 10, 16).astype("float32")).shape
    (2, 10, 16)

    Reference:
        Orvieto, Smith, Gu, Fernando, Gulcehre, Pascanu & De, "Resurrecting
        Recurrent Neural Networks for Long Sequences", ICML 2023
        (arXiv:2303.06349), section 3 and appendix A.
    """

    complex_state = True

    def __init__(
        self, units, state_units=None, r_min=0.9, r_max=0.999, max_phase=math.pi / 10, **kwargs
    ):
        super().__init__(**kwargs)
        name = type(self).__name__
        self.units = validation.check_positive_int(name, "units", units)
        if state_units is None:
            state_units = self.units
        self.state_units = validation.check_positive_int(name, "state_units", state_units)
        # A width, bounded as `units` is (a crafted config cannot allocate without limit).
        bounds.check_size(name, "state_units", self.state_units, bounds.WIDTH, "widths")
        for arg, value in (("r_min", r_min), ("r_max", r_max), ("max_phase", max_phase)):
            if not validation.is_real(value) or not math.isfinite(value):
                raise ValueError(
                    f"{name}: `{arg}` must be a finite number. Received: {arg}={value!r}"
                )
        if not 0.0 <= r_min < r_max < 1.0:
            raise ValueError(
                f"{name}: the ring radii must satisfy 0 <= r_min < r_max < 1. "
                f"Received: r_min={r_min!r}, r_max={r_max!r}"
            )
        if not 0.0 < max_phase <= 2 * math.pi:
            raise ValueError(
                f"{name}: `max_phase` must be in (0, 2 pi]. Received: max_phase={max_phase!r}"
            )
        self.r_min, self.r_max, self.max_phase = float(r_min), float(r_max), float(max_phase)

    def build(self, sequences_shape, initial_state_shape=None):
        self._check_sequences_shape(sequences_shape)
        h_in, n, h_out = sequences_shape[-1], self.state_units, self.units
        self.nu_log = self.add_weight(
            shape=(n,), initializer=ring_nu_log(self.r_min, self.r_max), name="nu_log"
        )
        self.theta_log = self.add_weight(
            shape=(n,), initializer=ring_theta_log(self.max_phase), name="theta_log"
        )
        nu_log = ops.convert_to_tensor(self.nu_log.value)

        def gamma_init(shape, dtype=None):
            # log sqrt(1 - |lambda|^2), |lambda|^2 = exp(-2 exp(nu_log)).
            return ops.cast(0.5 * ops.log(-ops.expm1(-2.0 * ops.exp(nu_log))), dtype)

        self.gamma_log = self.add_weight(shape=(n,), initializer=gamma_init, name="gamma_log")
        b_init = keras.initializers.RandomNormal(stddev=1.0 / math.sqrt(2 * h_in))
        self.b_real = self.add_weight(shape=(h_in, n), initializer=b_init, name="b_real")
        self.b_imag = self.add_weight(shape=(h_in, n), initializer=b_init, name="b_imag")
        c_init = keras.initializers.RandomNormal(stddev=1.0 / math.sqrt(n))
        self.c_real = self.add_weight(shape=(n, h_out), initializer=c_init, name="c_real")
        self.c_imag = self.add_weight(shape=(n, h_out), initializer=c_init, name="c_imag")
        if h_in == h_out:
            d_shape, d_init = (h_out,), keras.initializers.RandomNormal(stddev=1.0)
        else:
            d_shape = (h_in, h_out)
            d_init = keras.initializers.RandomNormal(stddev=1.0 / math.sqrt(h_in))
        self.d = self.add_weight(shape=d_shape, initializer=d_init, name="d")
        super().build(sequences_shape)

    def scan_shape(self):
        return (self.state_units,)

    @property
    def output_size(self):
        return self.units

    def coefficients(self, sequences, extra_states, mask, training):
        dtype = sequences.dtype
        lam = lru_lambda(ops.cast(self.nu_log, dtype), ops.cast(self.theta_log, dtype))
        b = lru_inputs(
            sequences,
            ops.cast(self.b_real, dtype),
            ops.cast(self.b_imag, dtype),
            ops.cast(self.gamma_log, dtype),
        )
        a = tuple(ops.broadcast_to(c, ops.shape(b[0])) for c in lam)
        return a, b, sequences, []

    def readout(self, h, context, training):
        dtype = context.dtype
        h_real, h_imag = (ops.cast(c, dtype) for c in h)
        return lru_readout(
            h_real,
            h_imag,
            context,
            ops.cast(self.c_real, dtype),
            ops.cast(self.c_imag, dtype),
            ops.cast(self.d, dtype),
        )

    def get_config(self):
        config = {
            "units": self.units,
            "state_units": self.state_units,
            "r_min": self.r_min,
            "r_max": self.r_max,
            "max_phase": self.max_phase,
        }
        return {**super().get_config(), **config}
