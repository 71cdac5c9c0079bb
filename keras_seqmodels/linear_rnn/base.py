"""``LinearRecurrent``: the runner of recurrences linear in their state.

The subclass contract. A layer whose state update is ``h(t) = a(t) * h(t-1)
+ b(t)`` (elementwise, real or complex), with ``a`` and ``b`` computed from
the inputs only, subclasses ``LinearRecurrent`` and implements:

- ``build(sequences_shape)``: its weights (then ``super().build(...)``).
- ``scan_shape()``: the per-example shape of ``h`` (e.g. ``(units,)``).
  Set the class attribute ``complex_state = True`` for a complex ``h``: it
  is then carried as two states ``(h_re, h_im)``.
- ``coefficients(sequences, extra_states, mask, training)``: for a whole
  sequence ``(batch, time, features)`` at once, returns ``(a, b, context,
  new_extra_states)``: ``a`` and ``b`` tuples (one tensor, or ``(re, im)``)
  of shape ``(batch, time) + scan_shape()``; ``context``: any nested
  structure of tensors with time on axis 1 that the readout needs (e.g.
  the gate branch of a block); ``new_extra_states``: the extra states after
  the sequence (see below), given the mask (True = a real step).
- ``readout(h, context, training)``: the outputs ``(batch, time,
  output_size)`` from the states ``h`` (a tuple like ``a``) and the context.
- ``output_size``: the width of one output.
- Optional: ``extra_state_shapes()``, per-example shapes of further states
  that are not scanned (the last inputs of a causal convolution); default
  none. ``coefficients`` receives them (the states before the sequence) and
  returns them updated.

The base class does the rest, the same way for every layer: masks (a masked
step has ``a = 1, b = 0``, so the state is kept; its output is zero),
``go_backwards``, ``initial_state``, ``return_sequences``, ``return_state``,
``stateful`` (with ``reset_states()``), the step form ``step(inputs_t,
states)`` for streaming (the same ``coefficients`` on a one-step sequence),
shapes, masks out, the float checks and the configuration. The states are
the list ``[h]`` (or ``[h_re, h_im]``) followed by the extra states.
"""

import keras
from keras import ops, tree

from keras_seqmodels.linear_rnn import scan
from keras_seqmodels.utils import bounds, validation

_LOW_PRECISION = ("float16", "bfloat16")


class LinearRecurrent(keras.layers.Layer):
    """Base of the recurrences linear in their state, trained by a scan.

    Runs ``h(t) = a(t) * h(t-1) + b(t)``, ``y(t) = readout(h(t), x(t))``
    over whole sequences with ``keras_seqmodels.linear_rnn.linear_scan``
    (the subclass contract is in the module docstring). Such layers are
    the leaky units of Goodfellow et al., section 10.9, with the time
    constant ``a(t)`` computed from the input at every step.

    Args:
        return_sequences: return the output of every step ``(batch, time,
            output_size)`` instead of the last one ``(batch, output_size)``.
        return_state: also return the final states (a list after the
            output: ``h``, or ``h_re, h_im``, then any extra states).
        go_backwards: process the sequence in reverse and return the
            reversed output sequence (as Keras and
            ``keras_seqmodels.layers.Recurrent``).
        stateful: keep the final states of one batch as the initial states
            of the next (fixed batch size; ``reset_states()`` between
            streams).
        **kwargs: ``keras.layers.Layer`` arguments (``name``, ``dtype``).

    Call arguments:
        sequences: float tensor ``(batch, time, features)``.
        initial_state: optional list of states (as ``return_state`` gives).
        mask: optional boolean ``(batch, time)``; False marks padding.
        training: whether the layer trains.

    Masking: a masked step keeps the state and outputs zeros; without
    ``return_sequences`` the output is the one of the last unmasked step
    (zeros for a row with none), as ``keras_seqmodels.layers.Recurrent``.

    Example:

    >>> import numpy as np, keras_seqmodels as ks
    >>> layer = ks.linear_rnn.MinGRU(8, return_state=True)
    >>> out, h = layer(np.random.rand(2, 5, 3).astype("float32"))
    >>> out.shape, h.shape
    ((2, 8), (2, 8))
    """

    complex_state = False

    def __init__(
        self, return_sequences=False, return_state=False, go_backwards=False, stateful=False,
        **kwargs,
    ):  # fmt: skip
        super().__init__(**kwargs)
        self.return_sequences = bool(return_sequences)
        self.return_state = bool(return_state)
        self.go_backwards = bool(go_backwards)
        self.stateful = bool(stateful)
        self.supports_masking = True
        self.states = None
        self._expected_batch_size = None

    # The subclass contract -------------------------------------------------

    def scan_shape(self):
        raise NotImplementedError(f"{type(self).__name__} must implement scan_shape()")

    def extra_state_shapes(self):
        return []

    def coefficients(self, sequences, extra_states, mask, training):
        raise NotImplementedError(f"{type(self).__name__} must implement coefficients()")

    def readout(self, h, context, training):
        raise NotImplementedError(f"{type(self).__name__} must implement readout()")

    @property
    def output_size(self):
        raise NotImplementedError(f"{type(self).__name__} must define output_size")

    # Shapes ------------------------------------------------------------------

    @property
    def _n_scan(self):
        return 2 if self.complex_state else 1

    def state_shapes(self):
        """Per-example shapes of the states, in order."""
        return [tuple(self.scan_shape())] * self._n_scan + [
            tuple(s) for s in self.extra_state_shapes()
        ]

    def _check_sequences_shape(self, shape):
        validation.check_rank(self.name, "sequences", shape, 3, "(batch, time, features)")
        validation.check_last_dim_known(self.name, "sequences", shape)
        expected = getattr(self, "_input_features", None)
        if expected is not None and shape[-1] != expected:
            raise ValueError(
                f"{self.name}: the last dimension of `sequences` must be {expected}, "
                f"the width this layer was built with. Received shape {tuple(shape)}"
            )

    def build(self, sequences_shape, initial_state_shape=None):
        self._check_sequences_shape(sequences_shape)
        self._input_features = sequences_shape[-1]
        if self.stateful:
            batch = sequences_shape[0]
            if batch is None:
                raise ValueError(
                    f"{self.name}: stateful=True needs a fixed batch size. Pass "
                    "`batch_size` to keras.Input (or `batch_shape`). Received input "
                    f"shape {tuple(sequences_shape)}"
                )
            self._expected_batch_size = batch
            self.states = [
                self.add_weight(
                    shape=(batch,) + s, initializer="zeros", trainable=False, name="state"
                )
                for s in self.state_shapes()
            ]
        self.built = True

    def compute_output_shape(self, sequences_shape, initial_state_shape=None):
        batch, time = sequences_shape[0], sequences_shape[1]
        out = (self.output_size,)
        output_shape = (batch, time) + out if self.return_sequences else (batch,) + out
        if self.return_state:
            return [output_shape] + [(batch,) + s for s in self.state_shapes()]
        return output_shape

    def compute_mask(self, sequences, mask=None):
        output_mask = mask if self.return_sequences else None
        if self.return_state:
            return [output_mask] + [None] * len(self.state_shapes())
        return output_mask

    # States ------------------------------------------------------------------

    def get_initial_state(self, batch_size):
        """Zero states for ``batch_size`` sequences (a list, as ``return_state``)."""
        return [ops.zeros((batch_size,) + s, dtype=self.compute_dtype) for s in self.state_shapes()]

    def reset_states(self):
        """Set the carried states of a stateful layer back to zeros."""
        for var in self.states or []:
            var.assign(ops.zeros(var.shape, dtype=var.dtype))

    reset_state = reset_states

    def _states_for(self, sequences, initial_state):
        if initial_state is None:
            if self.stateful:
                return [v.value for v in self.states]
            return self.get_initial_state(ops.shape(sequences)[0])
        states = list(tree.flatten(initial_state))
        expected = [(sequences.shape[0],) + s for s in self.state_shapes()]
        received = [tuple(s.shape) for s in states]
        if len(states) != len(expected) or any(
            len(r) != len(e) or any(x is not None and y is not None and x != y
                                    for x, y in zip(r, e))
            for r, e in zip(received, expected)
        ):  # fmt: skip
            raise ValueError(
                f"{self.name}: `initial_state` must be a list of {len(expected)} "
                f"tensor(s) of shapes {expected}. Received shapes {received}"
            )
        return [ops.cast(s, self.compute_dtype) for s in states]

    # Call --------------------------------------------------------------------

    def call(self, sequences, initial_state=None, mask=None, training=False):
        self._check_sequences_shape(sequences.shape)
        validation.check_float_dtype(self.name, "sequences", sequences.dtype)
        if mask is not None and (
            len(mask.shape) != 2
            or any(m is not None and s is not None and m != s
                   for m, s in zip(mask.shape, sequences.shape[:2]))
        ):  # fmt: skip
            raise ValueError(
                f"{self.name}: `mask` must have shape (batch, time) = "
                f"{tuple(sequences.shape[:2])} matching `sequences`. Received mask "
                f"shape {tuple(mask.shape)}"
            )
        if self.stateful and sequences.shape[0] not in (None, self._expected_batch_size):
            raise ValueError(
                f"{self.name}: this stateful layer carries states for a batch of "
                f"{self._expected_batch_size} sequences, but was called with a batch of "
                f"{sequences.shape[0]}. Use the same batch size for every call, or make a "
                "new layer."
            )
        states = self._states_for(sequences, initial_state)
        x = ops.cast(sequences, self.compute_dtype)
        if mask is not None:
            mask = ops.cast(mask, "bool")
        if self.go_backwards:
            x = ops.flip(x, 1)
            mask = None if mask is None else ops.flip(mask, 1)
        outputs, finals = self._run(x, states, mask, training)
        if self.stateful:
            for var, value in zip(self.states, finals):
                var.assign(ops.cast(value, var.dtype))
        if self.return_state:
            return [outputs] + list(finals)
        return outputs

    def _run(self, x, states, mask, training):
        n = self._n_scan
        h0, extra = tuple(states[:n]), list(states[n:])
        a, b, context, new_extra = self.coefficients(x, extra, mask, training)
        a, b = tuple(a), tuple(b)
        if mask is not None:
            keep = ops.reshape(mask, tuple(ops.shape(mask)) + (1,) * (len(b[0].shape) - 2))
            one = (1.0,) + (0.0,) * (n - 1)  # a = 1 (+ 0i): the state is kept
            a = tuple(ops.where(keep, c, v) for c, v in zip(a, one))
            b = tuple(ops.where(keep, c, 0.0) for c in b)
        dtype = b[0].dtype
        wide = "float32" if keras.backend.standardize_dtype(dtype) in _LOW_PRECISION else dtype
        h = scan.scan_tuples(
            tuple(ops.cast(c, wide) for c in a),
            tuple(ops.cast(c, wide) for c in b),
            tuple(ops.cast(c, wide) for c in h0),
            reverse=False,
        )
        h = tuple(ops.cast(c, dtype) for c in h)
        finals = [c[:, -1] for c in h] + list(new_extra)
        if self.return_sequences:
            y = self.readout(h, context, training)
            if mask is not None:
                y = ops.where(ops.expand_dims(mask, -1), y, ops.zeros_like(y))
            return y, finals
        if mask is None:
            last = _map((h, context), lambda c: c[:, -1:])
            return self.readout(*last, training)[:, 0], finals
        # The output of each row's last unmasked step (zeros if it has none).
        steps = ops.cast(mask, "int32")
        index = ops.shape(mask)[1] - 1 - ops.argmax(ops.flip(steps, 1), axis=1)
        index = ops.expand_dims(ops.cast(index, "int32"), 1)  # (batch, 1)
        has_step = ops.any(mask, axis=1, keepdims=True)

        # Taken, not summed against a one-hot row: the value itself (an int8
        # LiteRT file quantizes a product and a sum over time badly).
        def at_last(c):
            extra = (1,) * (len(c.shape) - 2)
            taken = ops.take_along_axis(c, ops.reshape(index, (-1, 1) + extra), axis=1)
            keep = ops.reshape(has_step, (-1, 1) + extra)
            return ops.where(keep, taken, ops.zeros_like(taken))

        last = _map((h, context), at_last)
        return self.readout(*last, training)[:, 0], finals

    def step(self, inputs_t, states, training=False):
        """One time step: ``(output_t, new_states)`` from ``inputs_t``
        ``(batch, features)`` and the list of states (as ``return_state``
        gives, or ``get_initial_state``). For streaming and generation; the
        same equations as the whole-sequence call."""
        if not self.built:
            self.build((None, None, inputs_t.shape[-1]))
        n = self._n_scan
        x = ops.expand_dims(ops.cast(inputs_t, self.compute_dtype), 1)
        h, extra = tuple(states[:n]), list(states[n:])
        a, b, context, new_extra = self.coefficients(x, extra, None, training)
        a0 = tuple(c[:, 0] for c in a)
        b0 = tuple(c[:, 0] for c in b)
        h = scan.linear_step(a0, tuple(ops.cast(c, b0[0].dtype) for c in h), b0)
        y = self.readout(tuple(ops.expand_dims(c, 1) for c in h), context, training)
        return y[:, 0], list(h) + list(new_extra)

    # Serialization -----------------------------------------------------------

    def get_config(self):
        config = {
            "return_sequences": self.return_sequences,
            "return_state": self.return_state,
            "go_backwards": self.go_backwards,
            "stateful": self.stateful,
        }
        return {**super().get_config(), **config}

    @classmethod
    def from_config(cls, config):
        bounds.check_config(cls.__name__, config, cls.__name__)
        return cls(**config)


def _map(structure, fn):
    """``fn`` on every tensor of a nested structure (``None`` leaves kept)."""
    return tree.map_structure(lambda c: None if c is None else fn(c), structure)
