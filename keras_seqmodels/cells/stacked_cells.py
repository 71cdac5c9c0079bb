"""A stack of cells that runs as one cell, with dropout masks for every cell of the stack."""

import keras
from keras import ops

from keras_seqmodels._compat import DropoutRNNCell
from keras_seqmodels.utils import bounds, serialization, validation


def _output_size(cell):
    size = getattr(cell, "output_size", None)
    if size is None:
        size = cell.state_size
    return size[0] if isinstance(size, (list, tuple)) else size


def _first_state_size(cell):
    size = cell.state_size
    return size[0] if isinstance(size, (list, tuple)) else size


def check_cells(layer_name, arg_name, cells):
    """Each item must be a cell instance (not a class) with ``call`` and ``state_size``."""
    if not cells:
        raise ValueError(
            f"{layer_name}: `{arg_name}` must be a cell or a non-empty list of "
            f"cells. Received: {arg_name}={cells!r}"
        )
    for i, cell in enumerate(cells):
        validation.check_cell_instance(layer_name, f"{arg_name}[{i}]", cell)
        if not callable(getattr(cell, "call", None)) or not hasattr(cell, "state_size"):
            raise ValueError(
                f"{layer_name}: `{arg_name}[{i}]` must be a Keras layer with "
                f"`call(inputs, states)` and a `state_size` property. "
                f"Received: {arg_name}[{i}]={cell!r}"
            )
        if any(other is cell for other in cells[:i]):
            raise ValueError(
                f"{layer_name}: `{arg_name}[{i}]` is the same cell object as an "
                "earlier item; a stack needs distinct cells (each has its own "
                f"weights and input width). Received: {arg_name}={cells!r}"
            )


@keras.saving.register_keras_serializable(package="keras_seqmodels")
class StackedCells(keras.layers.StackedRNNCells, DropoutRNNCell):
    """Cells applied one after the other within each time step, as one cell.

    For cells c_1 … c_L at each step: y_0 = x(t),
    y_l, s_l(t) = c_l(y_{l-1}, s_l(t-1)), output y_L. The states are the
    list of every cell's states. ``Recurrent([cell_1, cell_2])`` builds one,
    as ``keras.layers.RNN`` does with a list.

    New relative to ``keras.layers.StackedRNNCells`` (whose behaviour and
    config it keeps): the dropout and recurrent-dropout masks of every cell
    of the stack are drawn before the time loop and reset after each call by
    the package's runner, so dropout inside a stack gives fresh masks per
    batch and works under ``jit`` on JAX.

    Args:
        cells: a list of cell instances (e.g. ``[LSTMCell(32), GRUCell(16)]``).
        **kwargs: base layer arguments (``name``, ``dtype``).

    Call arguments:
        inputs: ``(batch, features)``; states: one list of states per cell;
        training: whether dropout is active.

    Returns:
        ``(output of the last cell, [states of each cell])``.

    Example:

    >>> import numpy as np, keras_seqmodels as ks
    >>> layer = ks.layers.Recurrent(
    ...     [ks.cells.LSTMCell(8), ks.cells.GRUCell(4)], return_state=True)
    >>> out, h1, c1, h2 = layer(np.ones((2, 5, 3), "float32"))
    >>> out.shape, c1.shape
    ((2, 4), (2, 8))

    Reference:
        Graves, Mohamed & Hinton, "Speech recognition with deep recurrent
        neural networks", ICASSP 2013 (stacked recurrent layers); Deep
        Learning, section 10.5.
    """

    def __init__(self, cells, **kwargs):
        cells = list(cells) if isinstance(cells, (list, tuple)) else cells
        if not isinstance(cells, list):
            raise ValueError(
                f"StackedCells: `cells` must be a list of cells. Received: cells={cells!r}"
            )
        check_cells("StackedCells", "cells", cells)
        super().__init__(cells, **kwargs)

    def _dropout_cells(self):
        return [cell for cell in self.cells if isinstance(cell, DropoutRNNCell)]

    def get_dropout_mask(self, step_input):
        # Each cell's input is the previous cell's output: a zero tensor of
        # that width gives its mask the right shape before the loop.
        x = step_input
        batch = ops.shape(step_input)[0]
        for cell in self.cells:
            if isinstance(cell, DropoutRNNCell) and getattr(cell, "dropout", 0) > 0:
                cell.get_dropout_mask(x)
            x = ops.zeros((batch, _output_size(cell)), dtype=step_input.dtype)
        return None

    def get_recurrent_dropout_mask(self, step_input):
        batch = ops.shape(step_input)[0]
        for cell in self._dropout_cells():
            if getattr(cell, "recurrent_dropout", 0) > 0:
                state = ops.zeros((batch, _first_state_size(cell)), dtype=step_input.dtype)
                cell.get_recurrent_dropout_mask(state)
        return None

    def reset_dropout_mask(self):
        for cell in self._dropout_cells():
            cell.reset_dropout_mask()

    def reset_recurrent_dropout_mask(self):
        for cell in self._dropout_cells():
            cell.reset_recurrent_dropout_mask()

    @classmethod
    def from_config(cls, config, custom_objects=None):
        bounds.check_config(cls.__name__, config)
        return cls(**serialization.deserialize_nested(config, ("cells",), custom_objects))

    def group_states(self, states):
        """``states`` regrouped as one list per cell (a flat list, as
        ``return_state`` gives, or already grouped)."""
        flat = keras.tree.flatten(states)
        counts = [
            len(c.state_size) if isinstance(c.state_size, (list, tuple)) else 1 for c in self.cells
        ]
        if len(flat) != sum(counts):
            return states  # the runner's shape check names the mismatch
        grouped, start = [], 0
        for n in counts:
            grouped.append(list(flat[start : start + n]))
            start += n
        return grouped
