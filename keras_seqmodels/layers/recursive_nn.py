"""Recursive neural network over a batch of trees."""

import keras

from keras_seqmodels.trees.recursive_layer import RecursiveLayer
from keras_seqmodels.trees.steps import recursive_step


@keras.saving.register_keras_serializable(package="keras_seqmodels")
class RecursiveNN(RecursiveLayer):
    """Recursive neural network: one shared composition over every tree node.

    A leaf's vector is its input, h = x; a node with children c_1 .. c_K is
    p = f(W [c_1; ...; c_K] + b), with zero vectors for absent children.
    A sequence of length τ composed over ``trees.balanced_tree`` takes
    ⌈log2 τ⌉ sequential steps instead of τ.

    New relative to Keras: Keras has no tree layers. This one evaluates all
    nodes of one level of every tree of the batch with one matrix product
    (dynamic batching, see ``trees.RecursiveLayer``) and runs in ``fit`` on
    TensorFlow and JAX.

    Args:
        units: width of the node vectors; equals the input features, since
            leaves are their input vectors.
        activation: ``f``, default ``"tanh"``.
        use_bias: add ``b``.
        kernel_initializer: initializer of ``W``, ``(K * units, units)``.
        bias_initializer: initializer of ``b``.
        kernel_regularizer: optional regularizer of ``W``.
        **kwargs: standard layer arguments.

    Call arguments:
        inputs: ``[x, children, levels]`` with ``x (batch, nodes, units)``
            float (only leaves' rows are used), ``children (batch, nodes, K)``
            and ``levels (batch, nodes)`` integer, as made by
            ``keras_seqmodels.trees.encode`` (``-1`` marks absent children and
            padding nodes).

    Returns:
        ``(node_outputs, root_output)``: ``(batch, nodes, units)`` (zeros on
        padding) and ``(batch, units)``.

    Example:

    >>> import numpy as np, keras_seqmodels as ks
    >>> batch = ks.trees.encode([ks.trees.balanced_tree(5), ks.trees.balanced_tree(2)])
    >>> x = np.ones(batch["levels"].shape + (4,), "float32")
    >>> nodes, root = ks.layers.RecursiveNN(4)([x, batch["children"], batch["levels"]])
    >>> tuple(nodes.shape), tuple(root.shape)
    ((2, 9, 4), (2, 4))

    Reference:
        Pollack 1990, "Recursive distributed representations"; Socher et al.
        2011, "Parsing natural scenes and natural language with recursive
        neural networks"; Deep Learning, section 10.6.
    """

    def __init__(
        self,
        units,
        activation="tanh",
        use_bias=True,
        kernel_initializer="glorot_uniform",
        bias_initializer="zeros",
        kernel_regularizer=None,
        **kwargs,
    ):
        super().__init__(units, **kwargs)
        self.activation = keras.activations.get(activation)
        self.use_bias = bool(use_bias)
        self.kernel_initializer = keras.initializers.get(kernel_initializer)
        self.bias_initializer = keras.initializers.get(bias_initializer)
        self.kernel_regularizer = keras.regularizers.get(kernel_regularizer)

    def build_composition(self, input_dim, arity):
        if input_dim != self.units:
            raise ValueError(
                f"{type(self).__name__}: leaves are their input vectors, so the "
                f"last dimension of `x` must equal `units` ({self.units}). "
                f"Received {input_dim}"
            )
        self.kernel = self.add_weight(
            name="kernel",
            shape=(arity * self.units, self.units),
            initializer=self.kernel_initializer,
            regularizer=self.kernel_regularizer,
        )
        self.bias = (
            self.add_weight(
                name="bias", shape=(self.units,), initializer=self.bias_initializer
            )
            if self.use_bias
            else None
        )

    def project(self, x):
        return x

    def compose(self, z, child_states, has_child):
        p = recursive_step(child_states[0], self.kernel, self.bias, self.activation)
        is_leaf = keras.ops.logical_not(keras.ops.any(has_child, axis=1))
        return [keras.ops.where(keras.ops.expand_dims(is_leaf, 1), z, p)]

    def get_config(self):
        return {
            **super().get_config(),
            "activation": keras.activations.serialize(self.activation),
            "use_bias": self.use_bias,
            "kernel_initializer": keras.initializers.serialize(self.kernel_initializer),
            "bias_initializer": keras.initializers.serialize(self.bias_initializer),
            "kernel_regularizer": keras.regularizers.serialize(self.kernel_regularizer),
        }
