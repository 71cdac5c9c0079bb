"""An echo state network running closed loop on its own output."""

import keras
import numpy as np
from keras import ops

from keras_seqmodels.cells.echo_state_cell import EchoStateCell


@keras.saving.register_keras_serializable(package="keras_seqmodels")
class EchoStateGenerator(keras.layers.Layer):
    """Echo state network with output feedback, run closed loop.

    h(t) = (1 - a) h(t-1) + a tanh(b + U x(t) + R y(t-1) + W h(t-1)),
    y(t) = V [h(t), x(t)] + c,

    the reservoir of an ``EchoStateCell`` with ``feedback_size = m`` whose
    fed-back input is the network's own previous output y(t-1) instead of
    the teacher signal. V and c are the readout fitted on teacher-forced
    states (``fit_readout``, then ``set_readout``); x(t) are the external
    inputs (a constant bias input in Jaeger & Haas's Mackey-Glass predictor;
    zero columns when there are none). The readout also sees x(t) when
    ``readout_inputs=True`` (the default), as in the paper. Start it from
    the state a teacher-forced run ended in, ``initial_state=[h, y]`` with y
    the last true value, and run it with ``keras_seqmodels.layers.Recurrent``
    over the future external inputs.

    New relative to Keras: a generator cell whose state carries its own
    last output; Keras has no reservoir or output-feedback cell.

    Args:
        reservoir: an ``EchoStateCell`` with ``feedback_size > 0`` (or its
            config dict).
        readout_inputs: whether the readout also sees x(t).
        **kwargs: base ``Layer`` arguments (``name``, ``dtype``).

    Call arguments:
        inputs: x(t), ``(batch, n)``; states: ``[h(t-1), y(t-1)]``.

    Returns:
        ``(y(t), [h(t), y(t)])``.

    Example:

    >>> import numpy as np, keras_seqmodels as ks
    >>> esn = ks.cells.EchoStateCell(20, feedback_size=1, seed=0, dtype="float64")
    >>> gen = ks.cells.EchoStateGenerator(esn, dtype="float64")
    >>> gen.build((None, 1))
    >>> gen.set_readout(np.full((21, 1), 0.01), np.zeros(1))
    >>> y = ks.layers.Recurrent(gen, return_sequences=True, dtype="float64")(
    ...     np.full((2, 5, 1), 0.2), initial_state=[np.zeros((2, 20)), np.ones((2, 1))])
    >>> y.shape
    TensorShape([2, 5, 1])

    Reference:
        Jaeger & Haas, "Harnessing nonlinearity: predicting chaotic systems
        and saving energy in wireless communication", Science 2004.
    """

    def __init__(self, reservoir, readout_inputs=True, **kwargs):
        super().__init__(**kwargs)
        if isinstance(reservoir, dict):
            reservoir = keras.saving.deserialize_keras_object(reservoir)
        if not isinstance(reservoir, EchoStateCell) or reservoir.feedback_size < 1:
            raise ValueError(
                "EchoStateGenerator: `reservoir` must be an EchoStateCell with "
                f"feedback_size >= 1. Received: reservoir={reservoir!r}"
            )
        self.reservoir = reservoir
        self.readout_inputs = bool(readout_inputs)

    @property
    def state_size(self):
        return [self.reservoir.units, self.reservoir.feedback_size]

    @property
    def output_size(self):
        return self.reservoir.feedback_size

    def build(self, input_shape):
        if input_shape is None or len(input_shape) != 2 or input_shape[-1] is None:
            raise ValueError(
                "EchoStateGenerator: the step input must be (batch, n) with n "
                f"known (use n = 0 columns for no external input). Received shape {input_shape}"
            )
        n, m = int(input_shape[-1]), self.reservoir.feedback_size
        if not self.reservoir.built:
            self.reservoir.build((input_shape[0], n + m))
        width = self.reservoir.units + (n if self.readout_inputs else 0)
        self.readout_kernel = self.add_weight(
            shape=(width, m), name="readout_kernel", initializer="zeros", trainable=False
        )
        self.readout_bias = self.add_weight(
            shape=(m,), name="readout_bias", initializer="zeros", trainable=False
        )

    def set_readout(self, kernel, bias):
        """Set V and c, e.g. to ``fit_readout``'s solution on ``[h, x]``."""
        kernel = np.asarray(ops.convert_to_numpy(kernel))
        bias = np.asarray(ops.convert_to_numpy(bias)).reshape(-1)
        if kernel.shape != tuple(self.readout_kernel.shape) or bias.shape != tuple(
            self.readout_bias.shape
        ):
            raise ValueError(
                "EchoStateGenerator: the readout must be kernel "
                f"{tuple(self.readout_kernel.shape)} and bias {tuple(self.readout_bias.shape)} "
                f"(features [h, x]). Received {kernel.shape} and {bias.shape}"
            )
        self.readout_kernel.assign(kernel.astype(self.readout_kernel.dtype))
        self.readout_bias.assign(bias.astype(self.readout_bias.dtype))

    def call(self, inputs, states, training=False):
        h, y = states[0], states[1]
        z = self.reservoir.project_inputs(ops.concatenate([inputs, y], axis=-1))
        h, _ = self.reservoir.step(z, [h], training=training)
        features = ops.concatenate([h, inputs], axis=-1) if self.readout_inputs else h
        y = ops.matmul(features, self.readout_kernel) + self.readout_bias
        return y, [h, y]

    def get_initial_state(self, batch_size=None):
        return [ops.zeros((batch_size, size), dtype=self.compute_dtype) for size in self.state_size]

    def get_config(self):
        return {
            **super().get_config(),
            "reservoir": keras.saving.serialize_keras_object(self.reservoir),
            "readout_inputs": self.readout_inputs,
        }
