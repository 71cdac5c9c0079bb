"""``MinLSTM``: the minimal LSTM of Feng et al. (2024), trained by a scan."""

import keras
from keras import ops

from keras_seqmodels.linear_rnn.min_gru import _Projected, candidate


def min_lstm_coefficients(k_f, k_i, k_h, activation="g"):
    """``(a, b)`` of ``h(t) = a(t) h(t-1) + b(t)`` for minLSTM: ``a = f'``,
    ``b = i' h~``, with the normalised gates ``f' = f / (f + i)``,
    ``i' = i / (f + i)``, ``f = sigmoid(k_f)``, ``i = sigmoid(k_i)``.

    ``f'`` is computed as ``sigmoid(-d)`` with ``d = log i - log f =
    softplus(-k_f) - softplus(-k_i)``: the same number, without dividing
    by ``f + i`` (which underflows when both gates are near 0)."""
    d = ops.softplus(-k_f) - ops.softplus(-k_i)
    return ops.sigmoid(-d), ops.sigmoid(d) * candidate(k_h, activation)


@keras.saving.register_keras_serializable(package="keras_seqmodels")
class MinLSTM(_Projected):
    """The minimal LSTM (minLSTM) of Feng et al. (2024), trained by a scan.

    For each step t, with gates computed from the input only:

        f(t) = sigmoid(W_f x(t) + b_f),  i(t) = sigmoid(W_i x(t) + b_i)
        f'(t) = f(t) / (f(t) + i(t)),  i'(t) = i(t) / (f(t) + i(t))
        h~(t) = g(W_h x(t) + b_h)
        h(t) = f'(t) * h(t-1) + i'(t) * h~(t)

    and the output is ``h(t)`` (the paper's time-independent form, whose
    normalised gates keep the state's scale). ``g``, the linear-space scan,
    the initial state and the projection as in ``MinGRU``; lucidrains'
    minLSTM passes a given initial state through ``g``, as the paper's
    code does, where this layer uses it as the state (see ``MinGRU``).

    Args:
        units: width of the state and the output.
        activation: ``"g"`` (default, the paper's) or ``"linear"``.
        use_bias: add biases to the input projection.
        kernel_initializer: initializer of the projection ``kernel``
            (``(features, 3 * units)``: ``[W_f | W_i | W_h]``).
        bias_initializer: initializer of ``bias`` (``3 * units``).
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
    >>> layer = ks.linear_rnn.MinLSTM(16)
    >>> layer(np.random.rand(2, 10, 8).astype("float32")).shape
    (2, 16)

    Reference:
        Feng, Tung, Ahmed, Bengio & Hajimirsadeghi, "Were RNNs All We
        Needed?", 2024 (arXiv:2410.01201), section 3.1 and Appendix B.
    """

    n_parts = 3

    def coefficients(self, sequences, extra_states, mask, training):
        k_f, k_i, k_h = self.project(sequences)
        a, b = min_lstm_coefficients(k_f, k_i, k_h, self.activation)
        return (a,), (b,), None, []
