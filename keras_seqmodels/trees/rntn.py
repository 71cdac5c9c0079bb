"""Recursive neural tensor network over a batch of trees."""

import keras

from keras_seqmodels.trees.recursive_layer import LeafInputRecursiveLayer
from keras_seqmodels.trees.steps import rntn_step


@keras.saving.register_keras_serializable(package="keras_seqmodels")
class RNTN(LeafInputRecursiveLayer):
    """Recursive neural tensor network (RNTN).

    A leaf's vector is its input, h = x; with c = [c_1; ...; c_K] the
    children's vectors (zeros for absent ones), a node is
    p = f(cᵀ V^{[1:d]} c + W c + b): each output unit k adds the bilinear
    form cᵀ V_k c of its own slice of the tensor V, so children interact
    multiplicatively.

    New relative to Keras: Keras has no tree layers. The bilinear term is
    computed for all nodes of one level of every tree at once with one
    matrix product (dynamic batching, see ``trees.RecursiveLayer``).

    Args:
        units: width d of the node vectors; equals the input features.
        activation: ``f``, default ``"tanh"``.
        use_bias: add ``b``.
        kernel_initializer: initializer of ``W``, ``(K d, d)``.
        tensor_initializer: initializer of ``V``, ``(K d, K d, d)``; default
            uniform in ±1/(K d) (small, as the bilinear term is quadratic).
        bias_initializer: initializer of ``b``.
        kernel_regularizer, tensor_regularizer: optional regularizers.
        **kwargs: standard layer arguments.

    Call arguments:
        inputs: ``[x, children, levels]`` as in ``RecursiveNN``.

    Returns:
        ``(node_outputs (batch, nodes, units), root_output (batch, units))``.

    Example:

    >>> import numpy as np, keras_seqmodels as ks
    >>> batch = ks.trees.encode([ks.trees.parse_ptb("(3 (2 a) (3 (2 b) (4 c)))")])
    >>> x = np.ones((1, 5, 3), "float32")
    >>> tuple(ks.trees.RNTN(3)([x, batch["children"], batch["levels"]])[1].shape)
    (1, 3)

    Reference:
        Socher et al. 2013, "Recursive deep models for semantic
        compositionality over a sentiment treebank", EMNLP.
    """

    def __init__(
        self,
        units,
        activation="tanh",
        use_bias=True,
        kernel_initializer="glorot_uniform",
        tensor_initializer=None,
        bias_initializer="zeros",
        kernel_regularizer=None,
        tensor_regularizer=None,
        **kwargs,
    ):
        super().__init__(
            units,
            activation=activation,
            use_bias=use_bias,
            kernel_initializer=kernel_initializer,
            bias_initializer=bias_initializer,
            kernel_regularizer=kernel_regularizer,
            **kwargs,
        )
        self.tensor_initializer = (
            None if tensor_initializer is None
            else keras.initializers.get(tensor_initializer)
        )
        self.tensor_regularizer = keras.regularizers.get(tensor_regularizer)

    def build_extra_weights(self, width):
        tensor_init = self.tensor_initializer or keras.initializers.RandomUniform(
            -1.0 / width, 1.0 / width
        )
        self.tensor_kernel = self.add_weight(
            name="tensor_kernel", shape=(width, width, self.units),
            initializer=tensor_init, regularizer=self.tensor_regularizer,
        )

    def node_step(self, child_h):
        return rntn_step(
            child_h, self.kernel, self.tensor_kernel, self.bias, self.activation
        )

    def get_config(self):
        return {
            **super().get_config(),
            "tensor_initializer": (
                None if self.tensor_initializer is None
                else keras.initializers.serialize(self.tensor_initializer)
            ),
            "tensor_regularizer": keras.regularizers.serialize(self.tensor_regularizer),
        }
