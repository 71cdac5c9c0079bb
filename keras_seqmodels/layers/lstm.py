"""Drop-in replacement for ``keras.layers.LSTM`` on the package's runner."""

import keras

from keras_seqmodels.cells.lstm_cell import LSTMCell
from keras_seqmodels.layers.drop_in import COMMON, DropInRecurrent, forward_cell_arguments


@keras.saving.register_keras_serializable(package="keras_seqmodels")
class LSTM(DropInRecurrent):
    """Long short-term memory layer, a drop-in replacement for ``keras.layers.LSTM``.

    i = σ(x W_i + h U_i + b_i),  f = σ(x W_f + h U_f + b_f),
    c(t) = f ⊙ c(t-1) + i ⊙ tanh(x W_g + h U_g + b_g),
    o = σ(x W_o + h U_o + b_o),  h(t) = o ⊙ tanh(c(t)).

    ``keras_seqmodels.layers.Recurrent(keras_seqmodels.cells.LSTMCell(...))``
    built from Keras's arguments: the same arguments and defaults, the same
    weights (``kernel`` ``(features, 4 * units)``, ``recurrent_kernel``
    ``(units, 4 * units)``, ``bias`` ``(4 * units,)``, gates ``[i, f, g, o]``),
    so ``layer.set_weights(keras_layer.get_weights())`` gives Keras's
    outputs, the same ``get_config`` keys, and the same results for masks,
    ``initial_state``, ``return_state`` (``[output, h, c]``),
    ``go_backwards``, ``stateful`` and dropout (one input mask and one
    recurrent mask per sequence, shared over the steps).

    New relative to ``keras.layers.LSTM``:

    - **Faster training on CPU.** With the default activations, and without
      recurrent dropout while training, the steps run in the package's
      fused loop with a hand-written backward pass (TensorFlow and JAX; see
      ``Recurrent``); measured against ``keras.layers.LSTM`` in BENCHMARKS.md
      ("Drop-in layers"): on the project's 2-core CPU under heavy load, at
      batch 32 x 50 steps, 64 -> 128 units, training ran 1.15x (TensorFlow)
      and 1.27x (JAX) the speed of ``keras.layers.LSTM`` (medians of 6
      processes each). On a GPU, cuDNN runs where Keras's layer would
      run it (TensorFlow), and ``jax.experimental.rnn`` in training on JAX.
    - **stateful on JAX.** The carried states are tracked variables of the
      layer: ``fit`` on JAX carries them from batch to batch (Keras 3.15's
      untracked state variables stay at zero there), and ``.keras`` files
      keep them. ``get_weights`` leaves them out, as Keras's layer has none.
    - **Clearer errors** for wrong input ranks, masks, initial states and a
      stateful layer called with another batch size.
    - ``fused`` and ``precompute_inputs`` (``Recurrent``'s switches) may be
      passed as keyword arguments.

    Args:
        units: positive integer, the width of h and c.
        activation: the cell non-linearity, default ``"tanh"``.
        recurrent_activation: the gate non-linearity, default ``"sigmoid"``.
        use_bias: whether the gates have a bias (default True).
        kernel_initializer: initializer of ``kernel``, default
            ``"glorot_uniform"``.
        recurrent_initializer: initializer of ``recurrent_kernel``, default
            ``"orthogonal"``.
        bias_initializer: initializer of ``bias``, default ``"zeros"``.
        unit_forget_bias: if True (default), the forget gate's bias starts at 1
            (the other gates' at ``bias_initializer``'s values, as Keras).
        kernel_regularizer, recurrent_regularizer, bias_regularizer:
            regularizers of the three weights (default None).
        activity_regularizer: regularizer of the layer's outputs.
        kernel_constraint, recurrent_constraint, bias_constraint: constraints
            of the three weights (default None).
        dropout: float in [0, 1), the fraction of the input features dropped
            while training (one mask per sequence).
        recurrent_dropout: float in [0, 1), the fraction of h dropped before
            the recurrent product while training (one mask per sequence;
            training then runs the generic loop, as Keras then leaves cuDNN).
        seed: random seed of the dropout masks.
        return_sequences: return the output of every step, ``(batch, time,
            units)``, instead of the last one.
        return_state: also return the final states: ``[output, h, c]``.
        go_backwards: process the sequence in reverse (and return the reversed
            output sequence, as Keras).
        stateful: carry the final states of a batch into the next (fixed
            batch size); ``reset_states()`` sets them to zero.
        unroll: unroll the time loop (short sequences; the generic loop).
        use_cudnn: ``"auto"``, True or False, accepted for compatibility and
            ignored: the kernel is chosen as Keras's ``"auto"`` chooses it
            (cuDNN where it applies on a GPU, here the fused loop otherwise);
            ``fused=False`` runs the generic ``keras.ops`` loop instead.
        **kwargs: ``name``, ``dtype``, ``trainable``, ``zero_output_for_mask``
            (default False: a masked step repeats the last output, as Keras),
            ``fused``, ``precompute_inputs`` (see ``Recurrent``).

    Call arguments:
        sequences: float tensor ``(batch, time, features)``.
        initial_state: optional list ``[h, c]`` of ``(batch, units)`` tensors.
        mask: optional boolean ``(batch, time)``; False marks padding.
        training: whether dropout is active.

    Returns:
        ``(batch, units)``, or ``(batch, time, units)`` with
        ``return_sequences``; with ``return_state``, ``[output, h, c]``.

    Example:

    >>> import numpy as np, keras, keras_seqmodels as ks
    >>> x = np.random.rand(4, 10, 8).astype("float32")
    >>> lstm = ks.layers.LSTM(16, return_sequences=True, return_state=True)
    >>> out, h, c = lstm(x)
    >>> tuple(out.shape), tuple(c.shape)
    ((4, 10, 16), (4, 16))
    >>> theirs = keras.layers.LSTM(16, return_sequences=True, return_state=True)
    >>> _ = theirs(x)
    >>> theirs.set_weights(lstm.get_weights())
    >>> bool(np.allclose(theirs(x)[0], out, atol=1e-5))
    True

    Reference:
        Hochreiter & Schmidhuber 1997; Gers, Schmidhuber & Cummins 2000
        (forget gate); Jozefowicz et al. 2015 (forget bias 1).
    """

    _cell_keys = (
        "units",
        "activation",
        "recurrent_activation",
        "use_bias",
        "kernel_initializer",
        "recurrent_initializer",
        "bias_initializer",
        "unit_forget_bias",
        "kernel_regularizer",
        "recurrent_regularizer",
        "bias_regularizer",
        "kernel_constraint",
        "recurrent_constraint",
        "bias_constraint",
        "dropout",
        "recurrent_dropout",
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
        unit_forget_bias=True,
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
        use_cudnn="auto",
        **kwargs,
    ):
        cell = LSTMCell(
            units,
            activation=activation,
            recurrent_activation=recurrent_activation,
            use_bias=use_bias,
            kernel_initializer=kernel_initializer,
            recurrent_initializer=recurrent_initializer,
            bias_initializer=bias_initializer,
            unit_forget_bias=unit_forget_bias,
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
            name="lstm_cell",
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


forward_cell_arguments(LSTM, COMMON + ("recurrent_activation", "unit_forget_bias"))
