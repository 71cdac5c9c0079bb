"""The package's recurrent runner."""

import keras
from keras import ops, tree

from keras_seqmodels._compat import DropoutRNNCell, backend_rnn
from keras_seqmodels.cells.stacked_cells import StackedCells, check_cells
from keras_seqmodels.layers import backend_rnn as library_rnn
from keras_seqmodels.layers import fused_rnn
from keras_seqmodels.utils import validation


def _is_projected(cell):
    return callable(getattr(cell, "project_inputs", None)) and callable(getattr(cell, "step", None))


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
    - **Fused training path.** For ``ElmanCell``, ``LSTMCell`` (with or
      without peepholes), ``GRUCell`` (both forms) and ``GatedCell`` with
      their standard non-linearities (tanh, sigmoid), on the TensorFlow and
      JAX backends, the loop runs a fused kernel with a hand-written
      backward pass: the reverse loop carries only ``dh`` (and ``dc``), and
      the weight gradients are single products over all steps after it
      (``dW = X^T dG``, ``dU = H^T dG``) instead of four products per step.
      It is used automatically and gives the generic loop's results (masks
      with holes, initial states and their gradients, ``go_backwards``,
      ``return_state``, input dropout, mixed precision, ``stateful``, XLA).
      On TensorFlow, when the number of steps is known when the model is
      built, the forward and the backward loop are each compiled with XLA
      (one compiled kernel per loop instead of one graph operation per
      step and gate). At batch size 1 to 4, and at any batch size with
      JAX on a GPU, the input product ``x W + b`` is taken for all steps
      before the loop, one product per gate. In inference
      (``training=False``) the fused forward runs where it measured faster
      than the generic loop: every fused cell with JAX on a CPU or a GPU,
      the reset-before ``GRUCell`` always, every fused cell when the loop is
      compiled with XLA (TensorFlow, known length) or at batch size 1 to 4
      (JAX); otherwise inference runs the generic loop. With JAX on a CPU
      the GRU's and the LSTM's loop carry a small batch as two blocks of
      rows that run on two cores at once (``fused_rnn.row_groups``). On
      TensorFlow, and for that JAX LSTM, the reverse loop runs as two loops
      over halves of the steps, so the weight gradients of the later half
      are computed beside the loop over the earlier half. It is
      not used, and the generic loop runs instead, for other cells, other
      activations, subclasses of these cells, ``unroll=True``, recurrent
      dropout while training, the PyTorch backend, or ``fused=False``.
    - **Backend library kernels.** Before the fused path, ``LSTMCell``
      (no peepholes) and ``GRUCell(reset_after=True)`` on TensorFlow run
      through cuDNN (``CudnnRNNV3``, packed as Keras's own layers do) when
      TensorFlow sees a GPU; ``LSTMCell`` (no peepholes) on JAX runs through
      ``jax.experimental.rnn.lstm``
      (cuDNN) when JAX runs on a GPU in float32 and the call trains (in
      inference the fused loop with the input product hoisted measured
      faster there; ``jax.experimental.rnn`` has no GRU), and ``LSTMCell`` (no peepholes),
      ``GRUCell(reset_after=True)`` and ``ElmanCell`` on PyTorch run through
      ``torch.lstm`` / ``torch.gru`` / ``torch.rnn_tanh`` (native code on
      CPU, cuDNN on CUDA); same conditions as
      the fused path, float32 or float64, and a right-padded mask or none
      (a mask with holes runs the loops above). The results are the generic
      loop's. See ``keras_seqmodels.layers.backend_rnn``.
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
            out of the loop for cells that support it (the fused loop keeps
            it inside and computes its gradients as single products).
            Default False: measured on CPU with both the TensorFlow and the
            JAX backend (XLA), the hoisted product plus
            the wider loop input cost more than the in-loop product (see
            BENCHMARKS.md); set True where it wins (e.g. long sequences on
            an accelerator).
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
        validation.check_rank(
            self.name,
            "sequences",
            shape,
            3,
            "(batch, time, features)",
        )
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
            init = self._initial_state(batch)
            self.states = tree.map_structure(
                lambda s: self.add_weight(
                    shape=tuple(s.shape),
                    initializer="zeros",
                    trainable=False,
                    name="state",
                    dtype=s.dtype,
                ),
                init,
            )

    def _output_size(self):
        size = getattr(self.cell, "output_size", None)
        if size is None:
            size = self.cell.state_size
            size = size[0] if isinstance(size, (list, tuple)) else size
        return size

    def _state_shapes(self, batch):
        sizes = self.cell.state_size
        flat = list(sizes) if isinstance(sizes, (list, tuple)) else [sizes]
        if all(isinstance(s, int) for s in flat):
            return [(batch, s) for s in flat]
        init = self._initial_state(batch if batch is not None else 1)
        return [(batch,) + tuple(s.shape[1:]) for s in tree.flatten(init)]

    def compute_output_shape(self, sequences_shape, initial_state_shape=None):
        batch, time = sequences_shape[0], sequences_shape[1]
        out = self._output_size()
        out = (out,) if isinstance(out, int) else tuple(out)
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

    def _check_mask(self, sequences, mask):
        mshape = tuple(mask.shape)
        sshape = tuple(sequences.shape)
        if len(mshape) != 2 or any(
            m is not None and s is not None and m != s for m, s in zip(mshape, sshape[:2])
        ):
            raise ValueError(
                f"{self.name}: `mask` must have shape (batch, time) = "
                f"{sshape[:2]} matching `sequences`. Received mask shape {mshape}"
            )

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

    def _check_initial_state(self, sequences, initial_state):
        expected = self._state_shapes(sequences.shape[0])
        flat = tree.flatten(initial_state)
        received = [tuple(s.shape) for s in flat]
        matches = len(flat) == len(expected) and all(
            len(r) == len(e) and all(a is None or b is None or a == b for a, b in zip(r, e))
            for r, e in zip(received, expected)
        )
        if not matches:
            raise ValueError(
                f"{self.name}: `initial_state` must be a list of "
                f"{len(expected)} tensor(s) of shapes {expected}. Received "
                f"shapes {received}"
            )

    def call(self, sequences, initial_state=None, mask=None, training=False):
        self._check_built_features(sequences.shape)
        validation.check_float_dtype(self.name, "sequences", sequences.dtype)
        if initial_state is not None:
            self._check_initial_state(sequences, initial_state)
        if mask is not None:
            self._check_mask(sequences, mask)
        if self.stateful:
            batch = sequences.shape[0]
            if batch is not None and batch != self._expected_batch_size:
                raise ValueError(
                    f"{self.name}: this stateful layer carries states for a "
                    f"batch of {self._expected_batch_size} sequences, but "
                    f"was called with a batch of {batch}. Use the same batch "
                    "size for every call, or make a new layer."
                )
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
            return self._empty_result(sequences, initial_state)

        # The backend library's fused kernel (cuDNN on a GPU), where it applies.
        result = library_rnn.run(self, sequences, initial_state, mask, training)
        if result is not None:
            return result

        kind = self._fused_kind(training, sequences)
        if kind is not None:
            return self._call_fused(kind, sequences, initial_state, mask, training)

        cell = self.cell
        uses_dropout = isinstance(cell, DropoutRNNCell)
        if uses_dropout:
            cell.reset_dropout_mask()
            cell.reset_recurrent_dropout_mask()
        if self.precompute_inputs and _is_projected(cell):
            x = sequences
            if training and getattr(cell, "dropout", 0) > 0:
                x = x * ops.expand_dims(cell.get_dropout_mask(x[:, 0, :]), 1)
            if training and getattr(cell, "recurrent_dropout", 0) > 0:
                cell.get_recurrent_dropout_mask(tree.flatten(initial_state)[0])
            # Project in time-major order: transposing the narrow input is
            # cheaper than transposing the wide projection inside the loop.
            loop_inputs = cell.project_inputs(ops.transpose(x, (1, 0, 2)))
            time_major = True

            def cell_step(z_t, states):
                return cell.step(z_t, list(states), training=training)

        else:
            loop_inputs = sequences
            time_major = False
            if uses_dropout and training:
                cell.get_dropout_mask(sequences[:, 0, :])
                cell.get_recurrent_dropout_mask(tree.flatten(initial_state)[0])
            kwargs = {"training": training} if _has_training_arg(cell) else {}

            def cell_step(x_t, states):
                return cell(x_t, list(states), **kwargs)

        if mask is None:

            def step(inputs_t, states):
                output, new_states = cell_step(inputs_t, states)
                return output, _as_list(new_states, states)

            loop_states = initial_state
        else:
            # Masking is done here rather than by the backend loop so that it
            # works for states of any rank and shape on every backend. The
            # last unmasked output is carried as an extra state.
            mask = ops.cast(mask, loop_inputs.dtype)
            mask = ops.transpose(mask, (1, 0)) if time_major else mask
            # The mask rides along as one more feature, not as a second loop
            # input: TensorFlow's loop reads ``inputs.shape`` when the number
            # of steps is unknown (a padded batch in a tf.function, a
            # SavedModel signature), which fails on a tuple.
            loop_inputs = ops.concatenate([loop_inputs, ops.expand_dims(mask, -1)], axis=-1)
            batch = ops.shape(sequences)[0]
            out_size = self._output_size()
            out_size = (out_size,) if isinstance(out_size, int) else tuple(out_size)
            loop_states = list(initial_state) + [
                ops.zeros((batch,) + out_size, dtype=self.cell.compute_dtype)
            ]
            zero_output = self.zero_output_for_mask

            def step(inputs_t, states):
                x_t, m_t = inputs_t[..., :-1], inputs_t[..., -1:]
                states = list(states)
                core, previous = states[:-1], states[-1]
                output, new_states = cell_step(x_t, core)
                new_states = _as_list(new_states, core)
                new_states = tree.map_structure(
                    lambda new, old: _select(m_t, new, old), new_states, core
                )
                kept = _select(m_t, output, previous)
                emitted = _select(m_t, output, ops.zeros_like(output)) if zero_output else kept
                return emitted, new_states + [kept]

        def run_loop():
            last, outs, new_states = backend_rnn(
                step,
                loop_inputs,
                loop_states,
                go_backwards=self.go_backwards,
                mask=None,
                time_major=time_major,
                unroll=self.unroll,
                input_length=sequences.shape[1],
                return_all_outputs=self.return_sequences,
            )
            return last, outs, list(new_states)

        result = self._run_guarded(run_loop, sequences, loop_states, time_major)
        if uses_dropout:
            cell.reset_dropout_mask()
            cell.reset_recurrent_dropout_mask()
        return self._finish(result, mask, time_major)

    def _run_guarded(self, run_loop, sequences, loop_states, time_major):
        if sequences.shape[1] is None and keras.backend.backend() == "tensorflow":
            # A length known only at run time may be zero (an empty string
            # in a served signature); TensorFlow's loop cannot stack an empty
            # list of unknown shape, so zero steps skip the loop.
            return ops.cond(
                ops.shape(sequences)[1] > 0,
                run_loop,
                lambda: self._no_steps(sequences, loop_states, time_major),
            )
        return run_loop()

    def _finish(self, result, mask, time_major):
        last_output, outputs, states = result
        states = list(states)
        if mask is not None:
            last_output = states.pop()
        if self.stateful:
            for var, value in zip(tree.flatten(self.states), tree.flatten(states)):
                var.assign(ops.cast(value, var.dtype))
        if self.return_sequences:
            output = ops.transpose(outputs, (1, 0, 2)) if time_major else outputs
        else:
            output = last_output
        output = ops.cast(output, self.compute_dtype)
        if self.return_state:
            return [output] + list(tree.flatten(states))
        return output

    # Fused path ------------------------------------------------------------

    def _fused_kind(self, training, sequences=None):
        """The fused kernel to run for this call, or ``None``.

        ``sequences`` (the call's input) decides the inference case: without
        it, only the backend's ``_fused_inference_kinds`` run fused there.
        """
        if not self.fused or self.unroll:
            return None
        kind = fused_rnn.fused_kind(self.cell)
        if kind is not None and training and getattr(self.cell, "recurrent_dropout", 0) > 0:
            return None
        where = keras.backend.backend()
        if fused_rnn.on_jax_cpu():
            where = "jax_cpu"
        elif fused_rnn.on_jax_gpu():
            where = "jax_gpu"
        if not training and kind not in self._fused_inference_kinds.get(where, ()):
            # Inference: the fused forward measured faster than the generic
            # loop for every cell with JAX on a CPU or a GPU, for the reset-before GRU
            # elsewhere, and for every cell when compiled with XLA or at a
            # small batch (BENCHMARKS.md).
            if sequences is None or not any(self._fused_options(sequences)):
                return None
        return kind

    def _fused_options(self, sequences):
        """``(jit, hoist)`` of the fused loop for an input of this shape."""
        jit = (
            self._fused_jit
            and keras.backend.backend() == "tensorflow"
            and sequences.shape[1] is not None
        )
        hoist = self._fused_hoist
        if hoist is None:
            batch = sequences.shape[0]
            small = batch is not None and batch <= self._fused_hoist_max_batch
            hoist = small or fused_rnn.on_jax_gpu()
        return jit, hoist

    def _fused_groups(self, kind, sequences):
        """Row blocks the JAX loop runs side by side (``fused_rnn.row_groups``)."""
        batch, units = sequences.shape[0], self.cell.units
        return fused_rnn.row_groups(kind, batch, units, self._fused_row_groups)

    def _fused_chunks(self, kind, groups):
        """Chunks of steps of the reverse loop. Each chunk's weight gradients
        depend only on it, so they run beside the loop over the earlier
        chunk, on cores the loop leaves idle part of each step. TensorFlow:
        2 (its weight gradients are graph operations that TensorFlow runs
        beside the compiled loop). JAX: 2 for the LSTM where the batch runs as
        row blocks, else 1; the GRU gained nothing, and at batch 128 x 512
        units 2 chunks were 1-2% slower (``benchmarks/row_groups.py --chunks
        1,2``, BENCHMARKS.md)."""
        if keras.backend.backend() == "tensorflow":
            return self._fused_reverse_chunks
        if kind == "lstm" and groups > 1:
            return self._fused_reverse_chunks
        return 1

    def _fused_inputs(self, sequences, training):
        """The inputs in the cell's dtype, with the cell's input dropout (one
        mask for all steps, as the generic loop draws it) in training."""
        cell = self.cell
        x = ops.cast(sequences, cell.compute_dtype)
        if training and getattr(cell, "dropout", 0) > 0:
            cell.reset_dropout_mask()
            x = x * ops.expand_dims(cell.get_dropout_mask(x[:, 0, :]), 1)
            cell.reset_dropout_mask()
        return x

    def _call_fused(self, kind, sequences, initial_state, mask, training, xla=True):
        """The fused path; ``xla=False`` never compiles the loop with XLA
        (on TensorFlow a compiled loop cannot be differentiated inside a
        ``tf.cond`` branch)."""
        cell = self.cell
        dtype = cell.compute_dtype
        x = self._fused_inputs(sequences, training)
        loop_states = list(initial_state)
        jit, hoist = self._fused_options(sequences)
        jit = jit and xla
        groups = self._fused_groups(kind, sequences)
        if mask is not None:
            out_size = self._output_size()
            loop_states.append(ops.zeros((ops.shape(x)[0], out_size), dtype=dtype))

        def run_loop():
            params = fused_rnn.cell_params(kind, cell, dtype)
            # Time-major, and reversed here for go_backwards: transposing and
            # flipping the narrow input is cheaper than the wide projection.
            x_tm = ops.transpose(x, (1, 0, 2))
            if self.go_backwards:
                x_tm = ops.flip(x_tm, 0)
            m = None
            if mask is not None:
                m = ops.expand_dims(ops.transpose(ops.cast(mask, "bool"), (1, 0)), -1)
                if self.go_backwards:
                    m = ops.flip(m, 0)
            h_seq, finals = fused_rnn.recurrent_loop(
                kind,
                x_tm,
                tuple(initial_state),
                params,
                mask=m,
                hoist=hoist,
                differentiable=bool(training),
                jit=jit,
                groups=groups,
                chunks=self._fused_chunks(kind, groups),
            )
            states = list(finals)
            if m is None:
                return finals[0], h_seq, states
            # The output is the state after a step; before the first unmasked
            # step the carried "last output" is still zero.
            seen = ops.cumsum(ops.cast(m, "int32"), axis=0) > 0
            kept = ops.where(seen, h_seq, ops.zeros_like(h_seq))
            outputs = kept
            if self.zero_output_for_mask:
                outputs = ops.where(m, h_seq, ops.zeros_like(h_seq))
            last = ops.where(ops.any(m, axis=0), finals[0], ops.zeros_like(finals[0]))
            return last, outputs, states + [last]

        result = self._run_guarded(run_loop, sequences, loop_states, True)
        return self._finish(result, mask, True)

    # Tuning of the fused loop, measured on a 2-core CPU and an H100 (see
    # BENCHMARKS.md): XLA on TensorFlow when the number of steps is static;
    # the input product before the loop (hoist): True always, False never,
    # None up to a batch size and always with JAX on a GPU; the kinds whose
    # inference runs fused, per platform.
    _fused_hoist = None
    _fused_hoist_max_batch = 4
    _fused_inference_kinds = {
        "tensorflow": ("gru",),
        "jax": ("gru",),
        "jax_cpu": tuple(fused_rnn.BLOCKS),
        "jax_gpu": tuple(fused_rnn.BLOCKS),
    }
    _fused_jit = True
    _fused_row_groups = 2
    _fused_reverse_chunks = 2

    def _no_steps(self, sequences, loop_states, time_major):
        """What the loop returns for zero steps: zero outputs, same states."""
        batch = ops.shape(sequences)[0]
        out = self._output_size()
        out = (out,) if isinstance(out, int) else tuple(out)
        dtype = self.cell.compute_dtype
        last = ops.zeros((batch,) + out, dtype=dtype)
        if not self.return_sequences:
            outputs = ops.expand_dims(last, 0 if time_major else 1)
        elif time_major:
            outputs = ops.zeros((0, batch) + out, dtype=dtype)
        else:
            outputs = ops.zeros((batch, 0) + out, dtype=dtype)
        return last, outputs, [ops.convert_to_tensor(s) for s in loop_states]

    def _empty_result(self, sequences, states):
        batch = ops.shape(sequences)[0]
        out = self._output_size()
        out = (out,) if isinstance(out, int) else tuple(out)
        if self.return_sequences:
            output = ops.zeros((batch, 0) + out, dtype=self.compute_dtype)
        else:
            output = ops.zeros((batch,) + out, dtype=self.compute_dtype)
        if self.return_state:
            return [output] + list(tree.flatten(states))
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
        config = dict(config)
        config["cell"] = keras.saving.deserialize_keras_object(
            config["cell"], custom_objects=custom_objects
        )
        return cls(**config)


def _as_list(states, like):
    states = list(states) if tree.is_nested(states) else [states]
    # Keep the carry's dtypes fixed across steps (some backends promote
    # float64 to float32 inside activations; the loop needs equal types).
    return tree.map_structure(
        lambda s, ref: s if s.dtype == ref.dtype else ops.cast(s, ref.dtype),
        states,
        list(like),
    )


def _expand_to(m, x):
    """Reshape a (batch, 1) step mask to broadcast against ``x``."""
    return ops.reshape(m, (-1,) + (1,) * (len(x.shape) - 1))


def _select(m, new, old):
    m = _expand_to(m, new)
    return ops.where(m > 0, new, old)


def _has_training_arg(cell):
    return getattr(cell, "_call_has_training_arg", False)
