"""Teacher forcing, closed-loop generation and scheduled sampling."""

import keras
from keras import ops, tree

from keras_seqmodels._compat import backend_rnn
from keras_seqmodels.utils import bounds, serialization, validation


@keras.saving.register_keras_serializable(package="keras_seqmodels")
class OutputFeedback(keras.layers.Layer):
    """Runs an ``OutputFeedbackCell`` with teacher forcing or in closed loop.

    Called on ``[x, y]`` (inputs and the target sequence), it trains by
    **teacher forcing**: the hidden units at t receive the ground truth
    y(t-1) (y(-1) = the initial output, zeros by default) instead of the
    model's own o(t-1). When the cell has no hidden-to-hidden recurrence the
    steps are then independent,

        h(t) = f(b + U x(t) + R y(t-1)),  o(t) = g(c + V h(t))  for all t at once,

    and the layer computes them as two batched matrix products, with no
    time loop and no back-propagation through time (``parallel=True``).
    Called on ``x`` alone it runs **closed loop**, feeding o(t-1) back, as
    at generation time. With ``scheduled_sampling=True``, training calls on
    ``[x, y]`` feed, at each step and for each sequence independently, the
    ground truth with probability ε (the ``teacher_probability`` weight) and
    the model's own previous output otherwise; the
    ``keras_seqmodels.training.ScheduledSampling`` callback lowers ε on a
    schedule. (Outside training, ``[x, y]`` is always teacher forced.)

    New relative to Keras: Keras has no output-recurrent layer, no teacher
    forcing mode and no scheduled sampling.

    Args:
        cell: a ``keras_seqmodels.cells.OutputFeedbackCell``.
        parallel: compute teacher forcing without a time loop when the cell
            has no hidden recurrence (set False to force the loop, e.g. to
            measure the difference).
        scheduled_sampling: mix ground truth and own outputs in training.
        seed: seed of the scheduled-sampling coin flips.

    Call arguments:
        inputs: ``x`` ``(batch, time, features)``, or ``[x, y]`` with y
            ``(batch, time, output_units)``.
        initial_state: optional list of the cell's initial states
            (``[o(-1)]`` or ``[h(-1), o(-1)]``).
        mask: optional ``(batch, time)`` boolean; masked steps output zeros
            and do not change the state.
        training: whether scheduled sampling is active.

    Output shape: ``(batch, time, output_units)``.

    Example:

    >>> import numpy as np, keras, keras_seqmodels as ks
    >>> x_in, y_in = keras.Input((10, 3)), keras.Input((10, 1))
    >>> layer = ks.layers.OutputFeedback(ks.cells.OutputFeedbackCell(8, 1))
    >>> model = keras.Model([x_in, y_in], layer([x_in, y_in]))   # training
    >>> generator = keras.Model(x_in, layer(x_in))               # closed loop

    Reference:
        Williams & Zipser 1989; Bengio, Vinyals, Jaitly & Shazeer, "Scheduled
        sampling for sequence prediction with recurrent neural networks",
        NeurIPS 2015; Deep Learning, section 10.2.1.
    """

    def __init__(self, cell, parallel=True, scheduled_sampling=False, seed=None, **kwargs):
        super().__init__(**kwargs)
        validation.check_cell_instance("OutputFeedback", "cell", cell)
        if not all(
            callable(getattr(cell, name, None))
            for name in ("project_inputs", "hidden", "readout", "step")
        ):
            raise ValueError(
                "OutputFeedback: `cell` must be an OutputFeedbackCell (with "
                f"project_inputs, hidden, readout and step). Received: cell={cell!r}"
            )
        self.cell = cell
        self.parallel = bool(parallel)
        self.scheduled_sampling = bool(scheduled_sampling)
        self.seed = seed
        self.seed_generator = keras.random.SeedGenerator(seed)
        self.supports_masking = True

    def _split(self, inputs):
        is_shape = isinstance(inputs, (list, tuple)) and all(
            d is None or isinstance(d, int) for d in inputs
        )
        if isinstance(inputs, (list, tuple)) and not is_shape:
            if len(inputs) != 2:
                raise ValueError(
                    f"{self.name}: inputs must be x or [x, y]. Received a list "
                    f"of {len(inputs)} tensors"
                )
            return inputs[0], inputs[1]
        return inputs, None

    def build(self, inputs_shape, initial_state_shape=None):
        x_shape, y_shape = self._split(inputs_shape)
        validation.check_rank(self.name, "x", x_shape, 3, "(batch, time, features)")
        validation.check_last_dim_known(self.name, "x", x_shape)
        if y_shape is not None:
            validation.check_rank(self.name, "y", y_shape, 3, "(batch, time, output_units)")
            if y_shape[-1] is not None and y_shape[-1] != self.cell.output_units:
                raise ValueError(
                    f"{self.name}: the targets y must have output_units="
                    f"{self.cell.output_units} features. Received shape "
                    f"{tuple(y_shape)}"
                )
        if not self.cell.built:
            self.cell.build((x_shape[0], x_shape[-1]))
        self.teacher_probability = self.add_weight(
            shape=(),
            name="teacher_probability",
            initializer="ones",
            trainable=False,
        )

    def compute_output_shape(self, inputs_shape, initial_state_shape=None):
        x_shape, _ = self._split(inputs_shape)
        return (x_shape[0], x_shape[1], self.cell.output_units)

    def compute_mask(self, inputs, mask=None):
        if isinstance(mask, (list, tuple)):
            return mask[0]
        return mask

    def call(self, inputs, initial_state=None, mask=None, training=False):
        x, y = self._split(inputs)
        if isinstance(mask, (list, tuple)):
            mask = mask[0]
        cell = self.cell
        batch = ops.shape(x)[0]
        if initial_state is None:
            initial_state = cell.get_initial_state(batch)
        initial_state = [ops.cast(s, cell.compute_dtype) for s in tree.flatten(initial_state)]
        if x.shape[1] == 0:
            return ops.zeros((batch, 0, cell.output_units), dtype=self.compute_dtype)
        z = cell.project_inputs(x)
        if y is None:
            return self._loop(z, None, None, initial_state, mask)
        y = ops.cast(y, z.dtype)
        # y(t-1) for every t, with the initial output before the first step.
        y_prev = ops.concatenate([ops.expand_dims(initial_state[-1], 1), y[:, :-1]], axis=1)
        if training and self.scheduled_sampling:
            u = keras.random.uniform(
                (batch, x.shape[1], 1), seed=self.seed_generator, dtype=z.dtype
            )
            coins = ops.cast(u < ops.cast(self.teacher_probability, z.dtype), z.dtype)
            return self._loop(z, y_prev, coins, initial_state, mask)
        if self.parallel and not cell.hidden_recurrence:
            out = cell.readout(cell.hidden(z, y_prev))
            if mask is not None:
                out = out * ops.cast(ops.expand_dims(mask, -1), out.dtype)
            return out
        return self._loop(z, y_prev, None, initial_state, mask)

    def _loop(self, z, y_prev, coins, initial_state, mask):
        """The time loop; loop inputs are [z, y(t-1), coin] concatenated."""
        cell = self.cell
        units, out_units = cell.units, cell.output_units
        parts = [z] + [p for p in (y_prev, coins) if p is not None]
        loop_inputs = ops.concatenate(parts, axis=-1) if len(parts) > 1 else z

        def step(inp, states):
            z_t = inp[:, :units]
            feedback = None
            if y_prev is not None:
                truth = inp[:, units : units + out_units]
                if coins is not None:
                    coin = inp[:, units + out_units :]
                    feedback = coin * truth + (1.0 - coin) * states[-1]
                else:
                    feedback = truth
            out, new_states = cell.step(z_t, list(states), feedback=feedback)
            new_states = [
                s if s.dtype == r.dtype else ops.cast(s, r.dtype)
                for s, r in zip(new_states, states)
            ]
            return out, new_states

        _, outputs, _ = backend_rnn(
            step,
            loop_inputs,
            initial_state,
            mask=mask,
            input_length=z.shape[1],
            zero_output_for_mask=True,
            return_all_outputs=True,
        )
        return outputs

    def get_config(self):
        config = {
            "cell": keras.saving.serialize_keras_object(self.cell),
            "parallel": self.parallel,
            "scheduled_sampling": self.scheduled_sampling,
            "seed": self.seed,
        }
        return {**super().get_config(), **config}

    @classmethod
    def from_config(cls, config, custom_objects=None):
        bounds.check_config(cls.__name__, config)
        return cls(**serialization.deserialize_nested(config, ("cell",), custom_objects))
