"""Gated recurrent unit cell, in both the reset-after and the reset-before form."""

import keras
import numpy as np

from keras_seqmodels.cells.recurrent_cell import RecurrentCell, unpack_single_state
from keras_seqmodels.cells.steps import gru_reset_after_step, gru_step
from keras_seqmodels.utils import bounds


@keras.saving.register_keras_serializable(package="keras_seqmodels")
class GRUCell(RecurrentCell):
    """GRU cell, with the reset gate after (default) or before the recurrent matrix.

    u = σ(x W_u + h U_u + b_u),  r = σ(x W_r + h U_r + b_r),
    reset after (``reset_after=True``, default):
        h̃ = tanh(x W_h + b_h + r ⊙ (h U_h + rb_h)),
    reset before (``reset_after=False``):
        h̃ = tanh(x W_h + (r ⊙ h) U_h + b_h),
    h(t) = u ⊙ h(t-1) + (1 - u) ⊙ h̃.

    Note the convention: u is the share of the old state that is kept (as in
    Keras and PyTorch). The reset-before form is the original one (Cho et al.
    2014; Deep Learning eq. 10.45-10.47); the reset-after form is the one of
    ``keras.layers.GRU`` (its default), cuDNN and ``torch.nn.GRU``: all three
    recurrent products are one matrix product, which is faster, and the
    candidate's recurrent bias ``rb_h`` sits inside the reset gate.

    Weights, gate order ``[u, r, h]`` (Keras's ``[z, r, h]``): ``kernel``
    ``(features, 3 * units)``, ``recurrent_kernel`` ``(units, 3 * units)``,
    ``bias`` ``(2, 3 * units)`` with the input bias in row 0 and the
    recurrent bias ``rb`` in row 1 (reset after) or ``(3 * units,)`` (reset
    before), exactly as ``keras.layers.GRUCell`` with the same
    ``reset_after``, so ``set_weights`` between the two gives the same
    outputs. ``keras_seqmodels.cells.weights_from_torch`` converts
    ``torch.nn.GRU`` weights (reset after).

    New relative to ``keras.layers.GRUCell``: the split input projection used
    by the ``Recurrent`` runner (see ``RecurrentCell``). Files saved before
    this cell had ``reset_after`` (config without the key) load in the
    reset-before form they were trained with.

    Args:
        units: positive integer.
        activation: candidate non-linearity, default ``"tanh"``.
        recurrent_activation: gate non-linearity, default ``"sigmoid"``.
        reset_after: apply the reset gate after the recurrent matrix product
            (default True, as Keras), or before it (False).
        **kwargs: as in ``RecurrentCell``.

    Call arguments:
        inputs: ``(batch, features)``; states: ``[h]``; training.

    Returns:
        ``(h(t), [h(t)])``.

    Example:

    >>> import numpy as np, keras_seqmodels as ks
    >>> ks.layers.Recurrent(ks.cells.GRUCell(5))(np.ones((1, 4, 2), "float32")).shape
    (1, 5)
    >>> cell = ks.cells.GRUCell(5, reset_after=False)  # the book's form
    >>> cell.build((None, 2)); cell.bias.shape
    (15,)

    Reference:
        Cho et al., "Learning phrase representations using RNN encoder-decoder
        for statistical machine translation", EMNLP 2014; Chung et al.,
        "Empirical evaluation of gated recurrent neural networks on sequence
        modeling", 2014 (footnote on the reset-after variant).
    """

    num_blocks = 3

    def __init__(
        self,
        units,
        activation="tanh",
        recurrent_activation="sigmoid",
        reset_after=True,
        **kwargs,
    ):
        super().__init__(units, activation=activation, **kwargs)
        self.recurrent_activation = keras.activations.get(recurrent_activation)
        if not isinstance(reset_after, (bool, np.bool_)):
            raise ValueError(
                f"{type(self).__name__}: `reset_after` must be True or False. "
                f"Received: reset_after={reset_after!r}"
            )
        self.reset_after = bool(reset_after)

    def _bias_shape(self):
        if self.reset_after:
            return (2, 3 * self.units)
        return super()._bias_shape()

    @property
    def recurrent_bias(self):
        """``rb`` of the reset-after form, ``(3 * units,)``; else ``None``."""
        if self.reset_after and self.bias is not None:
            return self.bias[1]
        return None

    def project_inputs(self, inputs):
        if self.reset_after and self.bias is not None:
            return keras.ops.matmul(inputs, self.kernel) + self.bias[0]
        return super().project_inputs(inputs)

    def form(self):
        """``"gru_after"`` or ``"gru"`` (reset before) (``keras_seqmodels.cells.forms``)."""
        return "gru_after" if self.reset_after else "gru"

    def step(self, z, states, training=False):
        h = unpack_single_state(states)
        h_dropped = self.drop_state(h, training)
        if self.reset_after:
            h_new = gru_reset_after_step(
                z,
                h,
                self.recurrent_kernel,
                self.recurrent_bias,
                self.activation,
                self.recurrent_activation,
                h_dropped=h_dropped,
            )
        else:
            h_new = gru_step(
                z,
                h,
                self.recurrent_kernel,
                self.activation,
                self.recurrent_activation,
                h_dropped=h_dropped,
            )
        return h_new, [h_new]

    def get_config(self):
        config = {
            "recurrent_activation": keras.activations.serialize(self.recurrent_activation),
            "reset_after": self.reset_after,
        }
        return {**super().get_config(), **config}

    @classmethod
    def from_config(cls, config):
        bounds.check_config(cls.__name__, config)
        # Configs written before ``reset_after`` existed are reset-before
        # GRUs; a missing key must not pick up the new default.
        config = dict(config)
        config.setdefault("reset_after", False)
        return super().from_config(config)
