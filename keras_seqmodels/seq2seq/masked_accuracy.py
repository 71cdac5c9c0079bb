"""Token accuracy over non-padding targets."""

import keras
from keras import ops


@keras.saving.register_keras_serializable(package="keras_seqmodels")
class MaskedAccuracy(keras.metrics.Mean):
    """Share of non-padding target tokens whose argmax prediction is right.

    accuracy = sum_t [y_t != pad] [argmax z_t = y_t] / sum_t [y_t != pad],
    accumulated over batches weighted by their number of real tokens.
    New relative to Keras: ``SparseCategoricalAccuracy`` counts padding.

    Args:
        pad_id: target id that marks padding.
        name: the metric's name (default ``"masked_accuracy"``).

    Example:

    >>> import numpy as np
    >>> m = MaskedAccuracy()
    >>> m.update_state(np.array([[2, 1, 0]]), np.eye(3)[[[2, 0, 0]]])
    >>> float(m.result())
    0.5
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
        return super().update_state(hit, sample_weight=mask)

    def get_config(self):
        return {**super().get_config(), "pad_id": self.pad_id}
