"""A state machine whose transition and output functions are Keras layers."""

import keras
import numpy as np
from keras import ops

from keras_seqmodels.cells.recurrent_cell import unpack_single_state
from keras_seqmodels.utils import bounds, serialization, validation

_NAME = "StateMachineCell"


def state_machine_step(x, s, transition, output=None, gate=None, training=False):
    """One step of a (gated) state machine with layers as its functions.

    s' = f_s([s, x]), or with a gate g = f_g([s, x]): s' = s + g ⊙ (f_s([s, x]) - s);
    y = f_o(s'), or y = s' without ``output``. ``[s, x]`` is the concatenation
    along the last axis, previous state first.

    Args:
        x: the input of the step, ``(batch, features)``.
        s: the previous state s(t-1), ``(batch, state_size)``.
        transition: f_s, a callable from ``(batch, state_size + features)``
            to ``(batch, state_size)``.
        output: f_o, a callable on ``(batch, state_size)``, or ``None``.
        gate: f_g, a callable like ``transition`` with values in [0, 1], or
            ``None``.
        training: passed to the layers.

    Returns:
        ``(y, s')``.

    Example:

    >>> import numpy as np, keras
    >>> f_s = keras.layers.Dense(2, kernel_initializer="ones")
    >>> y, s = state_machine_step(np.ones((1, 1)), np.zeros((1, 2)), f_s)
    >>> np.asarray(s).tolist()
    [[1.0, 1.0]]
    """
    sx = ops.concatenate([s, ops.cast(x, s.dtype)], axis=-1)
    candidate = ops.cast(transition(sx, training=training), s.dtype)
    if gate is None:
        new = candidate
    else:
        g = ops.cast(gate(sx, training=training), s.dtype)
        new = s + g * (candidate - s)
    y = new if output is None else output(new, training=training)
    return y, new


def _check_layer(arg, value, required=True):
    if value is None and not required:
        return None
    if isinstance(value, type):
        raise ValueError(
            f"{_NAME}: `{arg}` must be a Keras layer instance, e.g. "
            f"keras.layers.Dense(8), not the class itself. Received: {arg}={value!r}"
        )
    if not isinstance(value, keras.layers.Layer):
        raise ValueError(
            f"{_NAME}: `{arg}` must be a Keras layer (or model). Received: {arg}={value!r}"
        )
    return value


def _width(layer):
    """The output width a layer declares without being called, or ``None``."""
    units = getattr(layer, "units", None)
    if validation.is_int(units):
        return int(units)
    layers = getattr(layer, "layers", None)
    if layers:
        return _width(layers[-1])
    return None


@keras.saving.register_keras_serializable(package="keras_seqmodels")
class StateMachineCell(keras.layers.Layer):
    """A state machine (S, X, Y, s0, f_s, f_o) with Keras layers as f_s and f_o.

        s(0) = s0,   s(t) = f_s([s(t-1), x(t)]),   y(t) = f_o(s(t)),

    with S = R^state_size, X = R^features, Y = R^output_size. f_s receives
    the previous state and the input **concatenated, state first**: a
    ``(batch, state_size + features)`` tensor, so a ``Dense`` transition's
    kernel is ``[W^ss; W^sx]`` (its first ``state_size`` rows act on the
    state). Without ``output`` the machine outputs its state (f_o = identity).
    With a ``gate`` f_g (same input as f_s, values in [0, 1], e.g. a sigmoid
    ``Dense``), the gate decides which state dimensions update:

        g(t) = f_g([s(t-1), x(t)]),   s(t) = (1 - g) ⊙ s(t-1) + g ⊙ f_s([s(t-1), x(t)]).

    The package's other cells are special cases with fixed f_s and f_o:
    ``ElmanCell`` is f_s = ``Dense(n, "tanh")``, f_o = identity (the
    chapter's plain RNN, f_s = tanh(W^sx x + W^ss s + b), f_o = g(W^o s + b),
    is that f_s and ``output=Dense(m, g)``); ``GatedCell`` is the gated form
    with f_s = ``Dense(n, "tanh")``, f_g = ``Dense(n, "sigmoid")``;
    ``DeepTransitionCell`` has MLPs as f_s and f_o; the GRU and LSTM are
    gated machines with more structure inside f_s (a reset gate; a memory
    cell as part of the state). This cell runs every such machine from
    layers the user picks: any Keras layers or models, trained together by
    BPTT in ``Recurrent``. Keras has no state-machine cell: its cells fix
    their functions, and ``keras.layers.RNN`` needs a cell class written for
    each new machine.

    Sub-layers are called once per step inside the time loop. Random
    layers inside them (``Dropout``) would draw inside the loop, which fails
    under ``jit`` on JAX; apply dropout outside the ``Recurrent`` layer.

    Args:
        transition: f_s, a Keras layer or model mapping ``(batch,
            state_size + features)`` to ``(batch, state_size)``.
        output: f_o, a Keras layer or model on ``(batch, state_size)``, or
            ``None`` (default) to output the state.
        gate: optional f_g, a Keras layer or model like ``transition`` with
            values in [0, 1].
        state_size: width of the state. Default: read from ``transition``
            (its ``units``, or its last layer's); required otherwise.
        initial_state: s0, a sequence of ``state_size`` numbers, or ``None``
            (default) for zeros. Saved with the cell.
        learn_initial_state: make s0 a trainable weight (``initial_state``),
            starting from ``initial_state``.
        **kwargs: base layer arguments (``name``, ``dtype``).

    Call arguments:
        inputs: ``(batch, features)``, one time step.
        states: ``[s(t-1)]``, ``(batch, state_size)``.
        training: passed to the sub-layers.

    Returns:
        ``(y(t), [s(t)])``.

    Masking: inside ``Recurrent``, a masked step keeps the state and
    outputs zeros, as for every cell; ``Recurrent`` and ``Bidirectional``
    start each sequence from s0.

    Example (the chapter's plain RNN: 4 state units, 2 sigmoid outputs):

    >>> import numpy as np, keras, keras_seqmodels as ks
    >>> cell = ks.cells.StateMachineCell(
    ...     keras.layers.Dense(4, activation="tanh"),
    ...     output=keras.layers.Dense(2, activation="sigmoid"),
    ...     learn_initial_state=True)
    >>> layer = ks.layers.Recurrent(cell, return_sequences=True)
    >>> tuple(layer(np.ones((3, 5, 1), "float32")).shape)
    (3, 5, 2)

    Reference:
        MIT 6.390 (6.036) Introduction to Machine Learning, chapter
        "Recurrent Neural Networks" (state machines, gating); Goodfellow,
        Bengio & Courville, Deep Learning, sections 10.1-10.2, 10.10.
    """

    def __init__(
        self,
        transition,
        output=None,
        gate=None,
        state_size=None,
        initial_state=None,
        learn_initial_state=False,
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.transition_layer = _check_layer("transition", transition)
        self.output_layer = _check_layer("output", output, required=False)
        self.gate_layer = _check_layer("gate", gate, required=False)
        if state_size is None:
            state_size = _width(self.transition_layer)
            if state_size is None:
                raise ValueError(
                    f"{_NAME}: `state_size` must be given when it cannot be read "
                    "from `transition` (a layer with `units`, or a model whose "
                    f"last layer has them). Received: state_size=None, "
                    f"transition={transition!r}"
                )
        self._state_size = validation.check_positive_int(_NAME, "state_size", state_size)
        if initial_state is not None:
            try:
                s0 = np.asarray(initial_state, dtype="float64")
            except (TypeError, ValueError):
                s0 = None
            if s0 is None or s0.shape != (self._state_size,) or not np.all(np.isfinite(s0)):
                raise ValueError(
                    f"{_NAME}: `initial_state` must be None or {self._state_size} "
                    f"finite numbers (state_size={self._state_size}). Received: "
                    f"initial_state={initial_state!r}"
                )
            initial_state = [float(v) for v in s0]
        self.initial_state = initial_state
        self.learn_initial_state = bool(learn_initial_state)
        self.initial_state_weight = None

    @property
    def state_size(self):
        return self._state_size

    @property
    def output_size(self):
        if self.output_layer is None:
            return self._state_size
        width = _width(self.output_layer)
        if width is None:
            width = self.output_layer.compute_output_shape((None, self._state_size))[-1]
        return width

    def _build_sublayer(self, arg, layer, in_width, out_width=None):
        shape = (None, in_width)
        if not layer.built:
            layer.build(shape)
        if out_width is None:
            return
        got = tuple(layer.compute_output_shape(shape))
        if len(got) != 2 or got[-1] != out_width:
            raise ValueError(
                f"{_NAME}: `{arg}` must map (batch, state_size + features) = {shape} "
                f"to (batch, state_size) = (None, {out_width}). Received: {arg} "
                f"with output shape {got}"
            )

    def build(self, input_shape):
        if input_shape is None or len(input_shape) != 2:
            raise ValueError(
                f"{_NAME}: a cell's step input must have rank 2, (batch, "
                f"features). Received shape {input_shape}"
            )
        validation.check_last_dim_known(_NAME, "inputs", input_shape)
        width = self._state_size + int(input_shape[-1])
        self._build_sublayer("transition", self.transition_layer, width, self._state_size)
        if self.gate_layer is not None:
            self._build_sublayer("gate", self.gate_layer, width, self._state_size)
        if self.output_layer is not None:
            self._build_sublayer("output", self.output_layer, self._state_size)
        if self.learn_initial_state or self.initial_state is not None:
            s0 = self.initial_state
            initializer = (
                "zeros" if s0 is None else keras.initializers.Constant(np.asarray(s0, "float32"))
            )
            self.initial_state_weight = self.add_weight(
                shape=(self._state_size,),
                name="initial_state",
                initializer=initializer,
                trainable=self.learn_initial_state,
            )

    def call(self, inputs, states, training=False):
        validation.check_float_dtype(self.name, "inputs", inputs.dtype)
        s = unpack_single_state(states)
        y, new = state_machine_step(
            inputs,
            s,
            self.transition_layer,
            self.output_layer,
            self.gate_layer,
            training=training,
        )
        return y, [new]

    def get_initial_state(self, batch_size=None):
        s0 = ops.zeros((batch_size, self._state_size), dtype=self.compute_dtype)
        if self.initial_state_weight is not None:
            s0 = s0 + ops.cast(self.initial_state_weight, self.compute_dtype)
        return [s0]

    def get_config(self):
        def serialize(layer):
            return None if layer is None else keras.saving.serialize_keras_object(layer)

        config = {
            "transition": serialize(self.transition_layer),
            "output": serialize(self.output_layer),
            "gate": serialize(self.gate_layer),
            "state_size": self._state_size,
            "initial_state": self.initial_state,
            "learn_initial_state": self.learn_initial_state,
        }
        return {**super().get_config(), **config}

    @classmethod
    def from_config(cls, config, custom_objects=None):
        bounds.check_config(cls.__name__, config)
        return cls(
            **serialization.deserialize_nested(
                config, ("transition", "output", "gate"), custom_objects
            )
        )
