"""Pascanu et al.'s regularizer that keeps back-propagated gradients' norm."""

import keras
from keras import ops

from keras_seqmodels.cells.recurrent_cell import unpack_single_state
from keras_seqmodels.utils import serialization

_DERIVATIVES = {
    # f'(a) written from s = f(a), so the backward pass needs only s.
    "tanh": lambda s, a: 1.0 - ops.square(s),
    "sigmoid": lambda s, a: s * (1.0 - s),
    "relu": lambda s, a: ops.cast(a > 0, s.dtype),
    "linear": lambda s, a: ops.ones_like(s),
}


def gradient_flow_terms(v, fprime, alpha, recurrent_kernel, epsilon=1e-8):
    """Ω_t and ∂Ω_t/∂W for one step of h(t) = α h(t-1) + (1-α) f(z + h(t-1) W).

    With v = ∂L/∂h(t) (one row per sequence) and d = (1-α) ⊙ v ⊙ f'(a(t)),
    the back-propagated vector is u = v ∂h(t)/∂h(t-1) = α ⊙ v + d Wᵀ and

        Ω_t = mean over the batch of (‖u‖ / ‖v‖ - 1)²,
        ∂Ω_t/∂W = Gᵀ d,  G = ∂Ω_t/∂u = 2 (‖u‖/‖v‖ - 1) u / (‖u‖ ‖v‖ B),

    holding v and f'(a) constant. Rows with ‖v‖ < epsilon contribute 0.

    Args:
        v: ∂L/∂h(t), ``(batch, units)``.
        fprime: f'(a(t)), ``(batch, units)``.
        alpha: the leak α (0 for an Elman cell), a scalar or ``(units,)``.
        recurrent_kernel: W, ``(units, units)``.
        epsilon: rows with ‖v‖ below this are ignored.

    Returns:
        ``(omega, grad_w, u)``: Ω_t (scalar), ∂Ω_t/∂W ``(units, units)`` and
        the back-propagated vector u ``(batch, units)``.

    Example (W = I, f' = 1, α = 0: the gradient flows unchanged, Ω = 0):

    >>> import numpy as np
    >>> omega, grad_w, u = gradient_flow_terms(
    ...     np.ones((1, 2)), np.ones((1, 2)), 0.0, np.eye(2))
    >>> float(omega), np.asarray(u).tolist()
    (0.0, [[1.0, 1.0]])
    """
    d = (1.0 - alpha) * v * fprime
    u = alpha * v + ops.matmul(d, ops.transpose(recurrent_kernel))
    nv = ops.sqrt(ops.sum(ops.square(v), axis=-1, keepdims=True))
    nu = ops.sqrt(ops.sum(ops.square(u), axis=-1, keepdims=True))
    valid = ops.cast(nv > epsilon, v.dtype)
    nv_safe = ops.maximum(nv, epsilon)
    nu_safe = ops.maximum(nu, epsilon)
    ratio = nu / nv_safe
    batch = ops.cast(ops.shape(v)[0], v.dtype)
    omega = ops.sum(valid * ops.square(ratio - 1.0)) / batch
    g = valid * 2.0 * (ratio - 1.0) * u / (nu_safe * nv_safe * batch)
    return omega, ops.matmul(ops.transpose(g), d), u


@keras.saving.register_keras_serializable(package="keras_seqmodels")
class GradientFlowRegularizer(keras.layers.Layer):
    """Cell wrapper adding Pascanu et al.'s gradient-flow penalty to training.

        Ω = Σ_t ( ‖(∂L/∂h(t)) ∂h(t)/∂h(t-1)‖ / ‖∂L/∂h(t)‖ - 1 )²

    (averaged over the sequences of a batch) asks each step's Jacobian to
    preserve the norm of the error signal that flows back through it, which
    counters vanishing gradients; norm clipping (the optimizer's
    ``clipnorm``/``global_clipnorm``) handles the exploding ones, and the two
    are meant to be used together. The back-propagated vectors
    v(t) = ∂L/∂h(t) are treated as constants, as in the paper, so Ω cannot be
    written as a forward-pass loss: it is injected in the backward pass. The
    wrapped cell's step is a custom-gradient op whose backward pass returns
    the ordinary gradients plus ``strength · ∂Ω_t/∂W`` on the recurrent matrix,
    where v(t) is exactly the gradient arriving at h(t) from the loss and
    from all later steps. So it works in ``model.fit`` unchanged, with any
    optimizer, on TensorFlow and JAX. The last value of Σ_t Ω_t is not
    reported (it exists only in the backward pass); ``gradient_flow_terms``
    computes it for given v.

    Supports the Elman family h(t) = α h(t-1) + (1-α) f(b + U x + W h(t-1)):
    ``ElmanCell`` (α = 0), ``LeakyCell`` and ``EchoStateCell`` with
    ``f`` in tanh, sigmoid, relu, linear; dropout of the wrapped cell is not
    applied. New relative to Keras (which has no such regularizer).

    Args:
        cell: the cell to regularize.
        strength: λ >= 0, the weight of Ω (λ = 0 gives the cell's ordinary
            gradients).
        epsilon: ‖v‖ below which a sequence's term is dropped.

    Call arguments, returns: as the wrapped cell.

    Example:

    >>> import keras, keras_seqmodels as ks
    >>> cell = ks.training.GradientFlowRegularizer(ks.cells.ElmanCell(16), strength=2.0)
    >>> model = keras.Sequential([keras.Input((50, 2)), ks.layers.Recurrent(cell),
    ...                           keras.layers.Dense(1)])
    >>> model.compile(keras.optimizers.SGD(0.01, clipnorm=1.0), "mse")

    Reference:
        Pascanu, Mikolov & Bengio, "On the difficulty of training recurrent
        neural networks", ICML 2013, section 3.3; Deep Learning, section
        10.11.2.
    """

    def __init__(self, cell, strength=1.0, epsilon=1e-8, **kwargs):
        kwargs.setdefault("dtype", getattr(cell, "dtype_policy", None))
        super().__init__(**kwargs)
        if not hasattr(cell, "recurrent_kernel") and not callable(
            getattr(cell, "project_inputs", None)
        ):
            raise ValueError(
                "GradientFlowRegularizer: `cell` must be an Elman-family cell "
                "(ElmanCell, LeakyCell, EchoStateCell). "
                f"Received: cell={cell!r}"
            )
        name = keras.activations.serialize(cell.activation)
        name = name if isinstance(name, str) else getattr(cell.activation, "__name__", "")
        if name not in _DERIVATIVES or type(cell).__name__ not in (
            "ElmanCell",
            "LeakyCell",
            "EchoStateCell",
        ):
            raise ValueError(
                "GradientFlowRegularizer: supports ElmanCell, LeakyCell and "
                f"EchoStateCell with activation in {sorted(_DERIVATIVES)}. "
                f"Received: a {type(cell).__name__} with activation={name!r}"
            )
        if isinstance(strength, bool) or not isinstance(strength, (int, float)) or strength < 0:
            raise ValueError(
                "GradientFlowRegularizer: `strength` must be a float >= 0. "
                f"Received: strength={strength!r}"
            )
        self.cell = cell
        self.strength = float(strength)
        self.epsilon = float(epsilon)
        self._fprime = _DERIVATIVES[name]

    @property
    def state_size(self):
        return self.cell.state_size

    @property
    def output_size(self):
        return self.cell.units

    def build(self, input_shape):
        if not self.cell.built:
            self.cell.build(input_shape)

    def get_initial_state(self, batch_size=None):
        return self.cell.get_initial_state(batch_size)

    def _alpha(self, dtype):
        cell = self.cell
        if hasattr(cell, "alpha") and type(cell).__name__ == "LeakyCell":
            return ops.cast(cell.alpha, dtype)
        if hasattr(cell, "leak_rate"):
            return ops.cast(1.0 - cell.leak_rate, dtype)
        return ops.cast(0.0, dtype)

    def call(self, inputs, states, training=False):
        cell = self.cell
        h = unpack_single_state(states)
        z = cell.project_inputs(inputs)
        w = ops.convert_to_tensor(cell.recurrent_kernel)
        alpha = self._alpha(z.dtype)
        h_new = self._step(z, h, ops.cast(w, z.dtype), alpha)
        return h_new, [h_new]

    def _step(self, z, h, w, alpha):
        fprime = self._fprime
        strength, epsilon = self.strength, self.epsilon
        activation = self.cell.activation

        @ops.custom_gradient
        def step(z, h, w, alpha):
            a = z + ops.matmul(h, w)
            s = activation(a)
            out = alpha * h + (1.0 - alpha) * s

            def grad(*args, upstream=None):
                v = args[0] if upstream is None else upstream
                fp = fprime(s, a)
                d = (1.0 - alpha) * v * fp
                dz = d
                dh = alpha * v + ops.matmul(d, ops.transpose(w))
                dw = ops.matmul(ops.transpose(h), d)
                if strength > 0:
                    _, grad_w, _ = gradient_flow_terms(v, fp, alpha, w, epsilon)
                    dw = dw + strength * grad_w
                dalpha = ops.sum(v * (h - s), axis=0)
                if len(ops.shape(alpha)) == 0:
                    dalpha = ops.sum(dalpha)
                return dz, dh, dw, dalpha

            return out, grad

        return step(z, h, w, alpha)

    def get_config(self):
        config = {
            "cell": keras.saving.serialize_keras_object(self.cell),
            "strength": self.strength,
            "epsilon": self.epsilon,
        }
        return {**super().get_config(), **config}

    @classmethod
    def from_config(cls, config, custom_objects=None):
        return cls(**serialization.deserialize_nested(config, ("cell",), custom_objects))
