"""Leaky units: a linear self-loop with coefficient α on each hidden unit."""

import math

import keras
import numpy as np
from keras import ops

from keras_seqmodels.cells.design_steps import leaky_step
from keras_seqmodels.cells.recurrent_cell import RecurrentCell, unpack_single_state
from keras_seqmodels.utils import validation

ALPHA_MODES = ("fixed", "learned", "multiscale")


def _check_range(value):
    ok = (
        isinstance(value, (list, tuple))
        and len(value) == 2
        and all(validation.is_real(v) for v in value)
        and 0.0 <= value[0] <= value[1] < 1.0
    )
    if not ok:
        raise ValueError(
            "LeakyCell: `alpha_range` must be a pair (low, high) with "
            f"0 <= low <= high < 1. Received: alpha_range={value!r}"
        )
    return (float(value[0]), float(value[1]))


def multiscale_alpha(units, timescales):
    """α per unit for groups of units with time constants τ: α = 1 - 1/τ.

    The units are split into ``len(timescales)`` contiguous groups as evenly
    as possible (the first groups get the extra units).
    """
    sizes = [len(a) for a in np.array_split(np.arange(units), len(timescales))]
    return np.concatenate([np.full(n, 1.0 - 1.0 / tau) for n, tau in zip(sizes, timescales)])


@keras.saving.register_keras_serializable(package="keras_seqmodels")
class LeakyCell(RecurrentCell):
    """Leaky recurrent units: h(t) = α ⊙ h(t-1) + (1 - α) ⊙ f(b + U x(t) + W h(t-1)).

    Each unit has a linear self-connection of weight α in [0, 1): α near 1
    remembers the past for about 1/(1-α) steps, α = 0 is the Elman cell. The
    coefficients are

    - ``"fixed"``: sampled once at initialisation, uniformly in
      ``alpha_range``, and not trained (a non-trainable weight, saved with
      the model);
    - ``"learned"``: α = σ(θ) with θ trainable, so α stays in (0, 1); θ
      starts uniform between the logits of the ends of ``alpha_range`` (so
      α starts inside the range);
    - ``"multiscale"``: fixed per group of units, α = 1 - 1/τ for the time
      constants τ in ``timescales`` (e.g. 1, 2, 4, 8, 16 steps).

    Not in Keras (the closest, ``SimpleRNNCell``, is α = 0).

    Args:
        units: positive integer.
        alpha_mode: ``"fixed"``, ``"learned"`` or ``"multiscale"``.
        alpha_range: ``(low, high)``, 0 <= low <= high < 1, the range α is
            sampled from (``"fixed"`` and the start of ``"learned"``).
        timescales: for ``"multiscale"``, a list of time constants τ >= 1,
            one per group of units (at most ``units`` groups).
        activation: f, default ``"tanh"``.
        **kwargs: as in ``RecurrentCell`` (initializers, regularizers,
            constraints, dropout, recurrent_dropout, seed).

    Call arguments:
        inputs: ``(batch, features)``; states: ``[h]``; training.

    Returns:
        ``(h(t), [h(t)])``. Masked steps keep h (handled by the runner).

    Example:

    >>> import numpy as np, keras_seqmodels as ks
    >>> cell = ks.cells.LeakyCell(8, alpha_mode="multiscale", timescales=[1, 4, 16])
    >>> ks.layers.Recurrent(cell)(np.ones((2, 5, 3), "float32")).shape
    (2, 8)

    Reference:
        Mozer 1992; El Hihi & Bengio 1996; Jaeger et al. 2007 (leaky
        integrator ESNs); Deep Learning, section 10.9.2.
    """

    num_blocks = 1

    def __init__(
        self,
        units,
        alpha_mode="fixed",
        alpha_range=(0.5, 0.95),
        timescales=None,
        activation="tanh",
        **kwargs,
    ):
        super().__init__(units, activation=activation, **kwargs)
        if alpha_mode not in ALPHA_MODES:
            raise ValueError(
                f"LeakyCell: `alpha_mode` must be one of {list(ALPHA_MODES)}. "
                f"Received: alpha_mode={alpha_mode!r}"
            )
        self.alpha_mode = alpha_mode
        self.alpha_range = _check_range(alpha_range)
        if alpha_mode == "multiscale":
            ok = (
                isinstance(timescales, (list, tuple))
                and 0 < len(timescales) <= units
                and all(
                    validation.is_real(t) and t >= 1
                    for t in timescales
                )
            )
            if not ok:
                raise ValueError(
                    "LeakyCell: with alpha_mode='multiscale', `timescales` must "
                    f"be a list of 1 to units={units} time constants >= 1. "
                    f"Received: timescales={timescales!r}"
                )
            timescales = [float(t) for t in timescales]
        elif timescales is not None:
            raise ValueError(
                "LeakyCell: `timescales` is used only with "
                f"alpha_mode='multiscale'. Received: alpha_mode={alpha_mode!r}, "
                f"timescales={timescales!r}"
            )
        self.timescales = timescales

    def build(self, input_shape):
        super().build(input_shape)
        low, high = self.alpha_range
        if self.alpha_mode == "multiscale":
            init = keras.initializers.Constant(
                multiscale_alpha(self.units, self.timescales).tolist()
            )
        elif self.alpha_mode == "fixed":
            init = keras.initializers.RandomUniform(low, high, seed=self.seed)
        else:
            # Logit of U(low, high), written as an initializer so that it is
            # drawn with the weight's seed.
            lo = math.log(max(low, 1e-3) / (1 - max(low, 1e-3)))
            hi = math.log(high / (1 - high)) if high > 0 else lo
            init = keras.initializers.RandomUniform(lo, max(hi, lo), seed=self.seed)
        name = "alpha_logit" if self.alpha_mode == "learned" else "alpha"
        self.alpha_weight = self.add_weight(
            shape=(self.units,),
            name=name,
            initializer=init,
            trainable=self.alpha_mode == "learned",
        )

    @property
    def alpha(self):
        """The leak coefficients α, ``(units,)``."""
        if self.alpha_mode == "learned":
            return ops.sigmoid(self.alpha_weight)
        return self.alpha_weight

    def step(self, z, states, training=False):
        h = unpack_single_state(states)
        h_new = leaky_step(
            z,
            h,
            self.recurrent_kernel,
            ops.cast(self.alpha, z.dtype),
            self.activation,
            h_dropped=self.drop_state(h, training),
        )
        return h_new, [h_new]

    def get_config(self):
        config = {
            "alpha_mode": self.alpha_mode,
            "alpha_range": list(self.alpha_range),
            "timescales": self.timescales,
        }
        return {**super().get_config(), **config}
