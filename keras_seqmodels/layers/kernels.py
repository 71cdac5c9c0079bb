"""The time loops of ``Recurrent``, behind one contract and tried in order.

As Keras's ``LSTM`` tries its backend's kernel and falls back
(``try: backend.lstm(...) except NotImplementedError``), and as Sonnet keeps a
table of unroll implementations, every way of running the loop is a kernel
with two methods:

- ``plan(layer, call)``: a ``Plan`` if the kernel computes this ``call``
  (a ``Call``: the sequences, initial states, mask and training flag) of
  ``layer``, else ``None``. Planning reads the layer's settings, shapes,
  dtypes, the device and the form the cell declares (``cells.forms.fused_form``);
  it computes nothing.
- ``run(plan)``: the loop's ``Result``, which ``Recurrent`` turns into its
  outputs (stateful carry, ``return_sequences``, ``return_state``).

``Recurrent`` asks the kernels of ``KERNELS`` in order and runs the first
plan:

1. ``LibraryKernel``: the backend library's kernel (cuDNN, ``torch.lstm``,
   ...; the code is in ``backend_rnn``).
2. ``FusedKernel``: the package's fused loops with a hand-written backward
   pass (``fused_rnn``), with the tuning measured in BENCHMARKS.md
   (``FusedTuning``, described in docs/layers.md).
3. ``GenericKernel``: the ``keras.ops`` loop over the cell's ``call``, for
   any cell; it always plans.

``tune(layer, ...)`` gives one layer a table with other tuning (tests and
benchmarks time or check one choice against another).
"""

import collections
import dataclasses

import keras
from keras import ops, tree

from keras_seqmodels._compat import DropoutRNNCell, backend_rnn
from keras_seqmodels.cells.forms import FORMS
from keras_seqmodels.layers import backend_rnn as library_rnn
from keras_seqmodels.layers import fused_rnn

Call = collections.namedtuple("Call", ["sequences", "initial_state", "mask", "training"])
Call.__doc__ = """One call of the runner: ``sequences`` ``(batch, time, features)``
with at least one step, the list of initial states in the cell's compute
dtype, the mask (``None`` or ``(batch, time)``) and whether it trains."""


class Result(collections.namedtuple("Result", ["last", "outputs", "states", "time_major"])):
    """What a kernel's loop returns: the last output, the output sequence
    (time-major if ``time_major``), the list of final states."""

    def sequence(self):
        """The output sequence, ``(batch, time, ...)``."""
        return ops.transpose(self.outputs, (1, 0, 2)) if self.time_major else self.outputs


@dataclasses.dataclass
class Plan:
    """A kernel's decision for one call: ``run()`` computes it."""

    kernel: object
    layer: object
    call: Call

    def run(self):
        return self.kernel.run(self)


def choose(kernels, layer, call):
    """The plan of the first kernel in ``kernels`` that takes ``call``."""
    for kernel in kernels:
        plan = kernel.plan(layer, call)
        if plan is not None:
            return plan
    raise ValueError(f"{layer.name}: no kernel runs this call (the last must be generic).")


# Shared by the kernels ----------------------------------------------------


def output_size(cell):
    """The cell's ``output_size``, else the first of its ``state_size``."""
    size = getattr(cell, "output_size", None)
    if size is None:
        size = cell.state_size
        size = size[0] if isinstance(size, (list, tuple)) else size
    return size


def output_shape(cell):
    """``output_size`` as a tuple."""
    out = output_size(cell)
    return (out,) if isinstance(out, int) else tuple(out)


def fused_inputs(cell, sequences, training):
    """The inputs in the cell's dtype, with the cell's input dropout (one
    mask for all steps, as the generic loop draws it) in training."""
    x = ops.cast(sequences, cell.compute_dtype)
    if training and getattr(cell, "dropout", 0) > 0:
        cell.reset_dropout_mask()
        x = x * ops.expand_dims(cell.get_dropout_mask(x[:, 0, :]), 1)
        cell.reset_dropout_mask()
    return x


def _run_guarded(layer, run_loop, sequences, loop_states, time_major):
    if sequences.shape[1] is None and keras.backend.backend() == "tensorflow":
        # A length known only at run time may be zero (an empty string
        # in a served signature); TensorFlow's loop cannot stack an empty
        # list of unknown shape, so zero steps skip the loop.
        return ops.cond(
            ops.shape(sequences)[1] > 0,
            run_loop,
            lambda: _no_steps(layer, sequences, loop_states, time_major),
        )
    return run_loop()


def _no_steps(layer, sequences, loop_states, time_major):
    """What the loop returns for zero steps: zero outputs, same states."""
    batch = ops.shape(sequences)[0]
    out = output_shape(layer.cell)
    dtype = layer.cell.compute_dtype
    last = ops.zeros((batch,) + out, dtype=dtype)
    if not layer.return_sequences:
        outputs = ops.expand_dims(last, 0 if time_major else 1)
    elif time_major:
        outputs = ops.zeros((0, batch) + out, dtype=dtype)
    else:
        outputs = ops.zeros((batch, 0) + out, dtype=dtype)
    return last, outputs, [ops.convert_to_tensor(s) for s in loop_states]


def _result(loop_result, mask, time_major):
    """A ``Result`` from a loop that carries the last output as one more
    state when there is a mask."""
    last, outputs, states = loop_result
    states = list(states)
    if mask is not None:
        last = states.pop()
    return Result(last, outputs, states, time_major)


# The backend library --------------------------------------------------------


@dataclasses.dataclass
class LibraryPlan(Plan):
    name: str = None  # backend_rnn.kind: "lstm", "gru" or "rnn_tanh"
    mask: object = None  # the call's mask as booleans
    fallback: Plan = None  # TensorFlow, mask known at run time only: for holes


class LibraryKernel:
    """The backend library's fused kernel (``backend_rnn``: cuDNN on a GPU,
    ``torch.lstm`` / ``torch.gru`` / ``torch.rnn_tanh`` on PyTorch).

    A mask with holes goes to another kernel: decided here when the mask's
    values are known; on TensorFlow inside a traced function, by ``tf.cond``
    between the library and the fused loop (``fallback``) at run time.
    ``cudnn_training`` / ``cudnn_inference``: let the JAX LSTM take cuDNN in
    training / in inference (both off by default: ``fit`` and ``evaluate``
    then run the same fused loop; see ``backend_rnn``; benchmarks and the
    GPU check time and compare that choice)."""

    def __init__(self, fallback, cudnn_inference=False, cudnn_training=False):
        self.fallback = fallback
        self.cudnn_inference = cudnn_inference
        self.cudnn_training = cudnn_training

    def plan(self, layer, call):
        name = library_rnn.kind(layer, call.training, self.cudnn_inference, self.cudnn_training)
        if name is None:
            return None
        mask, fallback = call.mask, None
        if mask is not None:
            mask = ops.cast(mask, "bool")
            if library_rnn.concrete(mask):
                if not library_rnn.right_padded_concrete(mask):
                    return None
            elif keras.backend.backend() == "tensorflow":
                # Both branches of the tf.cond are traced; XLA cannot compile
                # a loop that is differentiated inside a tf.cond branch.
                own = call._replace(mask=mask)
                fallback = self.fallback.plan(layer, own, always=True, xla=False)
        return LibraryPlan(self, layer, call, name=name, mask=mask, fallback=fallback)

    def run(self, plan):
        layer, call, mask = plan.layer, plan.call, plan.mask

        def library():
            x = fused_inputs(layer.cell, call.sequences, call.training)
            outputs, finals, last = library_rnn.compute(
                plan.name,
                layer.cell,
                x,
                list(call.initial_state),
                mask,
                layer.go_backwards,
                layer.zero_output_for_mask,
            )
            return last, outputs, list(finals)

        if plan.fallback is None:
            return Result(*library(), time_major=False)
        import tensorflow as tf

        def own_loop():
            result = plan.fallback.run()
            return result.last, result.sequence(), result.states

        def only_needed(branch):
            # The output sequence only where the layer returns it.
            def run():
                last, outputs, states = branch()
                return last, outputs if layer.return_sequences else last, states

            return run

        last, outputs, states = tf.cond(
            library_rnn.right_padded(mask)[0], only_needed(library), only_needed(own_loop)
        )
        return Result(last, outputs, list(states), time_major=False)


# The fused loops ------------------------------------------------------------


def _inference_kinds():
    every = tuple(FORMS)
    return {"tensorflow": ("gru",), "jax": ("gru",), "jax_cpu": every, "jax_gpu": every}


@dataclasses.dataclass(frozen=True)
class FusedTuning:
    """Where and how the fused loop runs, as measured (docs/layers.md,
    BENCHMARKS.md).

    Attributes:
        jit: TensorFlow: compile the forward and the backward loop with XLA
            when the number of steps is known.
        hoist: take the input product of all steps before the loop: True
            always, False never, None up to ``hoist_max_batch`` rows and at
            every batch size with JAX on a GPU.
        hoist_max_batch: see ``hoist``.
        inference: per platform (``tensorflow``, ``jax``, ``jax_cpu``,
            ``jax_gpu``), the kinds whose inference runs fused at any batch
            size; elsewhere inference runs fused only with ``jit`` or
            ``hoist``.
        row_groups: JAX: row blocks wanted (``fused_rnn.row_groups`` decides
            where they apply).
        reverse_chunks: chunks of steps of the reverse loop, where used.
        groups, chunks: fixed numbers of row blocks and chunks instead
            (tests and benchmarks), or None.
    """

    jit: bool = True
    hoist: object = None
    hoist_max_batch: int = 4
    inference: dict = dataclasses.field(default_factory=_inference_kinds)
    row_groups: int = 2
    reverse_chunks: int = 2
    groups: object = None
    chunks: object = None


@dataclasses.dataclass
class FusedPlan(Plan):
    kind: str = None  # a key of keras_seqmodels.cells.forms.FORMS
    jit: bool = False
    hoist: bool = False
    groups: int = 1
    chunks: int = 1


def _platform():
    if fused_rnn.on_jax_cpu():
        return "jax_cpu"
    if fused_rnn.on_jax_gpu():
        return "jax_gpu"
    return keras.backend.backend()


class FusedKernel:
    """The fused loops of ``fused_rnn`` for the cells that declare a fused
    form (``keras_seqmodels.cells.forms.fused_form``), on TensorFlow and JAX."""

    def __init__(self, tuning=None):
        self.tuning = tuning or FusedTuning()

    def options(self, sequences):
        """``(jit, hoist)`` of the fused loop for an input of this shape."""
        tuning = self.tuning
        jit = tuning.jit and keras.backend.backend() == "tensorflow"
        jit = jit and sequences.shape[1] is not None
        hoist = tuning.hoist
        if hoist is None:
            batch = sequences.shape[0]
            small = batch is not None and batch <= tuning.hoist_max_batch
            hoist = small or fused_rnn.on_jax_gpu()
        return jit, hoist

    def groups(self, kind, sequences, units):
        """Row blocks the JAX loop runs side by side (``fused_rnn.row_groups``)."""
        if self.tuning.groups is not None:
            return self.tuning.groups
        return fused_rnn.row_groups(kind, sequences.shape[0], units, self.tuning.row_groups)

    def chunks(self, kind, groups):
        """Chunks of steps of the reverse loop (docs/layers.md): all the
        wanted ones on TensorFlow, and on JAX for the LSTM in row blocks."""
        if self.tuning.chunks is not None:
            return self.tuning.chunks
        if keras.backend.backend() == "tensorflow" or (kind == "lstm" and groups > 1):
            return self.tuning.reverse_chunks
        return 1

    def plan(self, layer, call, always=False, xla=True):
        """``always``: in inference too, wherever the loop can run;
        ``xla=False``: never compile the loop with XLA."""
        cell = layer.cell
        if not layer.fused or layer.unroll:
            return None
        kind = fused_rnn.fused_kind(cell)
        if kind is None:
            return None
        if call.training and getattr(cell, "recurrent_dropout", 0) > 0:
            return None
        jit, hoist = self.options(call.sequences)
        inference = self.tuning.inference.get(_platform(), ())
        if not (always or call.training or kind in inference or jit or hoist):
            return None
        groups = self.groups(kind, call.sequences, cell.units)
        chunks = self.chunks(kind, groups)
        return FusedPlan(self, layer, call, kind, jit and xla, hoist, groups, chunks)

    def run(self, plan):
        layer, (sequences, initial_state, mask, training) = plan.layer, plan.call
        cell = layer.cell
        dtype = cell.compute_dtype
        x = fused_inputs(cell, sequences, training)
        loop_states = list(initial_state)
        if mask is not None:
            loop_states.append(ops.zeros((ops.shape(x)[0], output_size(cell)), dtype=dtype))

        def run_loop():
            params = fused_rnn.cell_params(plan.kind, cell, dtype)
            # Time-major, and reversed here for go_backwards: transposing and
            # flipping the narrow input is cheaper than the wide projection.
            x_tm = ops.transpose(x, (1, 0, 2))
            if layer.go_backwards:
                x_tm = ops.flip(x_tm, 0)
            m = None
            if mask is not None:
                m = ops.expand_dims(ops.transpose(ops.cast(mask, "bool"), (1, 0)), -1)
                if layer.go_backwards:
                    m = ops.flip(m, 0)
            h_seq, finals = fused_rnn.recurrent_loop(
                plan.kind,
                x_tm,
                tuple(initial_state),
                params,
                mask=m,
                hoist=plan.hoist,
                differentiable=bool(training),
                jit=plan.jit,
                groups=plan.groups,
                chunks=plan.chunks,
            )
            states = list(finals)
            if m is None:
                return finals[0], h_seq, states
            # The output is the state after a step; before the first unmasked
            # step the carried "last output" is still zero.
            seen = ops.cumsum(ops.cast(m, "int32"), axis=0) > 0
            kept = ops.where(seen, h_seq, ops.zeros_like(h_seq))
            outputs = kept
            if layer.zero_output_for_mask:
                outputs = ops.where(m, h_seq, ops.zeros_like(h_seq))
            last = ops.where(ops.any(m, axis=0), finals[0], ops.zeros_like(finals[0]))
            return last, outputs, states + [last]

        return _result(_run_guarded(layer, run_loop, sequences, loop_states, True), mask, True)


# The generic loop -----------------------------------------------------------


class GenericKernel:
    """The ``keras.ops`` loop (``keras.src.backend.rnn``) over the cell's
    ``call``, or over ``cell.step`` after one input product for all steps
    (``precompute_inputs``); masks, states of any shape, any cell."""

    def plan(self, layer, call):
        return Plan(self, layer, call)

    def run(self, plan):
        layer, (sequences, initial_state, mask, training) = plan.layer, plan.call
        cell = layer.cell
        uses_dropout = isinstance(cell, DropoutRNNCell)
        if uses_dropout:
            cell.reset_dropout_mask()
            cell.reset_recurrent_dropout_mask()
        if layer.precompute_inputs and _is_projected(cell):
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
            loop_states = list(initial_state) + [
                ops.zeros((batch,) + output_shape(cell), dtype=cell.compute_dtype)
            ]
            zero_output = layer.zero_output_for_mask

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
                go_backwards=layer.go_backwards,
                mask=None,
                time_major=time_major,
                unroll=layer.unroll,
                input_length=sequences.shape[1],
                return_all_outputs=layer.return_sequences,
            )
            return last, outs, list(new_states)

        result = _run_guarded(layer, run_loop, sequences, loop_states, time_major)
        if uses_dropout:
            cell.reset_dropout_mask()
            cell.reset_recurrent_dropout_mask()
        return _result(result, mask, time_major)


def _is_projected(cell):
    return callable(getattr(cell, "project_inputs", None)) and callable(getattr(cell, "step", None))


def _has_training_arg(cell):
    return getattr(cell, "_call_has_training_arg", False)


def _as_list(states, like):
    states = list(states) if tree.is_nested(states) else [states]
    # Keep the carry's dtypes fixed across steps (some backends promote
    # float64 to float32 inside activations; the loop needs equal types).
    return tree.map_structure(
        lambda s, ref: s if s.dtype == ref.dtype else ops.cast(s, ref.dtype),
        states,
        list(like),
    )


def _select(m, new, old):
    m = ops.reshape(m, (-1,) + (1,) * (len(new.shape) - 1))
    return ops.where(m > 0, new, old)


# The registry -----------------------------------------------------------------


def registry(fused=None, cudnn_inference=False, cudnn_training=False):
    """The kernels in the order ``Recurrent`` tries them: the backend
    library's, the fused loops (with ``fused``, a ``FusedTuning``), the
    generic loop."""
    fused_kernel = FusedKernel(fused)
    library = LibraryKernel(fused_kernel, cudnn_inference, cudnn_training)
    return (library, fused_kernel, GenericKernel())


KERNELS = registry()


def tune(layer, cudnn_inference=False, cudnn_training=False, **fused):
    """Give ``layer`` its own kernels: the fused loop with ``fused``
    (``FusedTuning`` fields changed from the defaults) and the JAX LSTM on
    cuDNN in inference with ``cudnn_inference``, in training with
    ``cudnn_training``. For tests and benchmarks that check or time one
    choice against another."""
    tuning = dataclasses.replace(FusedTuning(), **fused)
    layer._kernels = registry(tuning, cudnn_inference, cudnn_training)
    return layer


def plan_of(layer, sequences, training=False, mask=None, kernel=None):
    """The plan ``layer`` would run for ``sequences`` (a tensor or a
    ``keras.KerasTensor``): of the first kernel that takes it, or of
    ``kernel`` (``"library"``, ``"fused"``) alone, or None. For tests."""
    kernels = layer._kernels
    if kernel is not None:
        kernels = [kernels[("library", "fused").index(kernel)]]
    call = Call(sequences, None, mask, training)
    for k in kernels:
        plan = k.plan(layer, call)
        if plan is not None:
            return plan
    return None
