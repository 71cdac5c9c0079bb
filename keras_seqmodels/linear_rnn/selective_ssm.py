"""``SelectiveSSM``: Mamba's selective state space layer (S6), trained by a scan."""

import math

import keras
from keras import ops

from keras_seqmodels.linear_rnn.base import LinearRecurrent
from keras_seqmodels.utils import bounds, validation


def selective_ssm_coefficients(u, dt_in, b_t, a_log, dt_kernel, dt_bias):
    """``(a, b)`` of the S6 recurrence over the ``(D, N)`` state.

    ``u`` ``(batch, time, D)``; ``dt_in`` ``(batch, time, R)`` and ``b_t``
    ``(batch, time, N)``: the input's projections. ``Delta = softplus(dt_in
    W_dt + b_dt)`` ``(batch, time, D)``, ``A = -exp(A_log)`` ``(D, N)``;
    ``a = exp(Delta A)`` and ``b = (Delta u) B`` (outer product over D x N),
    the zero-order hold of A and the Euler step of B, as Mamba's
    ``selective_scan_ref``.
    """
    delta = ops.softplus(ops.matmul(dt_in, dt_kernel) + dt_bias)
    a = ops.exp(ops.expand_dims(delta, -1) * -ops.exp(a_log))
    b = ops.expand_dims(delta * u, -1) * ops.expand_dims(b_t, -2)
    return a, b


def dt_bias_initializer(dt_min, dt_max, dt_init_floor):
    """Mamba's ``dt_bias``: ``softplus(dt_bias)`` log-uniform in ``[dt_min, dt_max]``
    (floored at ``dt_init_floor``)."""

    def init(shape, dtype=None):
        u = keras.random.uniform(shape, dtype="float32")
        dt = ops.exp(u * (math.log(dt_max) - math.log(dt_min)) + math.log(dt_min))
        dt = ops.maximum(dt, dt_init_floor)
        # softplus^-1(dt) = dt + log(1 - exp(-dt)) = dt + log(-expm1(-dt)).
        return ops.cast(dt + ops.log(-ops.expm1(-dt)), dtype or "float32")

    return init


def s4d_real_initializer(shape, dtype=None):
    """``A_log = log(1..N)`` on each of the D rows: the S4D-real init, ``A = -(1..N)``."""
    n = shape[-1]
    row = ops.log(ops.arange(1, n + 1, dtype="float32"))
    return ops.cast(ops.broadcast_to(row, shape), dtype or "float32")


@keras.saving.register_keras_serializable(package="keras_seqmodels")
class SelectiveSSM(LinearRecurrent):
    """Mamba's selective state space layer (S6), trained by a scan.

    For each step t, on ``D`` input channels with a state of ``N`` per
    channel (``h`` is ``(D, N)``), with ``Delta``, ``B`` and ``C`` computed
    from the input (the selection mechanism):

        [dt_in(t), B(t), C(t)] = x_proj(u(t))           (R, N, N)
        Delta(t) = softplus(dt_in(t) W_dt + b_dt)        (D,)
        A = -exp(A_log)                                  (D, N), diagonal per channel
        h(t) = exp(Delta(t) A) * h(t-1) + (Delta(t) u(t)) B(t)^T
        y(t) = h(t) C(t) + D_skip * u(t)                 (D,)

    Inputs and outputs have the same width ``D``. The whole sequence runs as
    one input product and one linear scan over the ``D x N`` state
    (``keras_seqmodels.linear_rnn.linear_scan``; time on axis 1, the
    ``(D, N)`` features elementwise); ``step`` runs one step at a time for
    streaming, with the same equations. Since ``A < 0`` and ``Delta > 0``,
    ``0 < a(t) < 1``: the scan cannot overflow.

    Initialisation as Mamba (``mamba_ssm.modules.mamba_simple.Mamba``):
    ``A_log = log(1..N)`` (S4D-real), ``b_dt`` such that ``softplus(b_dt)``
    is log-uniform in ``[dt_min, dt_max] = [1e-3, 1e-1]``, ``W_dt`` uniform
    in ``+-dt_rank^-0.5``, ``D_skip = 1``, ``x_proj`` as PyTorch's
    ``Linear`` (uniform in ``+-1/sqrt(D)``), no bias on ``x_proj``.

    What is new relative to Keras: Keras has no state space layer and no
    scan-trained recurrent layer; this is one, with masks,
    ``initial_state``, ``go_backwards``, ``stateful`` and a step form.

    Where it differs from the anchor (state-spaces/mamba): this is the S6
    layer alone (``selective_scan_ref`` with its ``x_proj`` and
    ``dt_proj``), not the whole Mamba block (input projection, causal
    convolution, SiLU, the ``z`` gate and the output projection are the
    model's); real ``A`` only (Mamba's default); the scan materialises the
    ``(batch, time, D, N)`` coefficients (Mamba's CUDA kernel keeps them in
    SRAM), so memory grows with ``time * D * N``; ``dt_rank="auto"`` is
    ``ceil(D / 16)`` with ``D`` this layer's width (Mamba's uses the model
    width before its expansion).

    Args:
        state_size: ``N``, the state per channel (default 16, Mamba's
            ``d_state``).
        dt_rank: rank of the ``Delta`` projection, a positive integer or
            ``"auto"`` (``ceil(D / 16)``).
        dt_min, dt_max: range of the initial ``Delta`` (``0 < dt_min <
            dt_max``).
        dt_init_floor: lower bound of the initial ``Delta``.
        dt_scale: scale of ``W_dt``'s initial range.
        **kwargs: ``return_sequences``, ``return_state``, ``go_backwards``,
            ``stateful`` and the ``keras.layers.Layer`` arguments, as in
            ``keras_seqmodels.linear_rnn.LinearRecurrent``.

    Call arguments:
        sequences: float tensor ``(batch, time, D)``.
        initial_state: optional list ``[h]``, ``(batch, D, state_size)``.
        mask: optional boolean ``(batch, time)``; masked steps keep the state.
        training: unused.

    Weights: ``x_proj_kernel`` ``(D, R + 2N)`` (``[dt_in | B | C]``),
    ``dt_kernel`` ``(R, D)``, ``dt_bias`` ``(D,)``, ``a_log`` ``(D, N)``,
    ``d_skip`` ``(D,)``.

    Example:

    >>> import numpy as np, keras_seqmodels as ks
    >>> layer = ks.linear_rnn.SelectiveSSM(state_size=4, return_state=True)
    >>> y, h = layer(np.random.rand(2, 10, 8).astype("float32"))
    >>> y.shape, h.shape
    ((2, 8), (2, 8, 4))

    Reference:
        Gu & Dao, "Mamba: Linear-Time Sequence Modeling with Selective State
        Spaces", 2023 (arXiv:2312.00752), section 3.2 and algorithm 2.
    """

    def __init__(
        self, state_size=16, dt_rank="auto", dt_min=1e-3, dt_max=1e-1, dt_init_floor=1e-4,
        dt_scale=1.0, **kwargs,
    ):  # fmt: skip
        super().__init__(**kwargs)
        name = type(self).__name__
        self.state_size = validation.check_positive_int(name, "state_size", state_size)
        if dt_rank != "auto":
            if not validation.is_int(dt_rank) or dt_rank <= 0:
                raise ValueError(
                    f'{name}: `dt_rank` must be a positive integer or "auto". '
                    f"Received: dt_rank={dt_rank!r}"
                )
            dt_rank = validation.check_positive_int(name, "dt_rank", dt_rank)
            bounds.check_size(name, "dt_rank", dt_rank, bounds.WIDTH, "widths")
        self.dt_rank = dt_rank
        self.dt_min = validation.check_positive_float(name, "dt_min", dt_min)
        self.dt_max = validation.check_positive_float(name, "dt_max", dt_max)
        if not self.dt_min < self.dt_max:
            raise ValueError(
                f"{name}: `dt_min` must be less than `dt_max`. "
                f"Received: dt_min={dt_min!r}, dt_max={dt_max!r}"
            )
        self.dt_init_floor = validation.check_positive_float(name, "dt_init_floor", dt_init_floor)
        self.dt_scale = validation.check_positive_float(name, "dt_scale", dt_scale)
        self._channels = None

    def _rank(self, channels):
        return math.ceil(channels / 16) if self.dt_rank == "auto" else self.dt_rank

    def build(self, sequences_shape, initial_state_shape=None):
        self._check_sequences_shape(sequences_shape)
        d, n = sequences_shape[-1], self.state_size
        r = self._rank(d)
        self._channels = d
        limit = 1.0 / math.sqrt(d)
        self.x_proj_kernel = self.add_weight(
            shape=(d, r + 2 * n),
            initializer=keras.initializers.RandomUniform(-limit, limit),
            name="x_proj_kernel",
        )
        dt_limit = self.dt_scale / math.sqrt(r)
        self.dt_kernel = self.add_weight(
            shape=(r, d),
            initializer=keras.initializers.RandomUniform(-dt_limit, dt_limit),
            name="dt_kernel",
        )
        self.dt_bias = self.add_weight(
            shape=(d,),
            initializer=dt_bias_initializer(self.dt_min, self.dt_max, self.dt_init_floor),
            name="dt_bias",
        )
        self.a_log = self.add_weight(shape=(d, n), initializer=s4d_real_initializer, name="a_log")
        self.d_skip = self.add_weight(shape=(d,), initializer="ones", name="d_skip")
        super().build(sequences_shape)

    def scan_shape(self):
        return (self._channels, self.state_size)

    @property
    def output_size(self):
        return self._channels

    def coefficients(self, sequences, extra_states, mask, training):
        dtype = sequences.dtype
        r, n = self._rank(self._channels), self.state_size
        proj = ops.matmul(sequences, ops.cast(self.x_proj_kernel, dtype))
        dt_in, b_t, c_t = proj[..., :r], proj[..., r : r + n], proj[..., r + n :]
        a, b = selective_ssm_coefficients(
            sequences,
            dt_in,
            b_t,
            ops.cast(self.a_log, dtype),
            ops.cast(self.dt_kernel, dtype),
            ops.cast(self.dt_bias, dtype),
        )
        return (a,), (b,), (sequences, c_t), []

    def readout(self, h, context, training):
        u, c_t = context
        state = ops.cast(h[0], u.dtype)
        y = ops.sum(state * ops.expand_dims(c_t, -2), axis=-1)
        return y + u * ops.cast(self.d_skip, u.dtype)

    def get_config(self):
        config = {
            "state_size": self.state_size,
            "dt_rank": self.dt_rank,
            "dt_min": self.dt_min,
            "dt_max": self.dt_max,
            "dt_init_floor": self.dt_init_floor,
            "dt_scale": self.dt_scale,
        }
        return {**super().get_config(), **config}
