"""Deep-transition RNN cell: MLP blocks inside one time step."""

import keras
from keras import ops

from keras_seqmodels.cells.recurrent_cell import unpack_single_state
from keras_seqmodels.utils import validation


def _check_sizes(arg, value):
    if not isinstance(value, (list, tuple)):
        raise ValueError(
            f"DeepTransitionCell: `{arg}` must be a list of positive integers "
            f"(the widths of the MLP's layers). Received: {arg}={value!r}"
        )
    for v in value:
        validation.check_positive_int("DeepTransitionCell", arg, v)
    return [int(v) for v in value]


@keras.saving.register_keras_serializable(package="keras_seqmodels")
class DeepTransitionCell(keras.layers.Layer):
    """RNN cell whose input, transition and output blocks are MLPs.

    With g = f (the activation) and the MLPs' layer widths given by
    ``input_layers``, ``transition_layers`` and ``output_layers``:

        x'(t) = MLP_in(x(t)),
        a_1 = f(U x'(t) + W h(t-1) + b),   a_{l+1} = f(a_l V_l + c_l),
        h(t) = f(a_L V_L + c_L [+ h(t-1) W_s]),
        o(t) = MLP_out(h(t)).

    Each block can be empty (no layers), which gives back the shallow Elman
    transition. Deepening the transition lengthens the shortest path from
    h(t-1) to h(t); ``skip=True`` adds the direct term h(t-1) W_s to the last
    layer, which restores a path of one matrix (the skip connection of
    Pascanu et al.'s DT(S)-RNN). Stacking (the other way to make an RNN deep)
    is done by stacking ``Recurrent`` layers or with
    ``keras.layers.StackedRNNCells``. Not in Keras.

    Args:
        units: positive integer, width of h.
        transition_layers: widths of the hidden layers of the hidden-to-hidden
            MLP (between h(t-1) and h(t)); ``[]`` for a shallow transition.
        input_layers: widths of the input MLP's layers (``[]``: none).
        output_layers: widths of the output MLP's layers (``[]``: the cell
            outputs h(t)); its last layer uses ``output_activation``.
        skip: add the shortcut h(t-1) W_s (needs ``transition_layers``).
        activation: f, default ``"tanh"``.
        output_activation: activation of the last output layer (default
            linear).
        kernel_initializer, recurrent_initializer, bias_initializer:
            initializers of U (and every MLP kernel), W and W_s, and biases.

    Call arguments:
        inputs: ``(batch, features)``; states: ``[h]``.

    Returns:
        ``(o(t), [h(t)])``.

    Example:

    >>> import numpy as np, keras_seqmodels as ks
    >>> cell = ks.cells.DeepTransitionCell(8, transition_layers=[16], skip=True,
    ...                                    output_layers=[4])
    >>> ks.layers.Recurrent(cell)(np.ones((2, 5, 3), "float32")).shape
    (2, 4)

    Reference:
        Pascanu, Gulcehre, Cho & Bengio, "How to construct deep recurrent
        neural networks", ICLR 2014; Deep Learning, section 10.5.
    """

    def __init__(
        self,
        units,
        transition_layers=(),
        input_layers=(),
        output_layers=(),
        skip=False,
        activation="tanh",
        output_activation=None,
        kernel_initializer="glorot_uniform",
        recurrent_initializer="orthogonal",
        bias_initializer="zeros",
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.units = validation.check_positive_int("DeepTransitionCell", "units", units)
        self.transition_layers = _check_sizes("transition_layers", transition_layers)
        self.input_layers = _check_sizes("input_layers", input_layers)
        self.output_layers = _check_sizes("output_layers", output_layers)
        self.skip = bool(skip)
        if self.skip and not self.transition_layers:
            raise ValueError(
                "DeepTransitionCell: `skip=True` needs a deep transition "
                "(non-empty `transition_layers`); a shallow one has no path "
                "to shorten. Received: transition_layers=[]"
            )
        self.activation = keras.activations.get(activation)
        self.output_activation = keras.activations.get(output_activation)
        self.kernel_initializer = keras.initializers.get(kernel_initializer)
        self.recurrent_initializer = keras.initializers.get(recurrent_initializer)
        self.bias_initializer = keras.initializers.get(bias_initializer)

        def dense(width, activation, name):
            return keras.layers.Dense(
                width,
                activation=activation,
                kernel_initializer=self.kernel_initializer,
                bias_initializer=self.bias_initializer,
                dtype=self.dtype_policy,
                name=name,
            )

        self.input_mlp = [
            dense(w, self.activation, f"input_{i}") for i, w in enumerate(self.input_layers)
        ]
        widths = self.transition_layers[1:] + [self.units]
        self.transition_mlp = (
            [dense(w, None, f"transition_{i + 1}") for i, w in enumerate(widths)]
            if self.transition_layers
            else []
        )
        n_out = len(self.output_layers)
        self.output_mlp = [
            dense(w, self.output_activation if i == n_out - 1 else self.activation, f"output_{i}")
            for i, w in enumerate(self.output_layers)
        ]

    @property
    def state_size(self):
        return self.units

    @property
    def output_size(self):
        return self.output_layers[-1] if self.output_layers else self.units

    def build(self, input_shape):
        if input_shape is None or len(input_shape) != 2:
            raise ValueError(
                "DeepTransitionCell: a cell's step input must have rank 2, "
                f"(batch, features). Received shape {input_shape}"
            )
        validation.check_last_dim_known("DeepTransitionCell", "inputs", input_shape)
        width = input_shape[-1]
        for layer in self.input_mlp:
            layer.build((None, width))
            width = layer.units
        first = self.transition_layers[0] if self.transition_layers else self.units
        self.kernel = self.add_weight(
            shape=(width, first), name="kernel", initializer=self.kernel_initializer
        )
        self.recurrent_kernel = self.add_weight(
            shape=(self.units, first),
            name="recurrent_kernel",
            initializer=self.recurrent_initializer,
        )
        self.bias = self.add_weight(shape=(first,), name="bias", initializer=self.bias_initializer)
        width = first
        for layer in self.transition_mlp:
            layer.build((None, width))
            width = layer.units
        if self.skip:
            self.skip_kernel = self.add_weight(
                shape=(self.units, self.units),
                name="skip_kernel",
                initializer=self.recurrent_initializer,
            )
        width = self.units
        for layer in self.output_mlp:
            layer.build((None, width))
            width = layer.units

    def call(self, inputs, states, training=False):
        h_prev = unpack_single_state(states)
        x = inputs
        for layer in self.input_mlp:
            x = layer(x)
        a = self.activation(
            ops.matmul(x, self.kernel) + ops.matmul(h_prev, self.recurrent_kernel) + self.bias
        )
        for i, layer in enumerate(self.transition_mlp):
            pre = layer(a)
            if self.skip and i == len(self.transition_mlp) - 1:
                pre = pre + ops.matmul(h_prev, self.skip_kernel)
            a = self.activation(pre)
        h = a
        o = h
        for layer in self.output_mlp:
            o = layer(o)
        return o, [h]

    def get_initial_state(self, batch_size=None):
        return [ops.zeros((batch_size, self.units), dtype=self.compute_dtype)]

    def get_config(self):
        config = {
            "units": self.units,
            "transition_layers": self.transition_layers,
            "input_layers": self.input_layers,
            "output_layers": self.output_layers,
            "skip": self.skip,
            "activation": keras.activations.serialize(self.activation),
            "output_activation": keras.activations.serialize(self.output_activation),
            "kernel_initializer": keras.initializers.serialize(self.kernel_initializer),
            "recurrent_initializer": keras.initializers.serialize(self.recurrent_initializer),
            "bias_initializer": keras.initializers.serialize(self.bias_initializer),
        }
        return {**super().get_config(), **config}
