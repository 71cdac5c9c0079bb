"""Single-gate recurrent unit."""

import keras

from keras_seqmodels.cells.recurrent_cell import RecurrentCell, unpack_single_state
from keras_seqmodels.cells.steps import gated_step


@keras.saving.register_keras_serializable(package="keras_seqmodels")
class GatedCell(RecurrentCell):
    """A recurrent unit with one gate that both forgets and writes.

    g = σ(U_g x + W_g s(t-1) + b_g),
    s(t) = (1 - g) ⊙ s(t-1) + g ⊙ f(W x + W' s(t-1) + b).

    The simplest gated RNN of Deep Learning section 10.10.2 (the update gate
    of the GRU without a reset gate; also the "minimal gated unit" family).
    Not in Keras.

    Args:
        units: positive integer.
        activation: f, default ``"tanh"``.
        recurrent_activation: the gate non-linearity, default ``"sigmoid"``.
        **kwargs: as in ``RecurrentCell``.

    Call arguments:
        inputs: ``(batch, features)``; states: ``[s]``; training.

    Returns:
        ``(s(t), [s(t)])``.

    Example:

    >>> import numpy as np, keras_seqmodels as ks
    >>> ks.layers.Recurrent(ks.cells.GatedCell(3))(np.ones((2, 4, 2), "float32")).shape
    (2, 3)

    Reference:
        Goodfellow, Bengio & Courville, Deep Learning, section 10.10.2;
        Zhou et al., "Minimal gated unit for recurrent neural networks", 2016.
    """

    num_blocks = 2

    def __init__(self, units, activation="tanh", recurrent_activation="sigmoid", **kwargs):
        super().__init__(units, activation=activation, **kwargs)
        self.recurrent_activation = keras.activations.get(recurrent_activation)

    def form(self):
        """``"gated"`` (``keras_seqmodels.cells.forms``)."""
        return "gated"

    def step(self, z, states, training=False):
        s = unpack_single_state(states)
        s_new = gated_step(
            z,
            s,
            self.recurrent_kernel,
            self.activation,
            self.recurrent_activation,
            s_dropped=self.drop_state(s, training),
        )
        return s_new, [s_new]

    def get_config(self):
        config = {"recurrent_activation": keras.activations.serialize(self.recurrent_activation)}
        return {**super().get_config(), **config}
