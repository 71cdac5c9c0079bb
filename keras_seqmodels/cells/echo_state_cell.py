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

    h(t) = (1 - a) h(t-1) + a tanh(b + U x(t) + R y(t-1) + W h(t-1)),

    with W sparse (a fraction ``sparsity`` of zeros) and rescaled to spectral
    radius ``spectral_radius`` (``keras_seqmodels.initializers.SpectralRadius``),
    U uniform on [-``input_scaling``, ``input_scaling``], b uniform on
    [-``bias_scaling``, ``bias_scaling``] and a the leak rate. With
    ``feedback_size = m > 0`` the reservoir also has output-feedback weights
    R (``feedback_kernel``, ``(m, units)``, uniform on
    [-``feedback_scaling``, ``feedback_scaling``]) and the last m features
    of every step's input are the fed-back output y(t-1): the true signal
    while the states are harvested (teacher forcing, see
    ``teacher_forcing_inputs``), the network's own output when it runs
    closed loop (``EchoStateGenerator``), as in Jaeger & Haas's Mackey-Glass
    predictor. The reservoir weights are non-trainable (``trainable_reservoir=True`` makes them
    trainable, e.g. for an ESN-initialised RNN); only a readout on top of the
    states is learned, either in closed form by ridge regression with
    ``fit_readout`` (a convex problem, solved in one linear system) or by
    gradient descent in ``model.fit`` like any ``Dense`` layer. Radii well
    above 1 work with tanh: the non-linearity keeps the states bounded.
    Not in Keras.

    New relative to Keras: Keras has no reservoir cell; output feedback
    (``feedback_size``), the uniform reservoir distribution and the closed
    loop (``EchoStateGenerator``) have no Keras counterpart either.

    Args:
        units: positive integer, reservoir size.
        spectral_radius: positive float, ρ(W) (e.g. 0.9-1.3).
        sparsity: fraction of zero entries of W, in [0, 1) (Jaeger & Haas:
            0.99, i.e. 1% connectivity).
        input_scaling: positive float, the range of U.
        bias_scaling: float >= 0, the range of b (0: no bias).
        leak_rate: a in (0, 1], 1 = no leak.
        trainable_reservoir: make U, W and b trainable.
        seed: integer seed of the reservoir (also used for dropout).
        activation: f, default ``"tanh"``.
        feedback_size: integer >= 0, the width m of the fed-back output
            (0: no output feedback, the default).
        feedback_scaling: positive float, the range of R.
        distribution: ``"normal"`` (default) or ``"uniform"`` (on [-1, 1])
            non-zero entries of W before the rescaling.
        **kwargs: as in ``RecurrentCell`` (except the initializers, which
            this cell sets).

    Call arguments:
        inputs: ``(batch, features)``, with y(t-1) as the last
            ``feedback_size`` features; states: ``[h]``; training.

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
        feedback_size=0,
        feedback_scaling=1.0,
        distribution="normal",
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
        if (
            isinstance(feedback_size, bool)
            or not isinstance(feedback_size, (int, np.integer))
            or feedback_size < 0
        ):
            raise ValueError(
                "EchoStateCell: `feedback_size` must be an integer >= 0. "
                f"Received: feedback_size={feedback_size!r}"
            )
        self.feedback_size = int(feedback_size)
        self.feedback_scaling = _check_positive("feedback_scaling", feedback_scaling)
        if distribution not in ("normal", "uniform"):
            raise ValueError(
                "EchoStateCell: `distribution` must be 'normal' or 'uniform'. "
                f"Received: distribution={distribution!r}"
            )
        self.distribution = distribution
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
                self.spectral_radius, sparsity=sparsity, distribution=distribution, seed=seed
            ),
            bias_initializer=bias_init,
            seed=seed,
            **kwargs,
        )

    def build(self, input_shape):
        m = self.feedback_size
        if input_shape is not None and len(input_shape) == 2 and m:
            features = input_shape[-1]
            if features is not None and features < m:
                raise ValueError(
                    f"EchoStateCell: the step input must end with the fed-back "
                    f"output (feedback_size={m} features). Received shape {input_shape}"
                )
            input_shape = (input_shape[0], None if features is None else features - m)
        super().build(input_shape)
        self.feedback_kernel = None
        if m:
            # A seed of its own keeps U the same with and without feedback.
            seed = self.seed + 1 if isinstance(self.seed, int) else None
            self.feedback_kernel = self.add_weight(
                shape=(m, self.units),
                name="feedback_kernel",
                initializer=keras.initializers.RandomUniform(
                    -self.feedback_scaling, self.feedback_scaling, seed=seed
                ),
            )
        if not self.trainable_reservoir:
            for weight in (self.kernel, self.recurrent_kernel, self.bias, self.feedback_kernel):
                if weight is not None:
                    weight.trainable = False

    def project_inputs(self, inputs):
        m = self.feedback_size
        if not m:
            return super().project_inputs(inputs)
        width = inputs.shape[-1]
        z = ops.matmul(inputs[..., width - m :], self.feedback_kernel)
        if width > m:
            z = z + ops.matmul(inputs[..., : width - m], self.kernel)
        if self.bias is not None:
            z = z + self.bias
        return z

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
                "feedback_size": self.feedback_size,
                "feedback_scaling": self.feedback_scaling,
                "distribution": self.distribution,
            }
        )
        return config


def teacher_forcing_inputs(targets, inputs=None, noise=0.0, seed=None):
    """Step inputs of a reservoir with output feedback under teacher forcing.

    Returns ``[x(t), y(t-1) + ν(t)]`` for t = 0..T-1 with y(-1) = 0: the
    targets shifted one step right (what the network would have fed back had
    it been perfect), plus optional i.i.d. uniform noise ν on
    [-``noise``, ``noise``], appended to the external inputs. Small noise on
    the fed-back signal while the states are harvested makes the readout
    robust to its own errors when the network later runs closed loop
    (Jaeger & Haas 2004). The noise is drawn here, in NumPy, before any time
    loop, so the reservoir itself stays deterministic (and works under
    ``jit``).

    Args:
        targets: y, ``(batch, time, m)``.
        inputs: optional external inputs x, ``(batch, time, n)``.
        noise: float >= 0, the half-width of the uniform noise.
        seed: seed of the noise.

    Returns:
        A float64 NumPy array ``(batch, time, n + m)``.

    Example:

    >>> y = np.arange(1.0, 4.0).reshape(1, 3, 1)
    >>> teacher_forcing_inputs(y, np.full((1, 3, 1), 0.2))[0].tolist()
    [[0.2, 0.0], [0.2, 1.0], [0.2, 2.0]]
    """
    y = np.asarray(ops.convert_to_numpy(targets), dtype=np.float64)
    if y.ndim != 3:
        raise ValueError(
            f"teacher_forcing_inputs: `targets` must be (batch, time, m). Received shape {y.shape}"
        )
    if isinstance(noise, bool) or not isinstance(noise, (int, float)) or noise < 0:
        raise ValueError(
            f"teacher_forcing_inputs: `noise` must be a float >= 0. Received: noise={noise!r}"
        )
    fed = np.concatenate([np.zeros_like(y[:, :1]), y[:, :-1]], axis=1)
    if noise > 0:
        fed = fed + np.random.default_rng(seed).uniform(-noise, noise, fed.shape)
    if inputs is None:
        return fed
    x = np.asarray(ops.convert_to_numpy(inputs), dtype=np.float64)
    if x.ndim != 3 or x.shape[:2] != y.shape[:2]:
        raise ValueError(
            "teacher_forcing_inputs: `inputs` must be (batch, time, n) with the "
            f"targets' batch and time. Received shapes {x.shape} and {y.shape}"
        )
    return np.concatenate([x, fed], axis=-1)


def fit_readout(features, targets, readout=None, ridge=1e-8, washout=0, solver="normal"):
    """Fit a linear readout y = s V + c in closed form by ridge regression.

    Solves min_{V,c} ‖S V + c - Y‖² + λ ‖V‖² in float64 NumPy (the bias c is
    not penalised). A convex problem: no gradient descent, seconds for
    thousands of features. ``solver="normal"`` solves the normal equations
    (SᵀS + λ I) V = SᵀY; ``solver="svd"`` uses the singular value
    decomposition of the centred S, V = Σ_i s_i/(s_i² + λ) v_i u_iᵀ Y, which
    never squares the condition number: with λ = 0 it is the minimum-norm
    least-squares solution (singular values below ``eps · max(shape) · s_max``
    dropped, as ``numpy.linalg.lstsq`` does). Reservoir states driven by a
    smooth signal are nearly collinear, and the normal equations then lose
    the digits that a prediction at 1e-5 needs (Jaeger & Haas computed the
    readout by plain linear regression).

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
        solver: ``"normal"`` (default) or ``"svd"``.

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
    if solver not in ("normal", "svd"):
        raise ValueError(
            f"fit_readout: `solver` must be 'normal' or 'svd'. Received: solver={solver!r}"
        )
    if s.ndim == 3:
        s, y = s[:, washout:], y[:, washout:]
        s, y = s.reshape(-1, s.shape[-1]), y.reshape(-1, y.shape[-1])
    n = s.shape[1]
    if solver == "svd":
        # Centring removes the unpenalised bias from the problem exactly.
        s_mean, y_mean = s.mean(0), y.mean(0)
        u, sv, vt = np.linalg.svd(s - s_mean, full_matrices=False)
        if ridge > 0:
            gain = sv / (sv**2 + ridge)
        else:
            keep = sv > np.finfo(np.float64).eps * max(s.shape) * sv[0]
            gain = np.where(keep, 1.0 / np.where(keep, sv, 1.0), 0.0)
        kernel = vt.T @ (gain[:, None] * (u.T @ (y - y_mean)))
        bias = y_mean - s_mean @ kernel
    else:
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
