"""Drop-in replacement for ``keras.layers.GRU`` on the package's runner."""

import keras

from keras_seqmodels.cells.gru_cell import GRUCell
from keras_seqmodels.layers.drop_in import COMMON, DropInRecurrent, forward_cell_arguments


@keras.saving.register_keras_serializable(package="keras_seqmodels")
class GRU(DropInRecurrent):
    """Gated recurrent unit layer, a drop-in replacement for ``keras.layers.GRU``.

    z = σ(x W_z + h U_z + b_z),  r = σ(x W_r + h U_r + b_r),
    reset after (default): h̃ = tanh(x W_h + b_h + r ⊙ (h U_h + rb_h)),
    reset before: h̃ = tanh(x W_h + (r ⊙ h) U_h + b_h),
    h(t) = z ⊙ h(t-1) + (1 - z) ⊙ h̃.

    ``keras_seqmodels.layers.Recurrent(keras_seqmodels.cells.GRUCell(...))``
    built from Keras's arguments: the same arguments and defaults
    (``reset_after=True``), the same weights (gates ``[z, r, h]``; ``bias``
    ``(2, 3 * units)`` with the recurrent bias in row 1, or ``(3 * units,)``
    with ``reset_after=False``), so ``layer.set_weights(keras_layer.get_weights())``
    gives Keras's outputs, the same ``get_config`` keys, and the same results
    for masks, ``initial_state``, ``return_state`` (``[output, h]``),
    ``go_backwards``, ``stateful`` and dropout (one mask per sequence).

    New relative to ``keras.layers.GRU``: as ``keras_seqmodels.layers.LSTM``
    (the fused loop underneath: on the project's 2-core CPU under heavy
    load, batch 32 x 50 steps, 64 -> 128 units, training ran 1.55x
    (TensorFlow) and 1.27x (JAX) the speed of ``keras.layers.GRU``, BENCHMARKS.md,
    "Drop-in layers"; stateful layers carry their states
    through ``fit`` on JAX; clearer errors; ``fused`` and
    ``precompute_inputs`` as keyword arguments). Both forms of the GRU run
    fused; in inference the reset-before form runs fused everywhere.

    Args:
        units: positive integer, the width of h.
        activation: the candidate's non-linearity, default ``"tanh"``.
        recurrent_activation: the gates' non-linearity, default ``"sigmoid"``.
        use_bias: whether the layer has biases (default True).
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
            the recurrent product while training (one mask per sequence;
            training then runs the generic loop).
        seed: random seed of the dropout masks.
        return_sequences: return the output of every step, ``(batch, time,
            units)``, instead of the last one.
        return_state: also return the final state: ``[output, h]``.
        go_backwards: process the sequence in reverse (and return the reversed
            output sequence, as Keras).
        stateful: carry the final state of a batch into the next (fixed batch
            size); ``reset_states()`` sets it to zero.
        unroll: unroll the time loop (short sequences; the generic loop).
        reset_after: apply the reset gate after the recurrent product (default
            True, Keras's and cuDNN's form) or before it (False).
        use_cudnn: ``"auto"``, True or False, accepted for compatibility and
            ignored: the kernel is chosen as Keras's ``"auto"`` chooses it
            (cuDNN where it applies on a GPU with TensorFlow, here the fused
            loop otherwise); ``fused=False`` runs the generic loop instead.
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

    >>> import numpy as np, keras, keras_seqmodels as ks
    >>> x = np.random.rand(4, 10, 8).astype("float32")
    >>> gru = ks.layers.GRU(16)
    >>> tuple(gru(x).shape)
    (4, 16)
    >>> theirs = keras.layers.GRU(16)
    >>> _ = theirs(x)
    >>> theirs.set_weights(gru.get_weights())
    >>> bool(np.allclose(theirs(x), gru(x), atol=1e-5))
    True

    Reference:
        Cho et al., "Learning phrase representations using RNN encoder-decoder
        for statistical machine translation", EMNLP 2014.
    """

    _cell_keys = (
        "units",
        "activation",
        "recurrent_activation",
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
        "reset_after",
        "seed",
    )

    def __init__(
        self,
        units,
        activation="tanh",
        recurrent_activation="sigmoid",
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
        seed=None,
        return_sequences=False,
        return_state=False,
        go_backwards=False,
        stateful=False,
        unroll=False,
        reset_after=True,
        use_cudnn="auto",
        **kwargs,
    ):
        cell = GRUCell(
            units,
            activation=activation,
            recurrent_activation=recurrent_activation,
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
            reset_after=reset_after,
            seed=seed,
            dtype=kwargs.get("dtype"),
            trainable=kwargs.get("trainable", True),
            name="gru_cell",
        )
        super().__init__(
            cell,
            use_cudnn=use_cudnn,
            return_sequences=return_sequences,
            return_state=return_state,
            go_backwards=go_backwards,
            stateful=stateful,
            unroll=unroll,
            activity_regularizer=activity_regularizer,
            **kwargs,
        )


forward_cell_arguments(GRU, COMMON + ("recurrent_activation", "reset_after"))
