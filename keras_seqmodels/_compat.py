"""The few private Keras imports the package cannot avoid, kept in one place.

- ``backend_rnn``: each backend's optimised time loop (``tf.while_loop`` with
  TensorArrays on TensorFlow, ``lax.scan`` on JAX). ``keras.ops.scan`` is public
  but on TensorFlow it requires the per-step outputs to have the structure of
  the carry, which would force every state to be stacked over time.
- ``DropoutRNNCell``: the mix-in whose cached masks ``keras.layers.RNN``
  pre-populates before its loop; inheriting it lets our cells use dropout
  inside Keras's own RNN layer too.
- ``get_keras_mask`` / ``set_keras_mask``: read and attach a tensor's mask on
  every backend (JAX arrays take no attributes; Keras keeps a side table),
  used by models that subclass ``keras.Model`` and return a masked output.
"""

from keras.src.backend import rnn as backend_rnn
from keras.src.backend.common.masking import get_keras_mask, set_keras_mask
from keras.src.layers.rnn.dropout_rnn_cell import DropoutRNNCell

__all__ = ["backend_rnn", "DropoutRNNCell", "get_keras_mask", "set_keras_mask"]
