"""Elman (hidden-to-hidden) recurrent cell."""

import keras

from keras_seqmodels.cells.recurrent_cell import RecurrentCell, unpack_single_state
from keras_seqmodels.cells.steps import elman_step


@keras.saving.register_keras_serializable(package="keras_seqmodels")
class ElmanCell(RecurrentCell):
    """Elman cell: the recurrence goes from hidden units to hidden units.

    a(t) = b + W h(t-1) + U x(t),  h(t) = f(a(t))  (f = tanh by default).

    Equivalent in function to ``keras.layers.SimpleRNNCell``; what it adds is
    the split input projection (see ``RecurrentCell``) so that the package's
    ``Recurrent`` runner computes ``U x(t) + b`` for all steps at once.

    Args:
        units: positive integer, width of h.
        activation: f, default ``"tanh"``; any Keras activation.
        **kwargs: initializers, regularizers, constraints, ``dropout``,
            ``recurrent_dropout`` and ``seed`` as in ``RecurrentCell``.

    Call arguments:
        inputs: ``(batch, features)`` float tensor, one time step.
        states: ``[h]`` with h of shape ``(batch, units)``.
        training: whether dropout is active.

    Returns:
        ``(h(t), [h(t)])``.

    Example:

    >>> import numpy as np, keras_seqmodels as ks
    >>> layer = ks.layers.Recurrent(ks.cells.ElmanCell(8), return_sequences=True)
    >>> layer(np.zeros((2, 5, 3), "float32")).shape
    (2, 5, 8)

    Reference:
        Elman, "Finding structure in time", Cognitive Science 1990;
        Goodfellow, Bengio & Courville, Deep Learning, section 10.2.
    """

    num_blocks = 1

    def form(self):
        """``"elman"`` (``keras_seqmodels.cells.forms``)."""
        return "elman"

    def step(self, z, states, training=False):
        h = unpack_single_state(states)
        h = elman_step(z, self.drop_state(h, training), self.recurrent_kernel, self.activation)
        return h, [h]
