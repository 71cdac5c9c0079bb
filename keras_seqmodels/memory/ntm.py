"""The Neural Turing Machine layer: ``NTMCell`` run over a sequence."""

import keras
from keras import ops

from keras_seqmodels.layers.recurrent import Recurrent
from keras_seqmodels.memory.ntm_cell import NTMCell
from keras_seqmodels.utils.validation import check_rank

_CELL_ARGS = (
    "units",
    "memory_size",
    "memory_width",
    "read_heads",
    "write_heads",
    "shift_range",
    "controller",
    "activation",
    "learn_initial_state",
    "read_mode",
    "kernel_initializer",
    "recurrent_initializer",
    "bias_initializer",
)


@keras.saving.register_keras_serializable(package="keras_seqmodels")
class NTM(keras.layers.Layer):
    """Neural Turing Machine over a sequence: ``NTMCell`` in ``Recurrent``.

    For each step t: ``[h(t), r(t)], states(t) = NTMCell(x(t), states(t-1))``
    with states = controller state, memory matrix ``(N, M)``, read and write
    weightings and the last reads (see ``NTMCell`` for the equations). With
    ``read_mode="hard"`` the layer draws the sampling's uniform numbers for
    all steps before the time loop (inference takes the most likely slot).

    New relative to Keras: an external-memory recurrent layer; the runner
    carries matrix-shaped states and supports masking like any of the
    package's recurrent layers.

    Args:
        units, memory_size, memory_width, read_heads, write_heads,
        shift_range, controller, activation, learn_initial_state, read_mode,
        kernel_initializer, recurrent_initializer, bias_initializer: as in
            ``NTMCell``.
        return_sequences: return every step's output.
        return_state: also return the final states (controller, memory,
            read weights, write weights, reads).
        seed: seed of the hard reads' sampling.

    Call arguments:
        sequences: float ``(batch, time, features)``.
        mask: optional boolean ``(batch, time)``.
        training: whether hard reads sample.

    Returns:
        ``(batch, [time,] units + read_heads * memory_width)`` (then the
        states with ``return_state``).

    Example:

    >>> import numpy as np, keras_seqmodels as ks
    >>> ntm = ks.memory.NTM(16, memory_size=8, memory_width=4, return_sequences=True)
    >>> tuple(ntm(np.ones((2, 5, 3), "float32")).shape)
    (2, 5, 20)

    Reference:
        Graves, Wayne & Danihelka, "Neural Turing Machines", arXiv:1410.5401.
    """

    def __init__(
        self,
        units,
        memory_size=128,
        memory_width=20,
        read_heads=1,
        write_heads=1,
        shift_range=1,
        controller="lstm",
        activation="tanh",
        learn_initial_state=True,
        read_mode="soft",
        kernel_initializer="glorot_uniform",
        recurrent_initializer="orthogonal",
        bias_initializer="zeros",
        return_sequences=False,
        return_state=False,
        seed=None,
        **kwargs,
    ):
        super().__init__(**kwargs)
        cell_args = dict(
            units=units,
            memory_size=memory_size,
            memory_width=memory_width,
            read_heads=read_heads,
            write_heads=write_heads,
            shift_range=shift_range,
            controller=controller,
            activation=activation,
            learn_initial_state=learn_initial_state,
            read_mode=read_mode,
            kernel_initializer=kernel_initializer,
            recurrent_initializer=recurrent_initializer,
            bias_initializer=bias_initializer,
        )
        self.cell = NTMCell(**cell_args, dtype=self.dtype_policy, name="ntm_cell")
        self.return_sequences = bool(return_sequences)
        self.return_state = bool(return_state)
        self.seed = seed
        self.seed_generator = keras.random.SeedGenerator(seed=seed)
        self.rnn = Recurrent(
            self.cell,
            return_sequences=return_sequences,
            return_state=return_state,
            dtype=self.dtype_policy,
            name="recurrent",
        )
        self.supports_masking = True

    def build(self, sequences_shape):
        check_rank(self.name, "sequences", sequences_shape, 3, "(batch, time, features)")
        features = sequences_shape[-1]
        if self.cell.read_mode == "hard" and features is not None:
            features = features + self.cell.read_heads
        self.rnn.build(tuple(sequences_shape[:-1]) + (features,))

    def call(self, sequences, mask=None, training=False):
        if self.cell.read_mode == "hard":
            shape = tuple(ops.shape(sequences)[:-1]) + (self.cell.read_heads,)
            if training:
                uniforms = keras.random.uniform(
                    shape, dtype=sequences.dtype, seed=self.seed_generator
                )
            else:
                uniforms = ops.zeros(shape, dtype=sequences.dtype)
            sequences = ops.concatenate([sequences, uniforms], axis=-1)
        try:
            return self.rnn(sequences, mask=mask, training=training)
        except ValueError as err:  # name this layer, not its inner runner
            raise ValueError(f"{self.name} (NTM): {err}") from None

    def compute_output_shape(self, sequences_shape):
        features = sequences_shape[-1]
        if self.cell.read_mode == "hard" and features is not None:
            features = features + self.cell.read_heads
        return self.rnn.compute_output_shape(tuple(sequences_shape[:-1]) + (features,))

    def compute_mask(self, sequences, mask=None):
        return self.rnn.compute_mask(sequences, mask)

    def get_config(self):
        cell_config = self.cell.get_config()
        config = {k: cell_config[k] for k in _CELL_ARGS}
        config.update(
            return_sequences=self.return_sequences,
            return_state=self.return_state,
            seed=self.seed,
        )
        return {**super().get_config(), **config}
