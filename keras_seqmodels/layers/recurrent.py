"""The package's recurrent runner."""

import keras
from keras import ops, tree

from keras_seqmodels.cells.stacked_cells import StackedCells, check_cells
from keras_seqmodels.layers import backend_rnn as library_rnn
from keras_seqmodels.layers import kernels
from keras_seqmodels.utils import serialization, validation


@keras.saving.register_keras_serializable(package="keras_seqmodels")
class Recurrent(keras.layers.Layer):
    """Runs a recurrent cell over the time axis of a batch of sequences.

    For each time step t: ``output(t), states(t) = cell(x(t), states(t-1))``.

    What it adds to ``keras.layers.RNN``:

    - **Hoisted input projection.** For cells with ``project_inputs`` and
      ``step`` (every cell of this package), ``x W + b`` is computed for all
      time steps in one matrix product before the loop, which then carries
      only the recurrent product (``precompute_inputs=True``).
    - **States of any shape.** States may be nested structures and
      matrix-shaped (a memory matrix); the cell's ``get_initial_state`` gives
      their shapes.
    - **Fused kernels.** ``ElmanCell``, ``LSTMCell`` (with or without
      peepholes), ``GRUCell`` (both forms) and ``GatedCell`` with their
      standard non-linearities (tanh, sigmoid) run, on TensorFlow and JAX, a
      fused loop with a hand-written backward pass (the weight gradients as
      single products over all steps), and where it applies the backend
      library's kernel first (cuDNN on a GPU; ``torch.lstm`` / ``torch.gru``
      / ``torch.rnn_tanh`` on PyTorch). They give the generic loop's results
      (masks, initial states and their gradients, ``go_backwards``,
      ``return_state``, input dropout, mixed precision, ``stateful``, XLA)
      and are chosen in order from ``keras_seqmodels.layers.kernels``; which
      one runs where, and the measurements behind it, are in docs/layers.md.
      Other cells, subclasses of these, ``unroll=True``, recurrent dropout
      while training, or ``fused=False`` run the generic loop.
    - **Robustness.** Zero-length sequences return the initial state; rows
      that are entirely masked keep their initial state and output zeros; a
      stateful layer called with another batch size raises a clear error.

    Args:
        cell: a cell following the Keras cell contract (``call(inputs,
            states, training)`` returning ``(output, new_states)``,
            ``state_size``, ``output_size``), e.g. ``keras_seqmodels.cells.LSTMCell``,
            or a list of cells, stacked within each step by
            ``keras_seqmodels.cells.StackedCells`` (as ``keras.layers.RNN``
            stacks a list).
        return_sequences: return the output of every step (``(batch, time,
            output_size)``) instead of the last one (``(batch, output_size)``).
        return_state: also return the final states (flattened, after the
            output).
        go_backwards: process the sequence in reverse and return the reversed
            output sequence (as Keras).
        stateful: keep the final states of one batch as the initial states of
            the next (fixed batch size; call ``reset_states()`` between
            streams).
        unroll: unroll the time loop (short sequences only).
        precompute_inputs: in the generic loop, hoist the input projection
            out of the loop for cells that support it. Default False: on CPU
            it measured slower (docs/layers.md); set True where it wins.
        zero_output_for_mask: masked steps output zeros (default True); if
            False they repeat the last unmasked output, as Keras does.
        fused: use the fused kernel where it applies (default True); False
            always runs the generic loop.

    Call arguments:
        sequences: float tensor ``(batch, time, features)``.
        initial_state: optional list of initial states.
        mask: optional boolean ``(batch, time)``; False marks padding.
        training: whether dropout is active.

    Masking: padded steps neither change the states nor produce outputs, so a
    padded batch gives, for each sequence, what that sequence gives alone.

    Example:

    >>> import numpy as np, keras_seqmodels as ks
    >>> lstm = ks.layers.Recurrent(ks.cells.LSTMCell(16), return_state=True)
    >>> out, h, c = lstm(np.random.rand(4, 10, 8).astype("float32"))
    >>> out.shape, c.shape
    ((4, 16), (4, 16))

    Reference:
        Goodfellow, Bengio & Courville, Deep Learning, chapter 10.
    """

    # The kernels each call tries in order (``kernels.tune`` gives a layer
    # its own, for tests and benchmarks).
    _kernels = kernels.KERNELS

    def __init__(
        self,
        cell,
        return_sequences=False,
        return_state=False,
        go_backwards=False,
        stateful=False,
        unroll=False,
        precompute_inputs=False,
        zero_output_for_mask=True,
        fused=True,
        **kwargs,
    ):
        name = type(self).__name__
        for arg in ("dropout", "recurrent_dropout"):
            if arg in kwargs:
                # Keras's RNN takes no dropout either; its message
                # ("Unrecognized keyword arguments") does not say where it goes.
                raise ValueError(
                    f"{name}: `{arg}` is an argument of the cell, not of the "
                    f"runner. Pass it to the cell, e.g. `{name}(LSTMCell(16, "
                    f"{arg}=0.2))`, or use `keras_seqmodels.layers.LSTM(16, "
                    f"{arg}=0.2)` (also GRU, SimpleRNN). Received: {arg}={kwargs[arg]!r}"
                )
        super().__init__(**kwargs)
        if isinstance(cell, (list, tuple)):
            # As keras.layers.RNN: a list of cells runs as one stacked cell.
            check_cells(name, "cell", list(cell))
            cell = StackedCells(list(cell)) if len(cell) > 1 else cell[0]
        validation.check_cell_instance(name, "cell", cell)
        if not callable(getattr(cell, "call", None)) or not hasattr(cell, "state_size"):
            raise ValueError(
                f"{name}: `cell` must be a Keras layer with `call(inputs, "
                f"states)` and a `state_size` property, or a list of them. "
                f"Received: cell={cell!r}"
            )
        self.cell = cell
        self.return_sequences = bool(return_sequences)
        self.return_state = bool(return_state)
        self.go_backwards = bool(go_backwards)
        self.stateful = bool(stateful)
        self.unroll = bool(unroll)
        self.precompute_inputs = bool(precompute_inputs)
        self.zero_output_for_mask = bool(zero_output_for_mask)
        self.fused = bool(fused)
        self.supports_masking = True
        self.states = None
        self._expected_batch_size = None

    # Shapes --------------------------------------------------------------

    def _check_sequences_shape(self, shape):
        validation.check_rank(self.name, "sequences", shape, 3, "(batch, time, features)")
        validation.check_last_dim_known(self.name, "sequences", shape)

    def build(self, sequences_shape, initial_state_shape=None):
        self._check_sequences_shape(sequences_shape)
        self._input_features = sequences_shape[-1]
        if not self.cell.built:
            self.cell.build((sequences_shape[0], sequences_shape[-1]))
        if library_rnn.blocks_xla(self):
            self.supports_jit = False
        if self.stateful:
            batch = sequences_shape[0]
            if batch is None:
                raise ValueError(
                    f"{self.name}: stateful=True needs a fixed batch size. "
                    "Pass `batch_size` to keras.Input (or `batch_shape`). "
                    f"Received input shape {tuple(sequences_shape)}"
                )
            self._expected_batch_size = batch
            self._create_state_variables(batch)

    def _create_state_variables(self, batch):
        # As keras.layers.RNN: the carried states are variables the layer does
        # not track, so they are not weights (get_weights, set_weights and
        # weight files hold Keras's arrays and nothing else). `variables` lists
        # them, which carries them through a compiled `fit` on JAX.
        states = tree.map_structure(
            lambda s: keras.Variable(s, trainable=False, dtype=s.dtype, name="state"),
            self._initial_state(batch),
        )
        object.__setattr__(self, "states", states)

    @property
    def variables(self):
        variables = super().variables
        if self.stateful and self.states is not None:
            seen = {id(v) for v in variables}
            variables += [v for v in tree.flatten(self.states) if id(v) not in seen]
        return variables

    def _state_shapes(self, batch):
        sizes = self.cell.state_size
        flat = list(sizes) if isinstance(sizes, (list, tuple)) else [sizes]
        if all(isinstance(s, int) for s in flat):
            return [(batch, s) for s in flat]
        init = self._initial_state(batch if batch is not None else 1)
        return [(batch,) + tuple(s.shape[1:]) for s in tree.flatten(init)]

    def compute_output_shape(self, sequences_shape, initial_state_shape=None):
        batch, time = sequences_shape[0], sequences_shape[1]
        out = kernels.output_shape(self.cell)
        output_shape = (batch, time) + out if self.return_sequences else (batch,) + out
        if self.return_state:
            return [output_shape] + self._state_shapes(batch)
        return output_shape

    def compute_mask(self, sequences, mask=None):
        output_mask = mask if self.return_sequences else None
        if self.return_state:
            n_states = len(tree.flatten(self._state_shapes(None)))
            return [output_mask] + [None] * n_states
        return output_mask

    # States --------------------------------------------------------------

    def _initial_state(self, batch_size):
        get = getattr(self.cell, "get_initial_state", None)
        if get is not None:
            states = get(batch_size=batch_size)
        else:
            sizes = self.cell.state_size
            sizes = list(sizes) if isinstance(sizes, (list, tuple)) else [sizes]
            states = [ops.zeros((batch_size, s), dtype=self.compute_dtype) for s in sizes]
        if not tree.is_nested(states):
            states = [states]
        return list(states)

    def reset_states(self):
        """Set the carried states of a stateful layer back to zeros."""
        if self.states is None:
            return
        for var in tree.flatten(self.states):
            var.assign(ops.zeros(var.shape, dtype=var.dtype))

    reset_state = reset_states

    # Call ----------------------------------------------------------------

    def _check_built_features(self, shape):
        # A built layer is not rebuilt, so a later call with another rank or
        # width would otherwise fail deep in the loop with a backend error.
        self._check_sequences_shape(shape)
        expected = getattr(self, "_input_features", None)
        if expected is not None and shape[-1] != expected:
            raise ValueError(
                f"{self.name}: the last dimension of `sequences` must be "
                f"{expected}, the width this layer was built with. Received "
                f"shape {tuple(shape)}"
            )

    def call(self, sequences, initial_state=None, mask=None, training=False):
        self._check_built_features(sequences.shape)
        validation.check_float_dtype(self.name, "sequences", sequences.dtype)
        if initial_state is not None:
            expected = self._state_shapes(sequences.shape[0])
            _check_initial_state(self.name, expected, initial_state)
        if mask is not None:
            _check_mask(self.name, sequences, mask)
        if self.stateful:
            _check_stateful_batch(self.name, self._expected_batch_size, sequences.shape[0])
        if initial_state is None:
            if self.stateful:
                initial_state = tree.map_structure(lambda v: v.value, self.states)
            else:
                initial_state = self._initial_state(ops.shape(sequences)[0])
        if not tree.is_nested(initial_state):
            initial_state = [initial_state]
        if isinstance(self.cell, StackedCells):
            initial_state = self.cell.group_states(initial_state)
        initial_state = tree.map_structure(
            lambda s: ops.cast(s, self.cell.compute_dtype), list(initial_state)
        )

        if sequences.shape[1] == 0:
            return _empty_result(self, sequences, initial_state)

        call = kernels.Call(sequences, initial_state, mask, training)
        return self._finish(kernels.choose(self._kernels, self, call).run())

    def _finish(self, result):
        if self.stateful:
            for var, value in zip(tree.flatten(self.states), tree.flatten(result.states)):
                var.assign(ops.cast(value, var.dtype))
        output = result.sequence() if self.return_sequences else result.last
        output = ops.cast(output, self.compute_dtype)
        if self.return_state:
            return [output] + list(tree.flatten(result.states))
        return output

    # Serialization -------------------------------------------------------

    def get_config(self):
        config = {
            "cell": keras.saving.serialize_keras_object(self.cell),
            "return_sequences": self.return_sequences,
            "return_state": self.return_state,
            "go_backwards": self.go_backwards,
            "stateful": self.stateful,
            "unroll": self.unroll,
            "precompute_inputs": self.precompute_inputs,
            "zero_output_for_mask": self.zero_output_for_mask,
            "fused": self.fused,
        }
        return {**super().get_config(), **config}

    @classmethod
    def from_config(cls, config, custom_objects=None):
        return cls(**serialization.deserialize_nested(config, ("cell",), custom_objects))


def _empty_result(layer, sequences, states):
    batch = ops.shape(sequences)[0]
    out = kernels.output_shape(layer.cell)
    if layer.return_sequences:
        output = ops.zeros((batch, 0) + out, dtype=layer.compute_dtype)
    else:
        output = ops.zeros((batch,) + out, dtype=layer.compute_dtype)
    if layer.return_state:
        return [output] + list(tree.flatten(states))
    return output


def _check_mask(name, sequences, mask):
    mshape = tuple(mask.shape)
    sshape = tuple(sequences.shape)
    if len(mshape) != 2 or any(
        m is not None and s is not None and m != s for m, s in zip(mshape, sshape[:2])
    ):
        raise ValueError(
            f"{name}: `mask` must have shape (batch, time) = "
            f"{sshape[:2]} matching `sequences`. Received mask shape {mshape}"
        )


def _check_initial_state(name, expected, initial_state):
    flat = tree.flatten(initial_state)
    received = [tuple(s.shape) for s in flat]
    matches = len(flat) == len(expected) and all(
        len(r) == len(e) and all(a is None or b is None or a == b for a, b in zip(r, e))
        for r, e in zip(received, expected)
    )
    if not matches:
        raise ValueError(
            f"{name}: `initial_state` must be a list of "
            f"{len(expected)} tensor(s) of shapes {expected}. Received "
            f"shapes {received}"
        )


def _check_stateful_batch(name, expected, batch):
    if batch is not None and batch != expected:
        raise ValueError(
            f"{name}: this stateful layer carries states for a "
            f"batch of {expected} sequences, but "
            f"was called with a batch of {batch}. Use the same batch "
            "size for every call, or make a new layer."
        )
