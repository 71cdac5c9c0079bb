"""Cross-entropy that ignores padding, with label smoothing."""

import keras
from keras import ops

from keras_seqmodels.utils import validation


@keras.saving.register_keras_serializable(package="keras_seqmodels")
class MaskedSparseCrossentropy(keras.losses.Loss):
    """Token-level cross-entropy averaged over non-padding targets only.

    With q = (1 - ε) onehot(y) + ε / V (label smoothing over V classes) and
    m_t = [y_t != pad_id]:
    loss = sum_t m_t * (-sum_v q_v log softmax(z_t)_v) / sum_t m_t.

    New relative to Keras: ``SparseCategoricalCrossentropy`` has
    ``ignore_class`` but no label smoothing, and averages per sentence rather
    than per token; this loss does both, so a long sentence counts for its
    length.

    Args:
        pad_id: target id that marks padding (default 0).
        label_smoothing: ε in [0, 1).
        from_logits: whether predictions are logits (default True).
        name: the loss's name.

    Example:

    >>> import numpy as np
    >>> loss = MaskedSparseCrossentropy(label_smoothing=0.1)
    >>> y = np.array([[3, 1, 0]])
    >>> z = np.zeros((1, 3, 5), "float32")
    >>> round(float(loss(y, z)), 4)   # uniform logits: log 5
    1.6094

    Reference:
        Szegedy et al. 2016, section 7 (label smoothing); Deep Learning,
        section 7.5.1.
    """

    def __init__(self, pad_id=0, label_smoothing=0.0, from_logits=True,
                 name="masked_sparse_crossentropy", **kwargs):
        # The per-token mean is computed in `call`; the batch reduction must
        # not divide again.
        kwargs["reduction"] = "sum"
        super().__init__(name=name, **kwargs)
        self.pad_id = int(pad_id)
        self.label_smoothing = validation.check_rate(
            type(self).__name__, "label_smoothing", label_smoothing
        )
        self.from_logits = bool(from_logits)

    def call(self, y_true, y_pred):
        y_true = ops.cast(y_true, "int32")
        y_pred = ops.cast(y_pred, "float32")
        if self.from_logits:
            logp = ops.log_softmax(y_pred, axis=-1)
        else:
            logp = ops.log(ops.clip(y_pred, 1e-12, 1.0))
        nll = -ops.squeeze(
            ops.take_along_axis(logp, ops.expand_dims(y_true, -1), axis=-1), -1
        )
        if self.label_smoothing:
            eps = self.label_smoothing
            nll = (1.0 - eps) * nll - eps * ops.mean(logp, axis=-1)
        mask = ops.cast(ops.not_equal(y_true, self.pad_id), "float32")
        return ops.sum(nll * mask) / ops.maximum(ops.sum(mask), 1.0)

    def get_config(self):
        return {
            **super().get_config(),
            "pad_id": self.pad_id,
            "label_smoothing": self.label_smoothing,
            "from_logits": self.from_logits,
        }
