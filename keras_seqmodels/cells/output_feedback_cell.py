"""Output-to-hidden recurrence (the Jordan network)."""

import keras
from keras import ops

from keras_seqmodels.cells.design_steps import output_feedback_step
from keras_seqmodels.utils import validation


@keras.saving.register_keras_serializable(package="keras_seqmodels")
class OutputFeedbackCell(keras.layers.Layer):
    """RNN whose recurrence goes from the output at t-1 to the hidden units at t.

        h(t) = f(b + U x(t) + R o(t-1) [+ W h(t-1)]),   o(t) = g(c + V h(t)).

    With ``hidden_recurrence=False`` (the default) the only recurrence is
    o(t-1) -> h(t) (Deep Learning figure 10.4): the model is less powerful
    than the Elman network, since o must carry all the past, but when it is
    trained by *teacher forcing* (feeding the ground truth y(t-1) instead of
    o(t-1)) the time steps decouple and the whole sequence is computed in
    parallel, with no back-propagation through time. The
    ``keras_seqmodels.layers.OutputFeedback`` layer runs this cell in the
    three regimes: teacher forcing (parallel when there is no hidden
    recurrence), closed loop (generation, feeding o(t-1) back) and scheduled
    sampling. Run alone inside ``Recurrent`` or ``keras.layers.RNN``, the
    cell is closed loop. With ``hidden_recurrence=True`` it has both
    recurrences (figure 10.10's teacher-forced model with hidden state).
    Not in Keras.

    Args:
        units: positive integer, width of h.
        output_units: positive integer, width of o (and of the targets y).
        hidden_recurrence: also use h(t-1) W.
        activation: f, default ``"tanh"``.
        output_activation: g, default linear (use ``"softmax"`` for symbol
            sequences; closed loop then feeds back the probability vector).
        use_bias: biases b and c.
        kernel_initializer: for U and V; feedback_initializer: for R;
        recurrent_initializer: for W; bias_initializer: for b and c.

    Call arguments:
        inputs: ``(batch, features)``; states: ``[o(t-1)]`` or
        ``[h(t-1), o(t-1)]`` with ``hidden_recurrence``.

    Returns:
        ``(o(t), new_states)``.

    Example:

    >>> import numpy as np, keras_seqmodels as ks
    >>> cell = ks.cells.OutputFeedbackCell(16, output_units=2)
    >>> layer = ks.layers.OutputFeedback(cell)
    >>> x, y = np.ones((4, 7, 3), "float32"), np.ones((4, 7, 2), "float32")
    >>> layer([x, y]).shape, layer(x).shape   # teacher forced, closed loop
    ((4, 7, 2), (4, 7, 2))

    Reference:
        Jordan, "Serial order: a parallel distributed processing approach",
        1986; Williams & Zipser 1989 (teacher forcing); Deep Learning,
        sections 10.2.1-10.2.2.
    """

    def __init__(
        self,
        units,
        output_units,
        hidden_recurrence=False,
        activation="tanh",
        output_activation=None,
        use_bias=True,
        kernel_initializer="glorot_uniform",
        feedback_initializer="glorot_uniform",
        recurrent_initializer="orthogonal",
        bias_initializer="zeros",
        **kwargs,
    ):
        super().__init__(**kwargs)
        name = "OutputFeedbackCell"
        self.units = validation.check_positive_int(name, "units", units)
        self.output_units = validation.check_positive_int(name, "output_units", output_units)
        self.hidden_recurrence = bool(hidden_recurrence)
        self.activation = keras.activations.get(activation)
        self.output_activation = keras.activations.get(output_activation)
        self.use_bias = bool(use_bias)
        self.kernel_initializer = keras.initializers.get(kernel_initializer)
        self.feedback_initializer = keras.initializers.get(feedback_initializer)
        self.recurrent_initializer = keras.initializers.get(recurrent_initializer)
        self.bias_initializer = keras.initializers.get(bias_initializer)

    @property
    def state_size(self):
        if self.hidden_recurrence:
            return [self.units, self.output_units]
        return [self.output_units]

    @property
    def output_size(self):
        return self.output_units

    def build(self, input_shape):
        if input_shape is None or len(input_shape) != 2:
            raise ValueError(
                "OutputFeedbackCell: a cell's step input must have rank 2, "
                f"(batch, features). Received shape {input_shape}"
            )
        validation.check_last_dim_known("OutputFeedbackCell", "inputs", input_shape)
        self.kernel = self.add_weight(
            shape=(input_shape[-1], self.units),
            name="kernel",
            initializer=self.kernel_initializer,
        )
        self.feedback_kernel = self.add_weight(
            shape=(self.output_units, self.units),
            name="feedback_kernel",
            initializer=self.feedback_initializer,
        )
        self.recurrent_kernel = (
            self.add_weight(
                shape=(self.units, self.units),
                name="recurrent_kernel",
                initializer=self.recurrent_initializer,
            )
            if self.hidden_recurrence
            else None
        )
        self.output_kernel = self.add_weight(
            shape=(self.units, self.output_units),
            name="output_kernel",
            initializer=self.kernel_initializer,
        )
        if self.use_bias:
            self.bias = self.add_weight(
                shape=(self.units,), name="bias", initializer=self.bias_initializer
            )
            self.output_bias = self.add_weight(
                shape=(self.output_units,),
                name="output_bias",
                initializer=self.bias_initializer,
            )
        else:
            self.bias = self.output_bias = None

    def project_inputs(self, inputs):
        """``b + x U`` for inputs of any leading shape."""
        z = ops.matmul(inputs, self.kernel)
        return z + self.bias if self.bias is not None else z

    def hidden(self, z, feedback, h_prev=None):
        """h = f(z + feedback R [+ h_prev W]); works on any leading shape."""
        return output_feedback_step(
            z,
            feedback,
            h_prev,
            self.feedback_kernel,
            self.recurrent_kernel,
            self.activation,
        )

    def readout(self, h):
        """o = g(c + h V)."""
        a = ops.matmul(h, self.output_kernel)
        if self.output_bias is not None:
            a = a + self.output_bias
        return self.output_activation(a)

    def step(self, z, states, training=False, feedback=None):
        """One step; ``feedback`` replaces o(t-1) (teacher forcing) if given."""
        states = list(states)
        o_prev = states[-1]
        fb = o_prev if feedback is None else feedback
        h_prev = states[0] if self.hidden_recurrence else None
        h = self.hidden(z, fb, h_prev)
        o = self.readout(h)
        return o, ([h, o] if self.hidden_recurrence else [o])

    def call(self, inputs, states, training=False):
        return self.step(self.project_inputs(inputs), states, training=training)

    def get_initial_state(self, batch_size=None):
        return [ops.zeros((batch_size, size), dtype=self.compute_dtype) for size in self.state_size]

    def get_config(self):
        config = {
            "units": self.units,
            "output_units": self.output_units,
            "hidden_recurrence": self.hidden_recurrence,
            "activation": keras.activations.serialize(self.activation),
            "output_activation": keras.activations.serialize(self.output_activation),
            "use_bias": self.use_bias,
            "kernel_initializer": keras.initializers.serialize(self.kernel_initializer),
            "feedback_initializer": keras.initializers.serialize(self.feedback_initializer),
            "recurrent_initializer": keras.initializers.serialize(self.recurrent_initializer),
            "bias_initializer": keras.initializers.serialize(self.bias_initializer),
        }
        return {**super().get_config(), **config}
