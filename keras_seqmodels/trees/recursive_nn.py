"""Recursive neural network over a batch of trees."""

import keras

from keras_seqmodels.trees.recursive_layer import LeafInputRecursiveLayer
from keras_seqmodels.trees.steps import recursive_step


@keras.saving.register_keras_serializable(package="keras_seqmodels")
class RecursiveNN(LeafInputRecursiveLayer):
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
    >>> nodes, root = ks.trees.RecursiveNN(4)([x, batch["children"], batch["levels"]])
    >>> tuple(nodes.shape), tuple(root.shape)
    ((2, 9, 4), (2, 4))

    Reference:
        Pollack 1990, "Recursive distributed representations"; Socher et al.
        2011, "Parsing natural scenes and natural language with recursive
        neural networks"; Deep Learning, section 10.6.
    """

    def node_step(self, child_h):
        return recursive_step(child_h, self.kernel, self.bias, self.activation)
