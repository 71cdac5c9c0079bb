"""Clockwork RNN: groups of units updated at different rates."""

import keras
import numpy as np
from keras import ops

from keras_seqmodels.cells.design_steps import clockwork_step
from keras_seqmodels.cells.recurrent_cell import RecurrentCell
from keras_seqmodels.utils import validation


def clockwork_layout(units, periods):
    """Per-unit periods ``(units,)`` and the ``(units, units)`` connectivity.

    Units are split into ``len(periods)`` equal modules, in the order given.
    ``M[j, i] = 1`` when the period of source unit j is >= that of target
    unit i: slower modules feed faster ones, never the reverse.
    """
    size = units // len(periods)
    unit_periods = np.repeat(np.asarray(periods, dtype=np.float64), size)
    connectivity = (unit_periods[:, None] >= unit_periods[None, :]).astype(np.float64)
    return unit_periods, connectivity


@keras.saving.register_keras_serializable(package="keras_seqmodels")
class ClockworkCell(RecurrentCell):
    """Clockwork RNN: module i is updated only at steps t with t mod T_i = 0.

    The ``units`` hidden units form ``len(periods)`` equal modules with
    periods T_i (e.g. 1, 2, 4, 8). At step t (counting from 0)

        h_new = f(b + U x(t) + (W ⊙ M) h(t-1)),
        h_i(t) = h_new_i if t mod T_i = 0 else h_i(t-1),

    where the mask M keeps only the connections from slower (or equal)
    modules to faster ones. Slow modules see the input only at their ticks
    and hold their value in between, so information crosses long spans in
    few updates. The state is ``[h, t]``: h and the step counter (a float
    column; masked steps advance neither). Not in Keras.

    Args:
        units: positive integer, a multiple of ``len(periods)``.
        periods: list of positive integer periods, one per module
            (default ``[1, 2, 4, 8]``).
        activation: f, default ``"tanh"``.
        **kwargs: as in ``RecurrentCell``.

    Call arguments:
        inputs: ``(batch, features)``; states: ``[h, t]``; training.

    Returns:
        ``(h(t), [h(t), t + 1])``.

    Example:

    >>> import numpy as np, keras_seqmodels as ks
    >>> cell = ks.cells.ClockworkCell(8, periods=[1, 2, 4, 8])
    >>> ks.layers.Recurrent(cell)(np.ones((2, 9, 3), "float32")).shape
    (2, 8)

    Reference:
        Koutník, Greff, Gomez & Schmidhuber, "A Clockwork RNN", ICML 2014;
        Deep Learning, section 10.9.3.
    """

    num_blocks = 1

    def __init__(self, units, periods=(1, 2, 4, 8), activation="tanh", **kwargs):
        super().__init__(units, activation=activation, **kwargs)
        if not isinstance(periods, (list, tuple)) or not periods:
            raise ValueError(
                "ClockworkCell: `periods` must be a non-empty list of positive "
                f"integers. Received: periods={periods!r}"
            )
        for p in periods:
            validation.check_positive_int("ClockworkCell", "periods", p)
        if units % len(periods):
            raise ValueError(
                "ClockworkCell: `units` must be a multiple of the number of "
                f"modules len(periods)={len(periods)}. Received: units={units}"
            )
        self.periods = [int(p) for p in periods]
        self._unit_periods, self._connectivity = clockwork_layout(units, self.periods)

    @property
    def state_size(self):
        return [self.units, 1]

    def step(self, z, states, training=False):
        h, t = states
        h_new = clockwork_step(
            z,
            self.drop_state(h, training),
            t,
            self.recurrent_kernel,
            ops.cast(self._connectivity, z.dtype),
            ops.cast(self._unit_periods, z.dtype),
            self.activation,
        )
        if training and self.recurrent_dropout > 0:
            # Modules that do not tick keep their undropped state.
            active = ops.equal(ops.mod(t, ops.cast(self._unit_periods, t.dtype)), 0)
            h_new = ops.where(active, h_new, h)
        return h_new, [h_new, t + 1.0]

    def get_config(self):
        return {**super().get_config(), "periods": list(self.periods)}
