"""Echo state network reservoir and its closed-form ridge readout."""

import keras
import numpy as np
from keras import ops

from keras_seqmodels.cells.design_steps import leaky_step
from keras_seqmodels.cells.recurrent_cell import RecurrentCell, unpack_single_state
from keras_seqmodels.initializers import SpectralRadius

_FIXED_KEYS = ("kernel_initializer", "recurrent_initializer", "bias_initializer")


def _check_positive(name, value):
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        raise ValueError(
            f"EchoStateCell: `{name}` must be a positive float. Received: {name}={value!r}"
        )
    return float(value)


@keras.saving.register_keras_serializable(package="keras_seqmodels")
class EchoStateCell(RecurrentCell):
    """Echo state network reservoir: fixed random recurrent and input weights.

    h(t) = (1 - a) h(t-1) + a tanh(b + U x(t) + W h(t-1)),

    with W sparse (a fraction ``sparsity`` of zeros) and rescaled to spectral
    radius ``spectral_radius`` (``keras_seqmodels.initializers.SpectralRadius``),
    U uniform on [-``input_scaling``, ``input_scaling``], b uniform on
    [-``bias_scaling``, ``bias_scaling``] and a the leak rate. The reservoir
    weights are non-trainable (``trainable_reservoir=True`` makes them
    trainable, e.g. for an ESN-initialised RNN); only a readout on top of the
    states is learned, either in closed form by ridge regression with
    ``fit_readout`` (a convex problem, solved in one linear system) or by
    gradient descent in ``model.fit`` like any ``Dense`` layer. Radii well
    above 1 work with tanh: the non-linearity keeps the states bounded.
    Not in Keras.

    Args:
        units: positive integer, reservoir size.
        spectral_radius: positive float, ρ(W) (e.g. 0.9-1.3).
        sparsity: fraction of zero entries of W, in [0, 1).
        input_scaling: positive float, the range of U.
        bias_scaling: float >= 0, the range of b (0: no bias).
        leak_rate: a in (0, 1], 1 = no leak.
        trainable_reservoir: make U, W and b trainable.
        seed: integer seed of the reservoir (also used for dropout).
        activation: f, default ``"tanh"``.
        **kwargs: as in ``RecurrentCell`` (except the initializers, which
            this cell sets).

    Call arguments:
        inputs: ``(batch, features)``; states: ``[h]``; training.

    Returns:
        ``(h(t), [h(t)])``.

    Example:

    >>> import numpy as np, keras_seqmodels as ks
    >>> cell = ks.cells.EchoStateCell(50, spectral_radius=1.25, seed=0)
    >>> states = ks.layers.Recurrent(cell, return_sequences=True)(np.ones((1, 30, 1), "float32"))
    >>> kernel, bias = ks.cells.fit_readout(states, np.ones((1, 30, 1)), ridge=1e-6)
    >>> kernel.shape, bias.shape
    ((50, 1), (1,))

    Reference:
        Jaeger & Haas, "Harnessing nonlinearity: predicting chaotic systems
        and saving energy in wireless communication", Science 2004;
        Lukoševičius, "A practical guide to applying echo state networks",
        2012; Deep Learning, section 10.8.
    """

    num_blocks = 1

    def __init__(
        self,
        units,
        spectral_radius=0.9,
        sparsity=0.9,
        input_scaling=1.0,
        bias_scaling=0.0,
        leak_rate=1.0,
        trainable_reservoir=False,
        seed=None,
        activation="tanh",
        **kwargs,
    ):
        for key in _FIXED_KEYS:
            kwargs.pop(key, None)
        self.spectral_radius = _check_positive("spectral_radius", spectral_radius)
        self.input_scaling = _check_positive("input_scaling", input_scaling)
        if (
            isinstance(bias_scaling, bool)
            or not isinstance(bias_scaling, (int, float))
            or bias_scaling < 0
        ):
            raise ValueError(
                "EchoStateCell: `bias_scaling` must be a float >= 0. "
                f"Received: bias_scaling={bias_scaling!r}"
            )
        self.bias_scaling = float(bias_scaling)
        leak_rate = _check_positive("leak_rate", leak_rate)
        if leak_rate > 1:
            raise ValueError(
                f"EchoStateCell: `leak_rate` must be in (0, 1]. Received: leak_rate={leak_rate!r}"
            )
        self.leak_rate = leak_rate
        self.sparsity = sparsity
        self.trainable_reservoir = bool(trainable_reservoir)
        bias_init = (
            keras.initializers.RandomUniform(-self.bias_scaling, self.bias_scaling, seed=seed)
            if self.bias_scaling > 0
            else "zeros"
        )
        super().__init__(
            units,
            activation=activation,
            use_bias=kwargs.pop("use_bias", True),
            kernel_initializer=keras.initializers.RandomUniform(
                -self.input_scaling, self.input_scaling, seed=seed
            ),
            recurrent_initializer=SpectralRadius(
                self.spectral_radius, sparsity=sparsity, seed=seed
            ),
            bias_initializer=bias_init,
            seed=seed,
            **kwargs,
        )

    def build(self, input_shape):
        super().build(input_shape)
        if not self.trainable_reservoir:
            for weight in (self.kernel, self.recurrent_kernel, self.bias):
                if weight is not None:
                    weight.trainable = False

    def step(self, z, states, training=False):
        h = unpack_single_state(states)
        h_new = leaky_step(
            z,
            h,
            self.recurrent_kernel,
            1.0 - self.leak_rate,
            self.activation,
            h_dropped=self.drop_state(h, training),
        )
        return h_new, [h_new]

    def get_config(self):
        config = super().get_config()
        for key in _FIXED_KEYS:
            config.pop(key)
        config.update(
            {
                "spectral_radius": self.spectral_radius,
                "sparsity": self.sparsity,
                "input_scaling": self.input_scaling,
                "bias_scaling": self.bias_scaling,
                "leak_rate": self.leak_rate,
                "trainable_reservoir": self.trainable_reservoir,
            }
        )
        return config


def fit_readout(features, targets, readout=None, ridge=1e-8, washout=0):
    """Fit a linear readout y = s V + c in closed form by ridge regression.

    Solves min_{V,c} ‖S V + c - Y‖² + λ ‖V‖² with one linear system,
    (SᵀS + λ I) in float64 NumPy (the bias c is not penalised). A convex
    problem: no gradient descent, seconds for thousands of features.

    Args:
        features: states S, ``(batch, time, n)`` or ``(samples, n)`` (NumPy
            or a backend tensor), e.g. the reservoir states with
            ``return_sequences=True``, optionally concatenated with the inputs.
        targets: Y, ``(batch, time, m)`` or ``(samples, m)``.
        readout: optional built ``keras.layers.Dense`` (n -> m) whose
            ``kernel`` and ``bias`` are set to the solution.
        ridge: λ >= 0.
        washout: number of initial time steps of every sequence to drop
            (the reservoir's transient), for 3-D inputs.

    Returns:
        ``(kernel, bias)`` as float64 NumPy arrays, ``(n, m)`` and ``(m,)``.

    Example:

    >>> s = np.random.default_rng(0).normal(size=(100, 3))
    >>> kernel, bias = fit_readout(s, s @ [[1.0], [2.0], [-1.0]] + 0.5, ridge=0.0)
    >>> np.round(kernel.ravel(), 6).tolist(), round(float(bias[0]), 6)
    ([1.0, 2.0, -1.0], 0.5)
    """
    s = np.asarray(ops.convert_to_numpy(features), dtype=np.float64)
    y = np.asarray(ops.convert_to_numpy(targets), dtype=np.float64)
    if s.ndim != y.ndim or s.ndim not in (2, 3) or s.shape[:-1] != y.shape[:-1]:
        raise ValueError(
            "fit_readout: `features` and `targets` must be (batch, time, n) and "
            "(batch, time, m), or (samples, n) and (samples, m). Received shapes "
            f"{s.shape} and {y.shape}"
        )
    if ridge < 0:
        raise ValueError(f"fit_readout: `ridge` must be >= 0. Received: ridge={ridge}")
    if s.ndim == 3:
        s, y = s[:, washout:], y[:, washout:]
        s, y = s.reshape(-1, s.shape[-1]), y.reshape(-1, y.shape[-1])
    n = s.shape[1]
    design = np.concatenate([s, np.ones((s.shape[0], 1))], axis=1)
    penalty = ridge * np.eye(n + 1)
    penalty[n, n] = 0.0
    solution = np.linalg.solve(design.T @ design + penalty, design.T @ y)
    kernel, bias = solution[:n], solution[n]
    if readout is not None:
        readout.kernel.assign(kernel.astype(readout.kernel.dtype))
        if getattr(readout, "bias", None) is not None:
            readout.bias.assign(bias.astype(readout.bias.dtype))
    return kernel, bias
