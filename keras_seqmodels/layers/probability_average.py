"""Average of the softmax probabilities of several logit tensors."""

import math

import keras
from keras import ops


@keras.saving.register_keras_serializable(package="keras_seqmodels")
class ProbabilityAverage(keras.layers.Layer):
    """Logits of the mean of several softmax distributions (an ensemble head).

    For K logit tensors z_1..z_K over the same classes,

        p = (1/K) Σ_k softmax(z_k)
        output = log p = logsumexp_k(log_softmax(z_k)) - log K

    computed in log space (no underflow for confident members). The output is
    a valid logit tensor: ``softmax(output) == p``, so losses and metrics
    written for logits (``from_logits=True``) and ``argmax`` work unchanged.
    This is how an ensemble of independently trained classifiers averages
    its members' answer probabilities.

    New relative to Keras: ``keras.layers.Average`` averages the logits
    themselves (a different distribution); this layer averages the
    probabilities and returns their logits.

    Call arguments:
        inputs: a list of K >= 1 float tensors of the same shape
            ``(..., classes)``, the members' logits.

    Returns:
        ``(..., classes)``: the log of the mean probability.

    Example:

    >>> import numpy as np, keras_seqmodels as ks
    >>> a = np.log(np.array([[0.9, 0.1]], "float32"))
    >>> b = np.log(np.array([[0.3, 0.7]], "float32"))
    >>> out = ks.layers.ProbabilityAverage()([a, b])
    >>> np.exp(np.asarray(out)).astype("float64").round(3).tolist()
    [[0.6, 0.4]]

    Reference:
        Dietterich, "Ensemble Methods in Machine Learning", MCS 2000;
        Caruana et al., "Ensemble Selection from Libraries of Models",
        ICML 2004 (averaging of the selected members' predictions).
    """

    def _check(self, input_shape):
        name = self.name
        if (
            not isinstance(input_shape, (list, tuple))
            or not input_shape
            or not all(isinstance(s, (list, tuple)) for s in input_shape)
        ):
            raise ValueError(
                f"{name}: inputs must be a non-empty list of logit tensors "
                f"(..., classes). Received input shape {input_shape}"
            )
        first = tuple(input_shape[0])
        for shape in input_shape[1:]:
            if len(shape) != len(first) or any(
                a is not None and b is not None and a != b for a, b in zip(shape, first)
            ):
                raise ValueError(
                    f"{name}: all inputs must have the same shape (..., classes). "
                    f"Received shapes {[tuple(s) for s in input_shape]}"
                )

    def build(self, input_shape):
        self._check(input_shape)

    def call(self, inputs):
        if not isinstance(inputs, (list, tuple)):
            inputs = [inputs]
        log_probs = ops.stack(
            [ops.log_softmax(ops.cast(x, self.compute_dtype), axis=-1) for x in inputs], axis=0
        )
        return ops.logsumexp(log_probs, axis=0) - math.log(len(inputs))

    def compute_output_shape(self, input_shape):
        return tuple(input_shape[0])
