"""Token accuracy over non-padding targets."""

import keras
from keras import ops


def token_mean_update(update_state, values, mask, sample_weight=None):
    """``keras.metrics.Mean.update_state`` over single tokens: ``values`` and
    ``mask`` ``(batch, time)`` are flattened, so the running mean is
    sum(values * weight) / sum(weight) over every token seen (Keras would
    first average each row over its padded width)."""
    weight = ops.cast(mask, "float32")
    if sample_weight is not None:
        sample_weight = ops.cast(sample_weight, "float32")
        if len(sample_weight.shape) == 1:
            sample_weight = ops.expand_dims(sample_weight, -1)
        weight = weight * sample_weight
    weight = ops.broadcast_to(weight, ops.shape(values))
    return update_state(ops.reshape(values, (-1,)), sample_weight=ops.reshape(weight, (-1,)))


@keras.saving.register_keras_serializable(package="keras_seqmodels")
class MaskedAccuracy(keras.metrics.Mean):
    """Share of non-padding target tokens whose argmax prediction is right.

    accuracy = sum_t [y_t != pad] [argmax z_t = y_t] / sum_t [y_t != pad],
    summed over all batches: every real token counts once, whatever the
    padded width of its batch. New relative to Keras:
    ``SparseCategoricalAccuracy`` counts padding, and a Keras mean metric
    over ``(batch, time)`` values averages each row over its padded width
    first, so batches of different widths would weigh differently.
    ``sample_weight``, if given, weights whole sequences (shape ``(batch,)``)
    or single tokens (``(batch, time)``).

    Args:
        pad_id: target id that marks padding.
        name: the metric's name (default ``"masked_accuracy"``).

    Example:

    >>> import numpy as np
    >>> m = MaskedAccuracy()
    >>> m.update_state(np.array([[2, 1, 0]]), np.eye(3)[[[2, 0, 0]]])
    >>> float(m.result())
    0.5
    >>> m.update_state(np.array([[1, 1, 1, 1]]), np.eye(3)[[[2, 2, 2, 2]]])  # 4, all wrong
    >>> round(float(m.result()), 4)  # 1 right of 6 real tokens
    0.1667
    """

    def __init__(self, pad_id=0, name="masked_accuracy", **kwargs):
        super().__init__(name=name, **kwargs)
        self.pad_id = int(pad_id)

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_true = ops.cast(y_true, "int32")
        mask = ops.cast(ops.not_equal(y_true, self.pad_id), "float32")
        hit = ops.cast(
            ops.equal(ops.cast(ops.argmax(y_pred, axis=-1), "int32"), y_true),
            "float32",
        )
        return token_mean_update(super().update_state, hit, mask, sample_weight)

    def get_config(self):
        return {**super().get_config(), "pad_id": self.pad_id}
