"""Neural Turing Machine cell: a controller with read and write heads."""

import keras
from keras import ops

from keras_seqmodels.cells.steps import lstm_step
from keras_seqmodels.memory import addressing
from keras_seqmodels.utils import validation

# Added to the learned initial weighting logits so training starts with every
# head on slot 0 (a sharp start lets location-based shifts move it).
_FOCUS = 8.0
_CONSTANT_MEMORY = 1e-6


def head_sizes(memory_width, shift_range, write):
    """Sizes of one head's parameters [k, β, g, s, γ(, e, a)]."""
    sizes = [memory_width, 1, 1, 2 * shift_range + 1, 1]
    return sizes + [memory_width, memory_width] if write else sizes


@keras.saving.register_keras_serializable(package="keras_seqmodels")
class NTMCell(keras.layers.Layer):
    """Neural Turing Machine cell (one time step).

    A controller (LSTM or feed-forward) reads the input and the previous
    reads; a linear map of its output h gives each head's parameters:
    key k (tanh), strength β = softplus(·), gate g = σ(·), shift weights
    s = softmax(·) over offsets -S..S, sharpening γ = 1 + softplus(·), and for
    write heads erase e = σ(·) and add a = tanh(·). Each head addresses the
    memory M (N slots of width M) with

        w_c = softmax(β cos(k, M(i))),  w_g = g w_c + (1 - g) w_{t-1},
        w̃ = w_g ⊛ s (circular convolution),  w = w̃^γ / Σ w̃^γ,

    the write heads update M(i) ← M(i) ⊙ Π_h (1 - w_h(i) e_h) + Σ_h w_h(i) a_h,
    and then the read heads read r_h = Σ_i w_h(i) M(i) from the new memory.
    The functions are in ``keras_seqmodels.memory.addressing``.

    With ``read_mode="hard"`` each read head samples one slot i ~ w and reads
    M(i) (at inference: the most likely slot). Its gradient uses the
    score-function (REINFORCE) estimator of ∇ E_i[M(i)] with the soft read as
    baseline, r = M(i) + (log w(i) - sg(log w(i))) sg(M(i) - Σ_j w(j) M(j)),
    so the memory gets the pathwise gradient and the addressing the
    score-function one. It is **harder to train** (higher-variance
    gradients) than the soft reads; it exists to study the alternative. The
    uniform numbers of the sampling come in as the last ``read_heads``
    input features (the ``NTM`` layer draws them before the time loop, the
    only way random numbers work under ``jit`` on JAX).

    New relative to Keras: Keras has no external-memory cell. The cell keeps
    the package's ``project_inputs``/``step`` split, so the ``Recurrent``
    runner can hoist the input projection, and its states include matrices.

    Args:
        units: positive integer, controller width.
        memory_size: N, number of memory slots (default 128).
        memory_width: M, width of a slot (default 20).
        read_heads: positive integer (default 1).
        write_heads: positive integer (default 1).
        shift_range: S, shifts -S..S are allowed (default 1; 2S + 1 ≤ N).
        controller: ``"lstm"`` (default) or ``"feedforward"``.
        activation: the feed-forward controller's non-linearity (``"tanh"``).
        learn_initial_state: learn the initial memory and weightings
            (default True); else the memory starts at 1e-6 everywhere and
            every head on slot 0. In both cases the initial reads are read
            from the initial memory.
        read_mode: ``"soft"`` (default) or ``"hard"`` (see above).
        kernel_initializer, recurrent_initializer, bias_initializer:
            initializers of the controller and head weights.

    Call arguments:
        inputs: ``(batch, features)`` (with ``read_mode="hard"`` the last
            ``read_heads`` features are uniform(0, 1) numbers).
        states: ``[h, c]`` (LSTM) or ``[]`` (feed-forward), then
            ``memory (batch, N, M)``, ``read_weights (batch, R, N)``,
            ``write_weights (batch, W, N)``, ``reads (batch, R*M)``.
        training: whether hard reads sample (else take the most likely slot).

    Returns:
        ``(output, new_states)`` with ``output = [h, reads]`` of width
        ``units + read_heads * memory_width``.

    Example:

    >>> import numpy as np, keras_seqmodels as ks
    >>> cell = ks.memory.NTMCell(16, memory_size=8, memory_width=4)
    >>> layer = ks.layers.Recurrent(cell, return_sequences=True)
    >>> tuple(layer(np.ones((2, 5, 3), "float32")).shape)
    (2, 5, 20)

    Reference:
        Graves, Wayne & Danihelka, "Neural Turing Machines", arXiv:1410.5401
        (2014), section 3; Collier & Beel, "Implementing Neural Turing
        Machines", ICANN 2018 (initialisation); Williams 1992 (REINFORCE).
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
        **kwargs,
    ):
        super().__init__(**kwargs)
        name = type(self).__name__
        self.units = validation.check_positive_int(name, "units", units)
        self.memory_size = validation.check_positive_int(name, "memory_size", memory_size)
        self.memory_width = validation.check_positive_int(name, "memory_width", memory_width)
        self.read_heads = validation.check_positive_int(name, "read_heads", read_heads)
        self.write_heads = validation.check_positive_int(name, "write_heads", write_heads)
        if not validation.is_int(shift_range) or shift_range < 0:
            raise ValueError(
                f"{name}: `shift_range` must be a non-negative integer. "
                f"Received: shift_range={shift_range!r}"
            )
        if 2 * shift_range + 1 > memory_size:
            raise ValueError(
                f"{name}: `shift_range` allows 2 * shift_range + 1 = "
                f"{2 * shift_range + 1} shifts, more than memory_size="
                f"{memory_size} slots. Received: shift_range={shift_range}"
            )
        self.shift_range = int(shift_range)
        self.controller = validation.check_choice(
            name, "controller", controller, {"lstm", "feedforward"}
        )
        self.activation = keras.activations.get(activation)
        self.learn_initial_state = bool(learn_initial_state)
        self.read_mode = validation.check_choice(name, "read_mode", read_mode, {"soft", "hard"})
        self.kernel_initializer = keras.initializers.get(kernel_initializer)
        self.recurrent_initializer = keras.initializers.get(recurrent_initializer)
        self.bias_initializer = keras.initializers.get(bias_initializer)
        self._read_size = sum(head_sizes(memory_width, shift_range, False))
        self._write_size = sum(head_sizes(memory_width, shift_range, True))

    # Sizes ---------------------------------------------------------------

    @property
    def _gates(self):
        return 4 if self.controller == "lstm" else 1

    @property
    def state_size(self):
        controller = [self.units, self.units] if self.controller == "lstm" else []
        return controller + [
            (self.memory_size, self.memory_width),
            (self.read_heads, self.memory_size),
            (self.write_heads, self.memory_size),
            self.read_heads * self.memory_width,
        ]

    @property
    def output_size(self):
        return self.units + self.read_heads * self.memory_width

    # Weights -------------------------------------------------------------

    def build(self, input_shape):
        name = type(self).__name__
        if input_shape is None or len(input_shape) != 2:
            raise ValueError(
                f"{name}: a cell's step input must have rank 2, (batch, "
                f"features). Received shape {input_shape}"
            )
        validation.check_last_dim_known(name, "inputs", input_shape)
        features = input_shape[-1]
        if self.read_mode == "hard":
            features -= self.read_heads
            if features <= 0:
                raise ValueError(
                    f"{name}: with read_mode='hard' the inputs end with "
                    f"read_heads={self.read_heads} uniform numbers, after at "
                    f"least one feature. Received shape {tuple(input_shape)}"
                )
        width = self._gates * self.units
        self.kernel = self.add_weight(
            shape=(features, width), name="kernel", initializer=self.kernel_initializer
        )
        self.read_kernel = self.add_weight(
            shape=(self.read_heads * self.memory_width, width),
            name="read_kernel",
            initializer=self.kernel_initializer,
        )
        if self.controller == "lstm":
            self.recurrent_kernel = self.add_weight(
                shape=(self.units, width),
                name="recurrent_kernel",
                initializer=self.recurrent_initializer,
            )
        bias_init = self.bias_initializer
        if self.controller == "lstm":
            base, units = self.bias_initializer, self.units

            def bias_init(shape, dtype=None):
                return ops.concatenate(
                    [
                        base((units,), dtype=dtype),
                        ops.ones((units,), dtype=dtype),
                        base((2 * units,), dtype=dtype),
                    ]
                )

        self.bias = self.add_weight(shape=(width,), name="bias", initializer=bias_init)
        params = self.read_heads * self._read_size + self.write_heads * self._write_size
        self.head_kernel = self.add_weight(
            shape=(self.units, params), name="head_kernel", initializer=self.kernel_initializer
        )
        self.head_bias = self.add_weight(
            shape=(params,), name="head_bias", initializer=self.bias_initializer
        )
        if self.learn_initial_state:
            self.initial_memory = self.add_weight(
                shape=(self.memory_size, self.memory_width),
                name="initial_memory",
                initializer=keras.initializers.Constant(_CONSTANT_MEMORY),
            )
            self.initial_read_logits = self.add_weight(
                shape=(self.read_heads, self.memory_size),
                name="initial_read_logits",
                initializer="zeros",
            )
            self.initial_write_logits = self.add_weight(
                shape=(self.write_heads, self.memory_size),
                name="initial_write_logits",
                initializer="zeros",
            )
        self.built = True

    # States --------------------------------------------------------------

    def get_initial_state(self, batch_size=None):
        dtype = self.compute_dtype
        n, m = self.memory_size, self.memory_width
        focus = ops.cast(ops.arange(n) == 0, dtype)
        if self.learn_initial_state and self.built:
            memory = ops.cast(self.initial_memory, dtype)
            read_w = ops.softmax(ops.cast(self.initial_read_logits, dtype) + _FOCUS * focus)
            write_w = ops.softmax(ops.cast(self.initial_write_logits, dtype) + _FOCUS * focus)
        else:
            memory = ops.full((n, m), _CONSTANT_MEMORY, dtype=dtype)
            read_w = ops.tile(focus[None, :], (self.read_heads, 1))
            write_w = ops.tile(focus[None, :], (self.write_heads, 1))
        memory = ops.broadcast_to(memory[None], (batch_size, n, m))
        read_w = ops.broadcast_to(read_w[None], (batch_size, self.read_heads, n))
        write_w = ops.broadcast_to(write_w[None], (batch_size, self.write_heads, n))
        # Explicit widths (not -1): an empty batch has nothing to infer from.
        reads = ops.reshape(addressing.read(memory, read_w), (batch_size, self.read_heads * m))
        controller = []
        if self.controller == "lstm":
            zeros = ops.zeros((batch_size, self.units), dtype=dtype)
            controller = [zeros, zeros]
        return controller + [memory, read_w, write_w, reads]

    # Step ----------------------------------------------------------------

    def project_inputs(self, inputs):
        """Input projection ``x W + b`` (any leading shape); hard reads keep
        their uniform numbers appended for ``step``."""
        if self.read_mode == "hard":
            x, noise = inputs[..., : -self.read_heads], inputs[..., -self.read_heads :]
            return ops.concatenate([ops.matmul(x, self.kernel) + self.bias, noise], -1)
        return ops.matmul(inputs, self.kernel) + self.bias

    def _head_params(self, h):
        """Split the controller's head outputs into constrained parameters."""
        batch = ops.shape(h)[0]
        flat = ops.matmul(h, self.head_kernel) + self.head_bias
        cut = self.read_heads * self._read_size
        read = ops.reshape(flat[:, :cut], (batch, self.read_heads, self._read_size))
        write = ops.reshape(flat[:, cut:], (batch, self.write_heads, self._write_size))
        return self._constrain(read, False), self._constrain(write, True)

    def _constrain(self, params, write):
        sizes = head_sizes(self.memory_width, self.shift_range, write)
        bounds = [sum(sizes[:i]) for i in range(1, len(sizes))]
        parts = ops.split(params, bounds, axis=-1)
        out = {
            "keys": ops.tanh(parts[0]),
            "strengths": ops.softplus(parts[1][..., 0]),
            "gates": ops.sigmoid(parts[2][..., 0]),
            "shift_weights": ops.softmax(parts[3], axis=-1),
            "gammas": 1.0 + ops.softplus(parts[4][..., 0]),
        }
        if write:
            out["erase"] = ops.sigmoid(parts[5])
            out["add"] = ops.tanh(parts[6])
        return out

    def _address(self, memory, previous, p):
        return addressing.address(
            memory,
            previous,
            p["keys"],
            p["strengths"],
            p["gates"],
            p["shift_weights"],
            p["gammas"],
        )

    def _hard_read(self, memory, weights, uniforms, training):
        soft = addressing.read(memory, weights)
        if training:
            # Inverse-CDF sampling: the slot where the cumulative weight
            # first exceeds u.
            cdf = ops.cumsum(weights, axis=-1)
            u = uniforms[:, :, None]
            chosen = ops.cast((cdf > u) & (cdf - weights <= u), weights.dtype)
            # Guard against u beyond the (rounded) total: take the last slot.
            none = 1.0 - ops.minimum(ops.sum(chosen, axis=-1, keepdims=True), 1.0)
            last = ops.cast(ops.arange(self.memory_size) == self.memory_size - 1, weights.dtype)
            chosen = chosen + none * last
        else:
            chosen = ops.one_hot(
                ops.argmax(weights, axis=-1), self.memory_size, dtype=weights.dtype
            )
        chosen = ops.stop_gradient(chosen)
        hard = addressing.read(memory, chosen)
        log_p = ops.sum(
            ops.cast(chosen, "float32") * addressing.log_weights(weights), axis=-1
        )
        log_p = ops.cast(log_p, weights.dtype)
        surrogate = (log_p - ops.stop_gradient(log_p))[:, :, None]
        return hard + surrogate * ops.stop_gradient(hard - soft)

    def step(self, z, states, training=False):
        states = list(states)
        if self.controller == "lstm":
            h, c = states[0], states[1]
            states = states[2:]
        memory, read_w, write_w, reads = states
        if self.read_mode == "hard":
            z, uniforms = z[:, : -self.read_heads], z[:, -self.read_heads :]
        z = z + ops.matmul(reads, self.read_kernel)
        if self.controller == "lstm":
            h, c = lstm_step(z, h, c, self.recurrent_kernel, ops.tanh, ops.sigmoid)
            controller = [h, c]
        else:
            h = self.activation(z)
            controller = []
        read_p, write_p = self._head_params(h)
        write_w = self._address(memory, write_w, write_p)
        memory = addressing.write(memory, write_w, write_p["erase"], write_p["add"])
        read_w = self._address(memory, read_w, read_p)
        if self.read_mode == "hard":
            read_vectors = self._hard_read(memory, read_w, uniforms, training)
        else:
            read_vectors = addressing.read(memory, read_w)
        reads = ops.reshape(read_vectors, (ops.shape(h)[0], self.read_heads * self.memory_width))
        output = ops.concatenate([h, reads], axis=-1)
        return output, controller + [memory, read_w, write_w, reads]

    def call(self, inputs, states, training=False):
        return self.step(self.project_inputs(inputs), states, training=training)

    def get_config(self):
        config = {
            "units": self.units,
            "memory_size": self.memory_size,
            "memory_width": self.memory_width,
            "read_heads": self.read_heads,
            "write_heads": self.write_heads,
            "shift_range": self.shift_range,
            "controller": self.controller,
            "activation": keras.activations.serialize(self.activation),
            "learn_initial_state": self.learn_initial_state,
            "read_mode": self.read_mode,
            "kernel_initializer": keras.initializers.serialize(self.kernel_initializer),
            "recurrent_initializer": keras.initializers.serialize(self.recurrent_initializer),
            "bias_initializer": keras.initializers.serialize(self.bias_initializer),
        }
        return {**super().get_config(), **config}
