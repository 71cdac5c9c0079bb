"""The babi-memn2n recipe's optimizer: SGD with the gradient clipped per tied
matrix, as the authors' MemN2N code does (``--clip matrix`` / ``spectral``)."""

import functools

CLIP_FORMS = ("global", "matrix", "spectral")


@functools.lru_cache(maxsize=1)
def matrix_clipped_sgd():
    """``MatrixClippedSGD``: SGD whose gradient is clipped per tied matrix.

    The gradient of each E_k of a ``MemoryNetwork`` (``embeddings[k]``,
    together with ``temporal_embeddings[k]``: the authors' code keeps the
    time words in the same lookup table) is scaled to norm at most
    ``clipnorm_per_matrix`` on its own (``Weight.m``); ``spectral=True``
    measures the largest singular value (MATLAB's ``norm`` of a matrix),
    else the Frobenius norm. Other variables are clipped on their own.
    """
    import keras
    from keras import ops

    @keras.saving.register_keras_serializable(package="keras_seqmodels")
    class MatrixClippedSGD(keras.optimizers.SGD):
        def __init__(self, learning_rate=0.01, clipnorm_per_matrix=40.0, spectral=False, **kw):
            super().__init__(learning_rate, **kw)
            self.clipnorm_per_matrix = float(clipnorm_per_matrix)
            self.spectral = bool(spectral)

        def _norms(self, grad):
            """Norm of each ``grad[k]`` (shape ``(k, 1, 1)``)."""
            if self.spectral:
                return ops.reshape(ops.norm(grad, ord=2, axis=(-2, -1)), (-1, 1, 1))
            return ops.sqrt(ops.sum(ops.square(grad), axis=(-2, -1), keepdims=True))

        def apply(self, grads, trainable_variables=None):
            variables = trainable_variables
            variables = list(self._trainable_variables if variables is None else variables)
            grads = list(grads)
            paths = {v.path: i for i, v in enumerate(variables)}
            done = set()
            for i, variable in enumerate(variables):
                if not variable.path.endswith("/embeddings") or grads[i] is None:
                    continue
                tied = [i]
                temporal = paths.get(variable.path[: -len("embeddings")] + "temporal_embeddings")
                if temporal is not None and grads[temporal] is not None:
                    tied.append(temporal)
                stacked = ops.concatenate([grads[j] for j in tied], axis=1)
                norms = self._norms(stacked)
                scale = ops.minimum(1.0, self.clipnorm_per_matrix / ops.maximum(norms, 1e-12))
                for j in tied:
                    grads[j] = grads[j] * ops.cast(scale, grads[j].dtype)
                done.update(tied)
            for i, grad in enumerate(grads):
                if i not in done and grad is not None:
                    norm = ops.sqrt(ops.sum(ops.square(grad)))
                    grads[i] = grad * ops.minimum(1.0, self.clipnorm_per_matrix / (norm + 1e-12))
            return super().apply(grads, trainable_variables)

        def get_config(self):
            config = super().get_config()
            config.update(clipnorm_per_matrix=self.clipnorm_per_matrix, spectral=self.spectral)
            return config

    return MatrixClippedSGD
