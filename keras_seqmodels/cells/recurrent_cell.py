"""The base class of the package's projected recurrent cells."""

import keras
from keras import ops

from keras_seqmodels._compat import DropoutRNNCell
from keras_seqmodels.utils import bounds, validation


@keras.saving.register_keras_serializable(package="keras_seqmodels")
class RecurrentCell(keras.layers.Layer, DropoutRNNCell):
    """Base class for cells whose input enters through one affine projection.

    A subclass sets ``num_blocks`` (how many ``units``-wide blocks the input
    projection has, e.g. 4 for the LSTM's gates) and implements
    ``step(z, states, training)``, where ``z = x W + b`` is the projected input
    of one time step. The split is what is new relative to Keras's cells: the
    package's ``Recurrent`` runner calls ``project_inputs`` once for the whole
    sequence (one large matrix product) and runs only ``step`` inside the time
    loop, while ``call`` keeps the plain Keras cell contract so the same cell
    also runs inside ``keras.layers.RNN``.

    Args:
        units: positive integer, width of the hidden state.
        activation: the state non-linearity (default ``"tanh"``).
        use_bias: whether the input projection has a bias.
        kernel_initializer, recurrent_initializer, bias_initializer:
            initializers of the input kernel, the recurrent kernel and the bias.
        kernel_regularizer, recurrent_regularizer, bias_regularizer:
            optional regularizers of the same weights.
        kernel_constraint, recurrent_constraint, bias_constraint:
            optional constraints of the same weights.
        dropout: float in [0, 1), dropout on the inputs (one mask per
            sequence, shared over time steps).
        recurrent_dropout: float in [0, 1), dropout on the previous state
            before the recurrent matrix (one mask per sequence).
        seed: random seed for the dropout masks.

    Example (a new cell: h(t) = tanh(x W + b + h(t-1) U) / 2 + h(t-1) / 2):

    >>> import numpy as np, keras_seqmodels as ks
    >>> from keras import ops
    >>> class HalfLeakyCell(ks.cells.RecurrentCell):
    ...     num_blocks = 1
    ...     def step(self, z, states, training=False):
    ...         h = states[0]
    ...         new = 0.5 * h + 0.5 * ops.tanh(z + ops.matmul(h, self.recurrent_kernel))
    ...         return new, [new]
    >>> layer = ks.layers.Recurrent(HalfLeakyCell(4))
    >>> tuple(layer(np.ones((2, 3, 5), "float32")).shape)
    (2, 4)
    """

    num_blocks = 1

    def __init__(
        self,
        units,
        activation="tanh",
        use_bias=True,
        kernel_initializer="glorot_uniform",
        recurrent_initializer="orthogonal",
        bias_initializer="zeros",
        kernel_regularizer=None,
        recurrent_regularizer=None,
        bias_regularizer=None,
        kernel_constraint=None,
        recurrent_constraint=None,
        bias_constraint=None,
        dropout=0.0,
        recurrent_dropout=0.0,
        seed=None,
        **kwargs,
    ):
        super().__init__(**kwargs)
        name = type(self).__name__
        self.units = validation.check_positive_int(name, "units", units)
        self.activation = keras.activations.get(activation)
        self.use_bias = bool(use_bias)
        self.kernel_initializer = keras.initializers.get(kernel_initializer)
        self.recurrent_initializer = keras.initializers.get(recurrent_initializer)
        self.bias_initializer = keras.initializers.get(bias_initializer)
        self.kernel_regularizer = keras.regularizers.get(kernel_regularizer)
        self.recurrent_regularizer = keras.regularizers.get(recurrent_regularizer)
        self.bias_regularizer = keras.regularizers.get(bias_regularizer)
        self.kernel_constraint = keras.constraints.get(kernel_constraint)
        self.recurrent_constraint = keras.constraints.get(recurrent_constraint)
        self.bias_constraint = keras.constraints.get(bias_constraint)
        self.dropout = validation.check_rate(name, "dropout", dropout)
        self.recurrent_dropout = validation.check_rate(
            name, "recurrent_dropout", recurrent_dropout
        )
        self.seed = seed
        self.seed_generator = keras.random.SeedGenerator(seed=seed)

    @property
    def state_size(self):
        return self.units

    @property
    def output_size(self):
        return self.units

    def _bias_initializer(self):
        return self.bias_initializer

    def _bias_shape(self):
        return (self.num_blocks * self.units,)

    def build(self, input_shape):
        name = type(self).__name__
        if input_shape is None or len(input_shape) != 2:
            raise ValueError(
                f"{name}: a cell's step input must have rank 2, (batch, "
                f"features). Received shape {input_shape}"
            )
        validation.check_last_dim_known(name, "inputs", input_shape)
        width = self.num_blocks * self.units
        self.kernel = self.add_weight(
            shape=(input_shape[-1], width),
            name="kernel",
            initializer=self.kernel_initializer,
            regularizer=self.kernel_regularizer,
            constraint=self.kernel_constraint,
        )
        self.recurrent_kernel = self.add_weight(
            shape=(self.units, width),
            name="recurrent_kernel",
            initializer=self.recurrent_initializer,
            regularizer=self.recurrent_regularizer,
            constraint=self.recurrent_constraint,
        )
        if self.use_bias:
            self.bias = self.add_weight(
                shape=self._bias_shape(),
                name="bias",
                initializer=self._bias_initializer(),
                regularizer=self.bias_regularizer,
                constraint=self.bias_constraint,
            )
        else:
            self.bias = None

    def project_inputs(self, inputs):
        """Input projection ``x W + b`` for inputs of any leading shape."""
        z = ops.matmul(inputs, self.kernel)
        if self.bias is not None:
            z = z + self.bias
        return z

    def drop_state(self, h, training):
        """Apply the (cached, per-sequence) recurrent dropout mask to ``h``."""
        if training and self.recurrent_dropout > 0:
            return h * self.get_recurrent_dropout_mask(h)
        return h

    def step(self, z, states, training=False):
        raise NotImplementedError(
            f"{type(self).__name__} must implement step(z, states, training)."
        )

    def call(self, inputs, states, training=False):
        validation.check_float_dtype(self.name, "inputs", inputs.dtype)
        if training and self.dropout > 0:
            inputs = inputs * self.get_dropout_mask(inputs)
        return self.step(self.project_inputs(inputs), states, training=training)

    def get_initial_state(self, batch_size=None):
        sizes = self.state_size
        sizes = list(sizes) if isinstance(sizes, (list, tuple)) else [sizes]
        return [
            ops.zeros((batch_size, size), dtype=self.compute_dtype)
            for size in sizes
        ]

    @classmethod
    def from_config(cls, config):
        bounds.check_config(cls.__name__, config)
        return super().from_config(config)

    def get_config(self):
        config = {
            "units": self.units,
            "activation": keras.activations.serialize(self.activation),
            "use_bias": self.use_bias,
            "kernel_initializer": keras.initializers.serialize(
                self.kernel_initializer
            ),
            "recurrent_initializer": keras.initializers.serialize(
                self.recurrent_initializer
            ),
            "bias_initializer": keras.initializers.serialize(self.bias_initializer),
            "kernel_regularizer": keras.regularizers.serialize(
                self.kernel_regularizer
            ),
            "recurrent_regularizer": keras.regularizers.serialize(
                self.recurrent_regularizer
            ),
            "bias_regularizer": keras.regularizers.serialize(self.bias_regularizer),
            "kernel_constraint": keras.constraints.serialize(self.kernel_constraint),
            "recurrent_constraint": keras.constraints.serialize(
                self.recurrent_constraint
            ),
            "bias_constraint": keras.constraints.serialize(self.bias_constraint),
            "dropout": self.dropout,
            "recurrent_dropout": self.recurrent_dropout,
            "seed": self.seed,
        }
        return {**super().get_config(), **config}


def unpack_single_state(states):
    """Cells with one state receive it as ``[h]`` from Keras's RNN."""
    if isinstance(states, (list, tuple)):
        return states[0]
    return states
