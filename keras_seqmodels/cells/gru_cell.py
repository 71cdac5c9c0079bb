"""Gated recurrent unit cell."""

import keras

from keras_seqmodels.cells.recurrent_cell import RecurrentCell, unpack_single_state
from keras_seqmodels.cells.steps import gru_step


@keras.saving.register_keras_serializable(package="keras_seqmodels")
class GRUCell(RecurrentCell):
    """GRU cell with the reset gate applied before the recurrent matrix.

    u = σ(U_u x + W_u h + b_u),  r = σ(U_r x + W_r h + b_r),
    h(t) = u ⊙ h(t-1) + (1 - u) ⊙ tanh(U_h x + W_h (r ⊙ h(t-1)) + b_h).

    This is the original formulation (Cho et al. 2014; Deep Learning eq.
    10.45-10.47), which Keras offers only as ``reset_after=False``. Note the
    convention: u is the share of the old state that is kept.

    Args:
        units: positive integer.
        activation: candidate non-linearity, default ``"tanh"``.
        recurrent_activation: gate non-linearity, default ``"sigmoid"``.
        **kwargs: as in ``RecurrentCell``.

    Call arguments:
        inputs: ``(batch, features)``; states: ``[h]``; training.

    Returns:
        ``(h(t), [h(t)])``.

    Example:

    >>> import numpy as np, keras_seqmodels as ks
    >>> ks.layers.Recurrent(ks.cells.GRUCell(5))(np.ones((1, 4, 2), "float32")).shape
    (1, 5)

    Reference:
        Cho et al., "Learning phrase representations using RNN encoder-decoder
        for statistical machine translation", EMNLP 2014.
    """

    num_blocks = 3

    def __init__(self, units, activation="tanh", recurrent_activation="sigmoid", **kwargs):
        super().__init__(units, activation=activation, **kwargs)
        self.recurrent_activation = keras.activations.get(recurrent_activation)

    def step(self, z, states, training=False):
        h = unpack_single_state(states)
        h_new = gru_step(
            z,
            h,
            self.recurrent_kernel,
            self.activation,
            self.recurrent_activation,
            h_dropped=self.drop_state(h, training),
        )
        return h_new, [h_new]

    def get_config(self):
        config = {"recurrent_activation": keras.activations.serialize(self.recurrent_activation)}
        return {**super().get_config(), **config}
