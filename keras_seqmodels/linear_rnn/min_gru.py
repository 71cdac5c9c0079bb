"""``MinGRU``: the minimal GRU of Feng et al. (2024), trained by a scan."""

import keras
from keras import ops

from keras_seqmodels.linear_rnn.base import LinearRecurrent
from keras_seqmodels.utils import validation

ACTIVATIONS = ("g", "linear")


def g(x):
    """The paper's positive candidate activation: ``x + 0.5`` for ``x >= 0``,
    ``sigmoid(x)`` below (continuous, ``g(0) = 0.5``, always > 0)."""
    return ops.where(x >= 0, x + 0.5, ops.sigmoid(x))


def candidate(x, activation):
    """The candidate state ``h~`` from its pre-activation."""
    return g(x) if activation == "g" else x


def min_gru_coefficients(k_z, k_h, activation="g"):
    """``(a, b)`` of ``h(t) = a(t) h(t-1) + b(t)`` for minGRU:
    ``a = 1 - z``, ``b = z h~``, ``z = sigmoid(k_z)``, ``h~ = g(k_h)``."""
    return ops.sigmoid(-k_z), ops.sigmoid(k_z) * candidate(k_h, activation)


class _Projected(LinearRecurrent):
    """Shared by ``MinGRU`` and ``MinLSTM``: one input projection into
    ``n_parts`` blocks of ``units``, the state is the output."""

    n_parts = 2

    def __init__(
        self, units, activation="g", use_bias=True, kernel_initializer="glorot_uniform",
        bias_initializer="zeros", **kwargs,
    ):  # fmt: skip
        super().__init__(**kwargs)
        name = type(self).__name__
        self.units = validation.check_positive_int(name, "units", units)
        self.activation = validation.check_choice(name, "activation", activation, ACTIVATIONS)
        self.use_bias = bool(use_bias)
        self.kernel_initializer = keras.initializers.get(kernel_initializer)
        self.bias_initializer = keras.initializers.get(bias_initializer)

    def build(self, sequences_shape, initial_state_shape=None):
        self._check_sequences_shape(sequences_shape)
        width = self.n_parts * self.units
        self.kernel = self.add_weight(
            shape=(sequences_shape[-1], width), initializer=self.kernel_initializer, name="kernel"
        )
        self.bias = None
        if self.use_bias:
            self.bias = self.add_weight(
                shape=(width,), initializer=self.bias_initializer, name="bias"
            )
        super().build(sequences_shape)

    def scan_shape(self):
        return (self.units,)

    @property
    def output_size(self):
        return self.units

    def project(self, sequences):
        """The input projection of every step, split into its blocks."""
        k = ops.matmul(sequences, ops.cast(self.kernel, sequences.dtype))
        if self.bias is not None:
            k = k + ops.cast(self.bias, k.dtype)
        return ops.split(k, self.n_parts, axis=-1)

    def readout(self, h, context, training):
        return h[0]

    def get_config(self):
        config = {
            "units": self.units,
            "activation": self.activation,
            "use_bias": self.use_bias,
            "kernel_initializer": keras.initializers.serialize(self.kernel_initializer),
            "bias_initializer": keras.initializers.serialize(self.bias_initializer),
        }
        return {**super().get_config(), **config}


@keras.saving.register_keras_serializable(package="keras_seqmodels")
class MinGRU(_Projected):
    """The minimal GRU (minGRU) of Feng et al. (2024), trained by a scan.

    For each step t, with gates computed from the input only:

        z(t) = sigmoid(W_z x(t) + b_z)
        h~(t) = g(W_h x(t) + b_h),  g(v) = v + 0.5 if v >= 0 else sigmoid(v)
        h(t) = (1 - z(t)) * h(t-1) + z(t) * h~(t)

    and the output is ``h(t)``. The state update is linear in ``h``, so the
    whole sequence runs as one input product and one linear scan
    (``keras_seqmodels.linear_rnn.linear_scan``); ``step`` runs one step at
    a time for streaming, with the same equations. ``g`` is the paper's
    positive activation (its log-space form needs ``h~ > 0``); the scan here
    runs in linear space, which computes the same recurrence without the
    log-space precision loss on long sequences (see
    ``keras_seqmodels.linear_rnn.scan``), so ``activation="linear"`` (``h~``
    without activation, the paper's non-log form) is offered too.

    Compared with the paper's code (Appendix B) and lucidrains'
    minGRU-pytorch: the default initial state is zeros, as both use without
    one; a given initial state is used as the state itself (the paper's
    code passes a given ``h_0`` through ``g``, so a carried state would
    change from one call to the next; here a stateful layer over chunks
    equals one call over the whole sequence). The projection has a bias
    (``use_bias``, the paper's ``Linear``; minGRU-pytorch has none) and no
    output projection (the layer outputs ``h``, as a GRU; add a Dense).

    Args:
        units: width of the state and the output.
        activation: ``"g"`` (default, the paper's) or ``"linear"``, the
            candidate's activation.
        use_bias: add biases to the input projection.
        kernel_initializer: initializer of the projection ``kernel``
            (``(features, 2 * units)``: ``[W_z | W_h]``).
        bias_initializer: initializer of ``bias`` (``2 * units``).
        **kwargs: ``return_sequences``, ``return_state``, ``go_backwards``,
            ``stateful`` and the ``keras.layers.Layer`` arguments, as in
            ``keras_seqmodels.linear_rnn.LinearRecurrent``.

    Call arguments:
        sequences: float tensor ``(batch, time, features)``.
        initial_state: optional list ``[h]``, ``(batch, units)``.
        mask: optional boolean ``(batch, time)``; masked steps keep the state.
        training: unused (no dropout).

    Example:

    >>> import numpy as np, keras_seqmodels as ks
    >>> layer = ks.linear_rnn.MinGRU(16, return_sequences=True)
    >>> layer(np.random.rand(2, 10, 8).astype("float32")).shape
    (2, 10, 16)

    Reference:
        Feng, Tung, Ahmed, Bengio & Hajimirsadeghi, "Were RNNs All We
        Needed?", 2024 (arXiv:2410.01201), section 3.2 and Appendix B.
    """

    n_parts = 2

    def coefficients(self, sequences, extra_states, mask, training):
        k_z, k_h = self.project(sequences)
        a, b = min_gru_coefficients(k_z, k_h, self.activation)
        return (a,), (b,), None, []
