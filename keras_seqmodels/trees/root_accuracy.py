"""Accuracy of a per-node tree classifier on the roots only."""

import keras


@keras.saving.register_keras_serializable(package="keras_seqmodels")
class RootAccuracy(keras.metrics.Mean):
    """Accuracy on the root node of each tree, for per-node logits.

    Keras's ``SparseCategoricalAccuracy`` on per-node outputs averages over
    every node; sentence classification is judged on the root. This metric
    reads node ``root`` of each row: ``y_true (B, N)`` node labels (``-1``
    where none: padding, or a tree whose root has no label, which is left
    out) and ``y_pred (B, N, classes)`` scores.

    Args:
        root: the node index of the roots (0: the pre-order numbering of
            ``parse_ptb``, and so of ``tree_dataset`` batches of bracketed
            trees).
        name, dtype: as any Keras metric.

    Example:

    >>> import numpy as np
    >>> m = RootAccuracy()
    >>> y_true = np.array([[1, 0, -1], [2, 2, 2], [-1, 0, 0]])
    >>> y_pred = np.eye(3)[[[1, 1, 0], [0, 2, 2], [0, 0, 0]]]
    >>> m.update_state(y_true, y_pred)
    >>> float(m.result())
    0.5
    """

    def __init__(self, root=0, name="root_accuracy", dtype=None):
        super().__init__(name=name, dtype=dtype)
        if not isinstance(root, int) or isinstance(root, bool) or root < 0:
            raise ValueError(
                f"RootAccuracy: `root` must be a non-negative integer. Received: root={root!r}"
            )
        self.root = root

    def update_state(self, y_true, y_pred, sample_weight=None):
        ops = keras.ops
        gold = ops.cast(ops.convert_to_tensor(y_true)[:, self.root], "int32")
        guess = ops.cast(ops.argmax(ops.convert_to_tensor(y_pred)[:, self.root], axis=-1), "int32")
        weight = ops.cast(gold >= 0, self.dtype)
        if sample_weight is not None:
            weight = weight * ops.cast(ops.reshape(sample_weight, (-1,)), self.dtype)
        return super().update_state(ops.cast(gold == guess, self.dtype), sample_weight=weight)

    def get_config(self):
        return {"root": self.root, "name": self.name, "dtype": self.dtype}
