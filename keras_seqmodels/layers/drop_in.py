"""The shared base of the drop-in ``LSTM``, ``GRU`` and ``SimpleRNN`` layers."""

import keras
import numpy as np

from keras_seqmodels.layers.recurrent import Recurrent
from keras_seqmodels.utils import bounds

_USE_CUDNN = ("auto", True, False)


class DropInRecurrent(Recurrent):
    """``Recurrent`` with one built-in cell, configured as Keras's own layer.

    A subclass builds its cell from Keras's arguments and lists in
    ``_cell_keys`` the cell arguments that Keras's ``get_config`` stores, in
    Keras's order. What it shares with the Keras layer it replaces:

    - ``get_config`` has Keras's keys (``from_config`` of either class reads
      the other's config); an argument Keras accepts but does not store
      (``use_cudnn``, ``SimpleRNN``'s ``seed``) and the package's own
      ``fused`` / ``precompute_inputs`` are stored only when not at their
      default, so a default config stays loadable by Keras.
    - ``get_weights`` / ``set_weights`` hold the cell's weights in Keras's
      order (``kernel``, ``recurrent_kernel``, ``bias``). The states of a
      stateful layer are variables the layer does not track, as in Keras, so
      they are in no weight list or file (a model's ``get_weights``,
      ``set_weights`` and ``.weights.h5`` are Keras's, both ways); the layer's
      ``variables`` lists them, which carries them through ``fit`` on JAX.
    - ``zero_output_for_mask`` defaults to False (masked steps repeat the last
      output), as in ``keras.layers.RNN``.

    Args:
        cell: the cell, built by the subclass.
        use_cudnn: ``"auto"``, True or False, accepted as Keras accepts it;
            see the subclass.
        zero_output_for_mask: masked steps output zeros (True) or repeat the
            last unmasked output (False, default, as Keras).
        **kwargs: ``Recurrent``'s arguments and the base layer's (``name``,
            ``dtype``, ``activity_regularizer``...).
    """

    _cell_keys = ()
    _optional = {"fused": True, "precompute_inputs": False}

    def __init__(self, cell, use_cudnn="auto", zero_output_for_mask=False, **kwargs):
        # Keras 2's choice among its kernels; the package picks its own.
        kwargs.pop("implementation", None)
        if use_cudnn not in _USE_CUDNN:
            raise ValueError(
                f"{type(self).__name__}: `use_cudnn` must be 'auto', True or False. "
                f"Received: use_cudnn={use_cudnn!r}"
            )
        super().__init__(cell, zero_output_for_mask=zero_output_for_mask, **kwargs)
        self.use_cudnn = use_cudnn

    def get_weights(self):
        return self.cell.get_weights()

    def set_weights(self, weights):
        if not self.cell.built:
            raise ValueError(
                f"{self.name}: `set_weights` needs a built layer. Call the layer on "
                "an input (or `build((batch, time, features))`) first."
            )
        expected = [tuple(w.shape) for w in self.cell.weights]
        received = [tuple(np.shape(w)) for w in weights]
        if received != expected:
            names = ", ".join(w.name for w in self.cell.weights)
            raise ValueError(
                f"{self.name}: `set_weights` takes the weights of Keras's "
                f"{type(self).__name__} ({names}), of shapes {expected}. "
                f"Received shapes {received}"
            )
        self.cell.set_weights(weights)

    def get_config(self):
        config = keras.layers.Layer.get_config(self)
        config.update(
            return_sequences=self.return_sequences,
            return_state=self.return_state,
            go_backwards=self.go_backwards,
            stateful=self.stateful,
            unroll=self.unroll,
            zero_output_for_mask=self.zero_output_for_mask,
        )
        cell_config = self.cell.get_config()
        for key in self._cell_keys:
            config[key] = cell_config[key]
        config["activity_regularizer"] = keras.regularizers.serialize(self.activity_regularizer)
        extra = dict(self._optional, use_cudnn="auto")
        for key, default in extra.items():
            value = getattr(self, key)
            if value != default:
                config[key] = value
        return config

    @classmethod
    def from_config(cls, config, custom_objects=None):
        bounds.check_config(cls.__name__, config)
        return cls(**config)


def _forward(name):
    return property(lambda self: getattr(self.cell, name), doc=f"The cell's ``{name}``.")


# The arguments every drop-in reads back from its cell, as Keras's layers do.
COMMON = (
    "units",
    "activation",
    "use_bias",
    "kernel_initializer",
    "recurrent_initializer",
    "bias_initializer",
    "kernel_regularizer",
    "recurrent_regularizer",
    "bias_regularizer",
    "kernel_constraint",
    "recurrent_constraint",
    "bias_constraint",
    "dropout",
    "recurrent_dropout",
)


def forward_cell_arguments(cls, names):
    """Give ``cls`` read-only properties for the cell arguments ``names``
    (``layer.units`` is ``layer.cell.units``, as in Keras)."""
    for name in names:
        setattr(cls, name, _forward(name))
    return cls
