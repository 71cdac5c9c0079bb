"""Long short-term memory cell, with optional peephole connections."""

import keras
from keras import ops

from keras_seqmodels.cells.recurrent_cell import RecurrentCell
from keras_seqmodels.cells.steps import lstm_step


@keras.saving.register_keras_serializable(package="keras_seqmodels")
class LSTMCell(RecurrentCell):
    """LSTM cell: gated self-loop on the cell state, forget bias 1.

    i = σ(U_i x + W_i h + p_i ⊙ c + b_i),  f = σ(U_f x + W_f h + p_f ⊙ c + b_f),
    c(t) = f ⊙ c(t-1) + i ⊙ tanh(U_g x + W_g h + b_g),
    o = σ(U_o x + W_o h + p_o ⊙ c(t) + b_o),  h(t) = o ⊙ tanh(c(t)).
    The peephole terms p ⊙ c are present only with ``use_peepholes=True``.
    Gate order in the kernels is ``[i, f, g, o]`` as in Keras.

    New relative to ``keras.layers.LSTMCell``: peephole connections and the
    split input projection used by the ``Recurrent`` runner.

    Args:
        units: positive integer, width of h and c.
        activation: the cell non-linearity, default ``"tanh"``.
        recurrent_activation: the gate non-linearity, default ``"sigmoid"``.
        unit_forget_bias: if True (default), the forget-gate bias starts at 1.
        use_peepholes: add the cell state as an input to the three gates.
        peephole_initializer: initializer of the ``(3, units)`` peephole
            weights, default ``"zeros"``.
        **kwargs: as in ``RecurrentCell``.

    Call arguments:
        inputs: ``(batch, features)``; states: ``[h, c]``; training.

    Returns:
        ``(h(t), [h(t), c(t)])``.

    Example:

    >>> import numpy as np, keras_seqmodels as ks
    >>> layer = ks.layers.Recurrent(ks.cells.LSTMCell(4, use_peepholes=True))
    >>> layer(np.ones((2, 6, 3), "float32")).shape
    (2, 4)

    Reference:
        Hochreiter & Schmidhuber 1997; Gers, Schmidhuber & Cummins 2000
        (forget gate); Gers & Schmidhuber 2000 (peepholes); Jozefowicz et al.
        2015 (forget bias 1); Deep Learning, section 10.10.1.
    """

    num_blocks = 4

    def __init__(
        self,
        units,
        activation="tanh",
        recurrent_activation="sigmoid",
        unit_forget_bias=True,
        use_peepholes=False,
        peephole_initializer="zeros",
        **kwargs,
    ):
        super().__init__(units, activation=activation, **kwargs)
        self.recurrent_activation = keras.activations.get(recurrent_activation)
        self.unit_forget_bias = bool(unit_forget_bias)
        self.use_peepholes = bool(use_peepholes)
        self.peephole_initializer = keras.initializers.get(peephole_initializer)

    @property
    def state_size(self):
        return [self.units, self.units]

    def _bias_initializer(self):
        if not self.unit_forget_bias:
            return self.bias_initializer
        base = self.bias_initializer
        units = self.units

        def initializer(shape, dtype=None):
            return ops.concatenate(
                [
                    base((units,), dtype=dtype),
                    ops.ones((units,), dtype=dtype),
                    base((2 * units,), dtype=dtype),
                ]
            )

        return initializer

    def build(self, input_shape):
        super().build(input_shape)
        if self.use_peepholes:
            self.peephole_kernel = self.add_weight(
                shape=(3, self.units),
                name="peephole_kernel",
                initializer=self.peephole_initializer,
            )
        else:
            self.peephole_kernel = None

    def form(self):
        """``"lstm"``, with or without peepholes (``keras_seqmodels.cells.forms``)."""
        return "lstm"

    def step(self, z, states, training=False):
        h, c = states[0], states[1]
        h, c = lstm_step(
            z,
            self.drop_state(h, training),
            c,
            self.recurrent_kernel,
            self.activation,
            self.recurrent_activation,
            self.peephole_kernel,
        )
        return h, [h, c]

    def get_config(self):
        config = {
            "recurrent_activation": keras.activations.serialize(self.recurrent_activation),
            "unit_forget_bias": self.unit_forget_bias,
            "use_peepholes": self.use_peepholes,
            "peephole_initializer": keras.initializers.serialize(self.peephole_initializer),
        }
        return {**super().get_config(), **config}
