"""A learned bias added along the last axis (the tied softmax's bias)."""

import keras
from keras import ops

from keras_seqmodels.utils import validation


@keras.saving.register_keras_serializable(package="keras_seqmodels")
class Bias(keras.layers.Layer):
    """Adds a learned vector ``b`` to the last axis: ``output = inputs + b``.

    With ``keras.layers.ReversibleEmbedding`` it completes the tied output
    layer of a language model, ``logits = h Eᵀ + b`` with ``E`` the input
    embedding's matrix (Press & Wolf 2017; Inan et al. 2017):

        embedding = keras.layers.ReversibleEmbedding(vocab, units)
        x = embedding(ids)                                # ids -> vectors
        ...                                               # recurrent layers
        logits = ks.layers.Bias()(embedding(h, reverse=True))

    New relative to Keras: ``ReversibleEmbedding``'s reverse projection has
    no bias, and Keras has no layer that adds only one; this is that layer.

    Args:
        bias_initializer: initializer of ``b``, default ``"zeros"``.
        **kwargs: base layer arguments (``name``, ``dtype``, ...).

    Call arguments:
        inputs: a float tensor ``(..., features)``, the last dimension known.

    Returns:
        ``inputs + b``, of the same shape.

    Example:

    >>> import numpy as np, keras_seqmodels as ks
    >>> layer = ks.layers.Bias(bias_initializer="ones")
    >>> np.asarray(layer(np.zeros((2, 3), "float32"))).tolist()
    [[1.0, 1.0, 1.0], [1.0, 1.0, 1.0]]
    """

    def __init__(self, bias_initializer="zeros", **kwargs):
        super().__init__(**kwargs)
        self.bias_initializer = keras.initializers.get(bias_initializer)

    def build(self, input_shape):
        if input_shape is None or len(input_shape) < 1:
            raise ValueError(
                f"{self.name}: `inputs` must have rank >= 1, (..., features). "
                f"Received shape {input_shape}"
            )
        validation.check_last_dim_known(self.name, "inputs", input_shape)
        self.bias = self.add_weight(
            shape=(input_shape[-1],), initializer=self.bias_initializer, name="bias"
        )

    def call(self, inputs):
        validation.check_float_dtype(self.name, "inputs", inputs.dtype)
        return ops.add(inputs, ops.cast(self.bias, inputs.dtype))

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def get_config(self):
        config = super().get_config()
        config["bias_initializer"] = keras.initializers.serialize(self.bias_initializer)
        return config
