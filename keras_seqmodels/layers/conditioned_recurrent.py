"""An RNN conditioned on a fixed vector per sequence."""

import keras
from keras import ops

from keras_seqmodels.layers.recurrent import Recurrent
from keras_seqmodels.utils import bounds, serialization, validation

MODES = ("input", "initial_state", "both")


@keras.saving.register_keras_serializable(package="keras_seqmodels")
class ConditionedRecurrent(keras.layers.Layer):
    """Runs a cell over a sequence while conditioning it on a fixed vector c.

    - ``"input"``: c enters every step as an extra input through a learned
      matrix R, i.e. the cell sees b + U x(t) + R c: c R acts as a per-sequence
      bias. It is computed by feeding [x(t), c] to the cell, so R is the last
      ``condition`` rows of the cell's input ``kernel``.
    - ``"initial_state"``: the first state starts at h(0) = tanh(b_0 + c W_0)
      (the other states of the cell, e.g. an LSTM's memory or a clockwork
      counter, start at zero).
    - ``"both"``: both.

    With ``return_sequences=False`` this is also the sequence -> single output
    design (read a whole sequence, emit its last output); a sequence with no
    input of its own (generation from c alone, Deep Learning figure 10.9)
    passes an all-zeros or empty-feature x. New relative to Keras:
    ``keras.layers.RNN`` takes initial states but has no learned mapping
    from a conditioning vector.

    Args:
        cell: any cell of the package (or a Keras cell).
        conditioning: ``"input"``, ``"initial_state"`` or ``"both"``.
        return_sequences, return_state, go_backwards: as in ``Recurrent``.
        initial_state_initializer: kernel initializer of W_0.

    Call arguments:
        inputs: ``[x, c]`` with x ``(batch, time, features)`` and c
            ``(batch, condition)``.
        mask: optional ``(batch, time)`` mask of x.
        training: passed to the cell.

    Example:

    >>> import numpy as np, keras_seqmodels as ks
    >>> layer = ks.layers.ConditionedRecurrent(ks.cells.LSTMCell(8), "both",
    ...                                        return_sequences=True)
    >>> layer([np.ones((2, 5, 3), "float32"), np.ones((2, 4), "float32")]).shape
    (2, 5, 8)

    Reference:
        Deep Learning, section 10.2.4 (modeling sequences conditioned on
        context with RNNs).
    """

    def __init__(
        self,
        cell,
        conditioning="input",
        return_sequences=False,
        return_state=False,
        go_backwards=False,
        initial_state_initializer="glorot_uniform",
        **kwargs,
    ):
        super().__init__(**kwargs)
        validation.check_cell_instance(type(self).__name__, "cell", cell)
        validation.check_choice(self.name, "conditioning", conditioning, MODES)
        self.conditioning = conditioning
        self.cell = cell
        self.return_sequences = bool(return_sequences)
        self.return_state = bool(return_state)
        self.go_backwards = bool(go_backwards)
        self.initial_state_initializer = keras.initializers.get(initial_state_initializer)
        self.rnn = Recurrent(
            cell,
            return_sequences=return_sequences,
            return_state=return_state,
            go_backwards=go_backwards,
            dtype=self.dtype_policy,
            name="rnn",
        )
        self.supports_masking = True

    def _check(self, inputs_shape):
        if not isinstance(inputs_shape, (list, tuple)) or len(inputs_shape) != 2:
            raise ValueError(
                f"{self.name}: inputs must be [x, c]: a (batch, time, features) "
                "sequence and a (batch, condition) vector. "
                f"Received: {inputs_shape!r}"
            )
        x_shape, c_shape = inputs_shape
        validation.check_rank(self.name, "x", x_shape, 3, "(batch, time, features)")
        validation.check_rank(self.name, "c", c_shape, 2, "(batch, condition)")
        validation.check_last_dim_known(self.name, "c", c_shape)
        return x_shape, c_shape

    def _uses(self, part):
        return self.conditioning in (part, "both")

    def build(self, inputs_shape):
        x_shape, c_shape = self._check(inputs_shape)
        width = x_shape[-1] + (c_shape[-1] if self._uses("input") else 0)
        self.rnn.build((x_shape[0], x_shape[1], width))
        if self._uses("initial_state"):
            size = self.cell.state_size
            size = size[0] if isinstance(size, (list, tuple)) else size
            self.initial_state_kernel = self.add_weight(
                shape=(c_shape[-1], size),
                name="initial_state_kernel",
                initializer=self.initial_state_initializer,
            )
            self.initial_state_bias = self.add_weight(
                shape=(size,), name="initial_state_bias", initializer="zeros"
            )

    def compute_output_shape(self, inputs_shape):
        x_shape, c_shape = self._check(inputs_shape)
        width = x_shape[-1] + (c_shape[-1] if self._uses("input") else 0)
        return self.rnn.compute_output_shape((x_shape[0], x_shape[1], width))

    def compute_mask(self, inputs, mask=None):
        mask = mask[0] if isinstance(mask, (list, tuple)) else mask
        out_mask = mask if self.return_sequences else None
        if self.return_state:
            n = len(self.rnn._state_shapes(None))
            return [out_mask] + [None] * n
        return out_mask

    def call(self, inputs, mask=None, training=False):
        x, c = inputs
        if isinstance(mask, (list, tuple)):
            mask = mask[0]
        c = ops.cast(c, x.dtype)
        if self._uses("input"):
            tiled = ops.repeat(ops.expand_dims(c, 1), ops.shape(x)[1], axis=1)
            x = ops.concatenate([x, tiled], axis=-1)
        initial_state = None
        if self._uses("initial_state"):
            initial_state = self.rnn._initial_state(ops.shape(x)[0])
            initial_state[0] = ops.tanh(
                ops.matmul(c, self.initial_state_kernel) + self.initial_state_bias
            )
        return self.rnn(x, initial_state=initial_state, mask=mask, training=training)

    def get_config(self):
        config = {
            "cell": keras.saving.serialize_keras_object(self.cell),
            "conditioning": self.conditioning,
            "return_sequences": self.return_sequences,
            "return_state": self.return_state,
            "go_backwards": self.go_backwards,
            "initial_state_initializer": keras.initializers.serialize(
                self.initial_state_initializer
            ),
        }
        return {**super().get_config(), **config}

    @classmethod
    def from_config(cls, config, custom_objects=None):
        bounds.check_config(cls.__name__, config)
        return cls(**serialization.deserialize_nested(config, ("cell",), custom_objects))
