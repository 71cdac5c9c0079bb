"""Sparse random matrices rescaled to a chosen spectral radius."""

import keras
import numpy as np


def spectral_radius(matrix):
    """Largest absolute eigenvalue of a square matrix (NumPy, float64).

    Args:
        matrix: a square array (NumPy or a backend tensor).

    Returns:
        ρ(matrix) as a Python float.

    Example:

    >>> round(spectral_radius([[0.0, 2.0], [-2.0, 0.0]]), 6)  # eigenvalues ±2i
    2.0
    """
    matrix = np.asarray(matrix, dtype=np.float64)
    return float(np.max(np.abs(np.linalg.eigvals(matrix))))


@keras.saving.register_keras_serializable(package="keras_seqmodels")
class SpectralRadius(keras.initializers.Initializer):
    """Sparse random square matrix rescaled to spectral radius ``radius``.

    W0 has i.i.d. entries (normal or uniform), a fraction ``sparsity`` of them
    set to zero; then W = radius · W0 / ρ(W0), where ρ is the largest absolute
    eigenvalue. The echo-state-network recipe: with tanh units a radius near
    1 keeps the reservoir at the edge of stability, and Deep Learning
    (section 10.8) recommends initialising a fully trainable RNN's recurrent
    weights this way, with ρ about 1.2, plus sparse initialisation.

    New relative to Keras: Keras has no spectral-radius or sparse initializer
    (``Orthogonal`` fixes every singular value at ``gain`` instead).

    Args:
        radius: positive float, the spectral radius of the result (values
            well above 1 are allowed).
        sparsity: float in [0, 1): the fraction of entries set to zero.
        distribution: ``"normal"`` or ``"uniform"`` (on [-1, 1]) entries.
        seed: integer seed; ``None`` draws a new matrix on every call.

    The eigenvalues are computed in NumPy in float64 (the initializer runs
    eagerly, once, when the weight is created).

    Example:

    >>> import keras_seqmodels as ks
    >>> init = ks.initializers.SpectralRadius(1.2, sparsity=0.9, seed=0)
    >>> w = init((50, 50), "float32")
    >>> round(ks.initializers.spectral_radius(w), 3)
    1.2

    Reference:
        Jaeger, "The echo state approach to analysing and training recurrent
        neural networks", GMD report 148, 2001; Sutskever et al., "On the
        importance of initialization and momentum in deep learning", 2013;
        Deep Learning, section 10.8.
    """

    def __init__(self, radius=1.2, sparsity=0.0, distribution="normal", seed=None):
        if isinstance(radius, bool) or not isinstance(radius, (int, float)) or radius <= 0:
            raise ValueError(
                f"SpectralRadius: `radius` must be a positive float. Received: radius={radius!r}"
            )
        if (
            isinstance(sparsity, bool)
            or not isinstance(sparsity, (int, float))
            or not 0.0 <= sparsity < 1.0
        ):
            raise ValueError(
                "SpectralRadius: `sparsity` must be a float in [0, 1), the "
                f"fraction of zero entries. Received: sparsity={sparsity!r}"
            )
        if distribution not in ("normal", "uniform"):
            raise ValueError(
                "SpectralRadius: `distribution` must be 'normal' or 'uniform'. "
                f"Received: distribution={distribution!r}"
            )
        self.radius = float(radius)
        self.sparsity = float(sparsity)
        self.distribution = distribution
        self.seed = seed

    def __call__(self, shape, dtype=None):
        shape = tuple(int(s) for s in shape)
        if len(shape) != 2 or shape[0] != shape[1]:
            raise ValueError(
                f"SpectralRadius: the weight must be a square matrix (n, n). Received shape {shape}"
            )
        n = shape[0]
        rng = np.random.default_rng(self.seed)
        for _ in range(100):
            if self.distribution == "normal":
                w = rng.standard_normal(shape)
            else:
                w = rng.uniform(-1.0, 1.0, shape)
            if self.sparsity > 0:
                w = w * (rng.random(shape) >= self.sparsity)
            rho = spectral_radius(w)
            # A very sparse small matrix can be nilpotent (rho = 0): redraw.
            if rho > 1e-8:
                break
        else:
            raise ValueError(
                f"SpectralRadius: could not draw a {n}x{n} matrix with "
                f"sparsity={self.sparsity} and a non-zero spectral radius; "
                "lower `sparsity`."
            )
        w = w * (self.radius / rho)
        return keras.ops.convert_to_tensor(w, dtype=dtype or keras.backend.floatx())

    def get_config(self):
        return {
            "radius": self.radius,
            "sparsity": self.sparsity,
            "distribution": self.distribution,
            "seed": self.seed,
        }
