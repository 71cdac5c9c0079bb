"""Drop-in replacement for ``keras.layers.SimpleRNN`` on the package's runner."""

import keras

from keras_seqmodels.cells.elman_cell import ElmanCell
from keras_seqmodels.layers.drop_in import COMMON, DropInRecurrent, forward_cell_arguments


@keras.saving.register_keras_serializable(package="keras_seqmodels")
class SimpleRNN(DropInRecurrent):
    """Fully-connected (Elman) recurrent layer, a drop-in replacement for
    ``keras.layers.SimpleRNN``.

    h(t) = f(x W + h(t-1) U + b)  (f = tanh by default).

    ``keras_seqmodels.layers.Recurrent(keras_seqmodels.cells.ElmanCell(...))``
    built from Keras's arguments: the same arguments and defaults, the same
    weights (``kernel`` ``(features, units)``, ``recurrent_kernel``
    ``(units, units)``, ``bias`` ``(units,)``), so
    ``layer.set_weights(keras_layer.get_weights())`` gives Keras's outputs,
    the same ``get_config`` keys, and the same results for masks,
    ``initial_state``, ``return_state`` (``[output, h]``), ``go_backwards``,
    ``stateful`` and dropout (one mask per sequence).

    New relative to ``keras.layers.SimpleRNN``: with tanh, the fused loop
    underneath in training (TensorFlow and JAX, see ``Recurrent``);
    ``activity_regularizer`` is applied (Keras 3.15's ``SimpleRNN`` accepts
    it and drops it); ``seed`` is stored in the config when set; stateful
    layers carry their states through ``fit`` on JAX; clearer errors;
    ``fused`` and ``precompute_inputs`` as keyword arguments. Like Keras's
    ``SimpleRNN``, it takes no ``use_cudnn``.

    Args:
        units: positive integer, the width of h.
        activation: f, default ``"tanh"``.
        use_bias: whether the layer has a bias (default True).
        kernel_initializer: initializer of ``kernel``, default
            ``"glorot_uniform"``.
        recurrent_initializer: initializer of ``recurrent_kernel``, default
            ``"orthogonal"``.
        bias_initializer: initializer of ``bias``, default ``"zeros"``.
        kernel_regularizer, recurrent_regularizer, bias_regularizer:
            regularizers of the three weights (default None).
        activity_regularizer: regularizer of the layer's outputs.
        kernel_constraint, recurrent_constraint, bias_constraint: constraints
            of the three weights (default None).
        dropout: float in [0, 1), the fraction of the input features dropped
            while training (one mask per sequence).
        recurrent_dropout: float in [0, 1), the fraction of h dropped before
            the recurrent product while training (one mask per sequence).
        return_sequences: return the output of every step, ``(batch, time,
            units)``, instead of the last one.
        return_state: also return the final state: ``[output, h]``.
        go_backwards: process the sequence in reverse (and return the reversed
            output sequence, as Keras).
        stateful: carry the final state of a batch into the next (fixed batch
            size); ``reset_states()`` sets it to zero.
        unroll: unroll the time loop (short sequences; the generic loop).
        seed: random seed of the dropout masks.
        **kwargs: ``name``, ``dtype``, ``trainable``, ``zero_output_for_mask``
            (default False, as Keras), ``fused``, ``precompute_inputs``.

    Call arguments:
        sequences: float tensor ``(batch, time, features)``.
        initial_state: optional list ``[h]`` of one ``(batch, units)`` tensor.
        mask: optional boolean ``(batch, time)``; False marks padding.
        training: whether dropout is active.

    Returns:
        ``(batch, units)``, or ``(batch, time, units)`` with
        ``return_sequences``; with ``return_state``, ``[output, h]``.

    Example:

    >>> import numpy as np, keras_seqmodels as ks
    >>> rnn = ks.layers.SimpleRNN(8, return_sequences=True)
    >>> tuple(rnn(np.zeros((2, 5, 3), "float32")).shape)
    (2, 5, 8)

    Reference:
        Elman, "Finding structure in time", Cognitive Science 1990.
    """

    _cell_keys = (
        "units",
        "activation",
        "use_bias",
        "kernel_initializer",
        "recurrent_initializer",
        "bias_initializer",
        "kernel_regularizer",
        "recurrent_regularizer",
        "bias_regularizer",
        "kernel_constraint",
        "recurrent_constraint",
        "bias_constraint",
        "dropout",
        "recurrent_dropout",
    )
    _optional = {**DropInRecurrent._optional, "seed": None}

    def __init__(
        self,
        units,
        activation="tanh",
        use_bias=True,
        kernel_initializer="glorot_uniform",
        recurrent_initializer="orthogonal",
        bias_initializer="zeros",
        kernel_regularizer=None,
        recurrent_regularizer=None,
        bias_regularizer=None,
        activity_regularizer=None,
        kernel_constraint=None,
        recurrent_constraint=None,
        bias_constraint=None,
        dropout=0.0,
        recurrent_dropout=0.0,
        return_sequences=False,
        return_state=False,
        go_backwards=False,
        stateful=False,
        unroll=False,
        seed=None,
        **kwargs,
    ):
        if "use_cudnn" in kwargs:
            raise ValueError(
                f"{type(self).__name__}: `use_cudnn` is not an argument of SimpleRNN "
                "(as in Keras, only LSTM and GRU take it). "
                f"Received: use_cudnn={kwargs['use_cudnn']!r}"
            )
        cell = ElmanCell(
            units,
            activation=activation,
            use_bias=use_bias,
            kernel_initializer=kernel_initializer,
            recurrent_initializer=recurrent_initializer,
            bias_initializer=bias_initializer,
            kernel_regularizer=kernel_regularizer,
            recurrent_regularizer=recurrent_regularizer,
            bias_regularizer=bias_regularizer,
            kernel_constraint=kernel_constraint,
            recurrent_constraint=recurrent_constraint,
            bias_constraint=bias_constraint,
            dropout=dropout,
            recurrent_dropout=recurrent_dropout,
            seed=seed,
            dtype=kwargs.get("dtype"),
            trainable=kwargs.get("trainable", True),
            name="simple_rnn_cell",
        )
        super().__init__(
            cell,
            return_sequences=return_sequences,
            return_state=return_state,
            go_backwards=go_backwards,
            stateful=stateful,
            unroll=unroll,
            activity_regularizer=activity_regularizer,
            **kwargs,
        )

    @property
    def seed(self):
        """The cell's dropout ``seed``."""
        return self.cell.seed


forward_cell_arguments(SimpleRNN, COMMON)
