"""Tree-LSTM (N-ary and child-sum) over a batch of trees."""

import keras
from keras import ops

from keras_seqmodels.trees.recursive_layer import RecursiveLayer
from keras_seqmodels.trees.steps import (
    child_sum_tree_lstm_step,
    nary_tree_lstm_step,
)
from keras_seqmodels.utils.validation import check_choice

VARIANTS = ("n_ary", "child_sum")


@keras.saving.register_keras_serializable(package="keras_seqmodels")
class TreeLSTM(RecursiveLayer):
    """Tree-LSTM: an LSTM whose memory cell sums over a node's children.

    Every node has an input x (use zeros for nodes without one, such as the
    internal nodes of a constituency tree) and K children (h_k, c_k), zero
    for absent children (so a leaf starts from zero states). With gate
    pre-activations z = W x + b in order [i, f, g, o]:

    - ``variant="n_ary"`` (ordered children, e.g. binarized constituency
      trees): with H = [h_1; ...; h_K],
      i = σ(z_i + U_i H), f_k = σ(z_f + U_{f,k} H), g = tanh(z_g + U_g H),
      o = σ(z_o + U_o H);
    - ``variant="child_sum"`` (unordered, any number of children, e.g.
      dependency trees): with h̃ = Σ_k h_k,
      i = σ(z_i + U_i h̃), f_k = σ(z_f + U_f h_k), g = tanh(z_g + U_g h̃),
      o = σ(z_o + U_o h̃);

    then c = i ⊙ g + Σ_k f_k ⊙ c_k and h = o ⊙ tanh(c).

    New relative to Keras: Keras has no tree layers. All nodes of one level
    of every tree of the batch are evaluated with one matrix product
    (dynamic batching, see ``trees.RecursiveLayer``); the input projection of
    all nodes is one matrix product before the level loop.

    Args:
        units: width of h and c.
        variant: ``"n_ary"`` (default) or ``"child_sum"``.
        activation: default ``"tanh"``.
        recurrent_activation: the gates' non-linearity, default ``"sigmoid"``.
        unit_forget_bias: start the forget-gate bias at 1 (default True).
        kernel_initializer: initializer of W, ``(features, 4 units)``.
        recurrent_initializer: initializer of U: ``(K units, (K+3) units)``
            with columns ``[i, f_1..f_K, g, o]`` for ``n_ary``,
            ``(units, 4 units)`` for ``child_sum``.
        bias_initializer: initializer of b, ``(4 units,)``.
        kernel_regularizer, recurrent_regularizer: optional regularizers.
        **kwargs: standard layer arguments.

    Call arguments:
        inputs: ``[x, children, levels]`` with ``x (batch, nodes, features)``
            float, ``children (batch, nodes, K)`` and ``levels (batch, nodes)``
            integer, as made by ``keras_seqmodels.trees.encode``.

    Returns:
        ``(node_outputs, root_output)``: the h of every node,
        ``(batch, nodes, units)`` (zeros on padding), and of each root,
        ``(batch, units)``.

    Example:

    >>> import numpy as np, keras_seqmodels as ks
    >>> batch = ks.trees.encode([ks.trees.from_heads([2, 0, 2, 3])])
    >>> x = np.ones((1, 4, 3), "float32")
    >>> layer = ks.trees.TreeLSTM(5, variant="child_sum")
    >>> [tuple(t.shape) for t in layer([x, batch["children"], batch["levels"]])]
    [(1, 4, 5), (1, 5)]

    Reference:
        Tai, Socher & Manning 2015, "Improved semantic representations from
        tree-structured long short-term memory networks", ACL (section 3).
    """

    state_count = 2

    def __init__(
        self,
        units,
        variant="n_ary",
        activation="tanh",
        recurrent_activation="sigmoid",
        unit_forget_bias=True,
        kernel_initializer="glorot_uniform",
        recurrent_initializer="orthogonal",
        bias_initializer="zeros",
        kernel_regularizer=None,
        recurrent_regularizer=None,
        **kwargs,
    ):
        super().__init__(units, **kwargs)
        self.variant = check_choice("TreeLSTM", "variant", variant, VARIANTS)
        self.activation = keras.activations.get(activation)
        self.recurrent_activation = keras.activations.get(recurrent_activation)
        self.unit_forget_bias = bool(unit_forget_bias)
        self.kernel_initializer = keras.initializers.get(kernel_initializer)
        self.recurrent_initializer = keras.initializers.get(recurrent_initializer)
        self.bias_initializer = keras.initializers.get(bias_initializer)
        self.kernel_regularizer = keras.regularizers.get(kernel_regularizer)
        self.recurrent_regularizer = keras.regularizers.get(recurrent_regularizer)

    def build_composition(self, input_dim, arity):
        u = self.units
        self.kernel = self.add_weight(
            name="kernel", shape=(input_dim, 4 * u),
            initializer=self.kernel_initializer, regularizer=self.kernel_regularizer,
        )
        shape = (arity * u, (arity + 3) * u) if self.variant == "n_ary" else (u, 4 * u)
        self.recurrent_kernel = self.add_weight(
            name="recurrent_kernel", shape=shape,
            initializer=self.recurrent_initializer,
            regularizer=self.recurrent_regularizer,
        )
        base = self.bias_initializer
        if self.unit_forget_bias:
            def bias_init(shape, dtype=None):
                b = base(shape, dtype=dtype)
                return ops.concatenate(
                    [b[:u], ops.ones((u,), dtype=b.dtype), b[2 * u :]]
                )
        else:
            bias_init = base
        self.bias = self.add_weight(name="bias", shape=(4 * u,), initializer=bias_init)

    def project(self, x):
        return ops.matmul(x, self.kernel) + self.bias

    def compose(self, z, child_states, has_child):
        step = nary_tree_lstm_step if self.variant == "n_ary" else child_sum_tree_lstm_step
        h, c = step(
            z, child_states[0], child_states[1], self.recurrent_kernel,
            self.activation, self.recurrent_activation,
        )
        return [h, c]

    def get_config(self):
        init = keras.initializers.serialize
        reg = keras.regularizers.serialize
        return {
            **super().get_config(),
            "variant": self.variant,
            "activation": keras.activations.serialize(self.activation),
            "recurrent_activation": keras.activations.serialize(
                self.recurrent_activation
            ),
            "unit_forget_bias": self.unit_forget_bias,
            "kernel_initializer": init(self.kernel_initializer),
            "recurrent_initializer": init(self.recurrent_initializer),
            "bias_initializer": init(self.bias_initializer),
            "kernel_regularizer": reg(self.kernel_regularizer),
            "recurrent_regularizer": reg(self.recurrent_regularizer),
        }
