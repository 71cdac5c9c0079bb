"""A recurrent node's input and outputs, made to follow a Keras mask exactly.

ONNX's ``LSTM``, ``GRU`` and ``RNN`` nodes take ``sequence_lens``: row b runs
its first ``sequence_lens[b]`` steps (the reverse direction reads them last
first) and writes zeros after them. A Keras mask may be any boolean
``(batch, time)`` array: right or left padding, holes, rows with no step; a
masked step keeps the states and outputs zeros (or, with
``zero_output_for_mask=False``, repeats the last output). The two agree once
each row's unmasked steps are moved to its front, in their order:

- ``_Steps`` moves them there (one ``ScatterElements`` to per-row positions
  computed from a cumulative count of the mask: a step's rank among the
  unmasked steps, or after them its rank among the masked ones), pads the
  batch and the time axis by one (onnxruntime's ``GRU`` and ``LSTM`` end the
  process on a batch or a sequence of length 0, which this package's layers
  accept) and gives the ``sequence_lens``;
- its ``sequence``, ``last`` and ``state`` read a node's ``Y`` and ``Y_h``
  back into Keras's positions: step t's output is the node's output at t's
  place among the unmasked steps (a held output: the unmasked step read
  before t), zeros where Keras has zeros; a row with no unmasked step keeps
  its initial states.

For a right-padded mask the moves are the identity; an unmasked input is
only padded.
"""

INT64, INT32, BOOL = 7, 6, 9


class _Steps:
    """The ``(batch, time, features)`` input ``x`` (a ``_Tensor``, masked or
    not) prepared for recurrent nodes: ``time_major`` (time + 1, batch + 1,
    features), its unmasked steps first in each row, and ``node_lens``
    (int32, batch + 1) for the nodes' ``sequence_lens``."""

    def __init__(self, g, x, hint):
        self.g, self.hint = g, hint
        shape = g.op("Shape", [x.name], hint)
        self.batch_time = g.op("Slice", [shape, g.ints([0]), g.ints([2])], hint)
        self.time = g.op("Gather", [shape, g.ints(1, "one")], hint, axis=0)
        padded = g.op("Pad", [x.name, g.ints([0, 0, 0, 1, 1, 0], "pad_batch_time")], hint)
        mask = x.mask_name
        if mask is None:
            self.valid = None
            rows = g.op("Slice", [g.op("Shape", [padded], hint), g.ints([0]), g.ints([1])], hint)
            self.lens = g.op("Expand", [self.time, rows], hint)
        else:
            m = g.op("Cast", [mask], hint, to=INT64)
            m = g.op("Pad", [m, g.ints([0, 0, 1, 1], "pad_batch_time_mask")], hint)
            self.valid = g.op("Cast", [m], hint, to=BOOL)
            self.count = g.op("CumSum", [m, g.ints(1, "one")], hint)
            self.lens = g.op("ReduceSum", [m, g.ints([1], "axes1")], hint, keepdims=0)
            one = g.ints(1, "one")
            steps = g.op("Range", [g.ints(0, "zero"), g.op("Add", [self.time, one], hint), one],
                         hint)  # fmt: skip
            front = g.op("Sub", [self.count, one], hint)
            back = g.op("Add", [self._column(self.lens), g.op("Sub", [steps, self.count], hint)],
                        hint)  # fmt: skip
            where = g.op("Where", [self.valid, front, back], hint)
            padded = g.op("ScatterElements", [padded, self._along_time(where, padded), padded],
                          hint, axis=1)  # fmt: skip
        self.time_major = g.op("Transpose", [padded], f"{hint}/time_major", perm=[1, 0, 2])
        self.node_lens = g.op("Cast", [self.lens], f"{hint}/sequence_lens", to=INT32)
        self._any = None

    @property
    def any(self):
        """Whether each row has an unmasked step (bool, batch + 1)."""
        if self._any is None:
            self._any = self.g.op("Greater", [self.lens, self.g.ints(0, "zero")], self.hint)
        return self._any

    def _column(self, value):
        return self.g.op("Unsqueeze", [value, self.g.ints([1], "axes1")], self.hint)

    def _along_time(self, index, like):
        """``index`` (batch + 1, time + 1) repeated along the last axis of ``like``."""
        g = self.g
        index = g.op("Unsqueeze", [index, g.ints([2], "axes2")], self.hint)
        return g.op("Expand", [index, g.op("Shape", [like], self.hint)], self.hint)

    def _rows(self, value):
        """The first ``batch`` rows of ``value``: the padding row dropped."""
        g = self.g
        rows = g.op("Slice", [self.batch_time, g.ints([0]), g.ints([1])], self.hint)
        return g.op("Slice", [value, g.ints([0]), rows, g.ints([0])], self.hint)

    def initial(self, state):
        """A ``(batch, units)`` initial state as a node's ``(1, batch + 1, units)``."""
        g = self.g
        padded = g.op("Pad", [state, g.ints([0, 0, 1, 0], "pad_batch")], self.hint)
        return g.op("Unsqueeze", [padded, g.ints([0], "axes0")], self.hint)

    def sequence(self, y, reverse=False, zero=True):
        """One direction's outputs (batch + 1, time + 1, units), batch-major,
        at Keras's steps: (batch, time, units). ``reverse``: the direction
        reads the steps last first; ``zero``: masked steps output zeros (else
        they hold the output of the unmasked step read before them, zeros
        before the first)."""
        g, hint = self.g, self.hint
        if self.valid is not None:
            one = g.ints(1, "one")
            if reverse:  # a masked step holds the output of the next unmasked one
                index = g.op("Sub", [self.count, g.op("Cast", [self.valid], hint, to=INT64)],
                             hint)  # fmt: skip
            else:
                index = g.op("Max", [g.op("Sub", [self.count, one], hint), g.ints(0, "zero")],
                             hint)  # fmt: skip
            y = g.op("GatherElements", [y, self._along_time(index, y)], hint, axis=1)
            if zero:
                keep = self.valid
            elif reverse:
                keep = g.op("Less", [index, self._column(self.lens)], hint)
            else:
                keep = g.op("Greater", [self.count, g.ints(0, "zero")], hint)
            keep = g.op("Unsqueeze", [keep, g.ints([2], "axes2")], hint)
            y = g.op("Where", [keep, y, g.const(0.0, "zero_f")], hint)
        return g.op("Slice", [y, g.ints([0, 0]), self.batch_time, g.ints([0, 1])], hint)

    def last(self, y_h, reverse=False, last_step_only=False):
        """A layer's output without ``return_sequences``, from one
        direction's ``Y_h`` (batch + 1, units): zeros for a row with no
        unmasked step; with ``last_step_only`` (a Keras RNN layer with
        ``zero_output_for_mask=True``) also where the last step read is
        masked."""
        g, hint = self.g, self.hint
        keep = self.any
        if last_step_only and self.valid is not None:
            # Step 0 when reading backwards; else time - 1, which is -1, the
            # padding step (masked), for a sequence of length 0.
            at = g.ints(0, "zero") if reverse else g.op("Sub", [self.time, g.ints(1, "one")], hint)
            keep = g.op("Gather", [self.valid, at], hint, axis=1)
        out = g.op("Where", [self._column(keep), y_h, g.const(0.0, "zero_f")], hint)
        return self._rows(out)

    def state(self, y, initial=None):
        """A final state from the node's (batch + 1, units): the initial
        state (or zeros) for a row with no unmasked step."""
        g, hint = self.g, self.hint
        if initial is None:
            start = g.const(0.0, "zero_f")
        else:
            start = g.op("Pad", [initial, g.ints([0, 0, 1, 0], "pad_batch")], hint)
        return self._rows(g.op("Where", [self._column(self.any), y, start], hint))
