"""Recurrent cell with skip connections through time (delays 1 and d)."""

import keras

from keras_seqmodels.cells.design_steps import delayed_step
from keras_seqmodels.cells.recurrent_cell import RecurrentCell, unpack_single_state
from keras_seqmodels.utils import validation


@keras.saving.register_keras_serializable(package="keras_seqmodels")
class DelayedCell(RecurrentCell):
    """Elman cell plus a recurrent connection of delay d.

    h(t) = f(b + U x(t) + W h(t-1) + W_d h(t-d)).

    The direct connection from h(t-d) to h(t) shortens the path along which
    gradients travel back through time by a factor d, so they decay roughly
    d times more slowly (Lin et al. 1996). The state holds the last d hidden
    vectors, flattened newest first: ``[h(t-1), ..., h(t-d)]`` of size
    ``d * units`` (a flat vector, so the cell also runs inside
    ``keras.layers.RNN``). Not in Keras.

    Args:
        units: positive integer, width of h.
        delay: integer d >= 2, the length of the skip connection.
        delayed_initializer, delayed_regularizer, delayed_constraint: for
            ``W_d`` (``delayed_kernel``), default orthogonal init.
        activation: f, default ``"tanh"``.
        **kwargs: as in ``RecurrentCell``.

    Call arguments:
        inputs: ``(batch, features)``; states: ``[buffer]`` with buffer
        ``(batch, delay * units)``; training.

    Returns:
        ``(h(t), [buffer(t)])``; the output is h(t).

    Example:

    >>> import numpy as np, keras_seqmodels as ks
    >>> cell = ks.cells.DelayedCell(4, delay=3)
    >>> out, buf = ks.layers.Recurrent(cell, return_state=True)(np.ones((2, 5, 3), "float32"))
    >>> out.shape, buf.shape
    ((2, 4), (2, 12))

    Reference:
        Lin, Horne, Tino & Giles, "Learning long-term dependencies in NARX
        recurrent neural networks", 1996; Deep Learning, section 10.9.1.
    """

    num_blocks = 1

    def __init__(
        self,
        units,
        delay=2,
        activation="tanh",
        delayed_initializer="orthogonal",
        delayed_regularizer=None,
        delayed_constraint=None,
        **kwargs,
    ):
        super().__init__(units, activation=activation, **kwargs)
        validation.check_positive_int("DelayedCell", "delay", delay)
        if delay < 2:
            raise ValueError(
                "DelayedCell: `delay` must be an integer >= 2 (delay 1 is the "
                f"ordinary recurrence). Received: delay={delay!r}"
            )
        self.delay = delay
        self.delayed_initializer = keras.initializers.get(delayed_initializer)
        self.delayed_regularizer = keras.regularizers.get(delayed_regularizer)
        self.delayed_constraint = keras.constraints.get(delayed_constraint)

    @property
    def state_size(self):
        return self.delay * self.units

    def build(self, input_shape):
        super().build(input_shape)
        self.delayed_kernel = self.add_weight(
            shape=(self.units, self.units),
            name="delayed_kernel",
            initializer=self.delayed_initializer,
            regularizer=self.delayed_regularizer,
            constraint=self.delayed_constraint,
        )

    def get_recurrent_dropout_mask(self, step_input):
        # One mask of width `units`, shared by h(t-1) and h(t-d).
        return super().get_recurrent_dropout_mask(step_input[:, : self.units])

    def step(self, z, states, training=False):
        buffer = unpack_single_state(states)
        if training and self.recurrent_dropout > 0:
            mask = self.get_recurrent_dropout_mask(buffer)
            tiled = keras.ops.tile(mask, (1, self.delay))
            h, _ = delayed_step(
                z,
                buffer * tiled,
                self.recurrent_kernel,
                self.delayed_kernel,
                self.activation,
            )
            new_buffer = keras.ops.concatenate(
                [h, buffer[:, : (self.delay - 1) * self.units]], axis=-1
            )
        else:
            h, new_buffer = delayed_step(
                z, buffer, self.recurrent_kernel, self.delayed_kernel, self.activation
            )
        return h, [new_buffer]

    def get_config(self):
        config = {
            "delay": self.delay,
            "delayed_initializer": keras.initializers.serialize(self.delayed_initializer),
            "delayed_regularizer": keras.regularizers.serialize(self.delayed_regularizer),
            "delayed_constraint": keras.constraints.serialize(self.delayed_constraint),
        }
        return {**super().get_config(), **config}
