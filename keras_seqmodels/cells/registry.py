"""The package's cells by name: the one table from a string to a cell.

A config that names its cells (``EncoderDecoder(cell_type="gru")``) is
rebuilt from this table when its model is loaded, so a name, once here,
keeps meaning the same cell: ``"gru"`` is the reset-before GRU (Cho et
al.'s form, and what every saved model with ``cell_type="gru"`` holds),
whatever ``GRUCell``'s default; the reset-after GRU (Keras's and cuDNN's
default) is ``"gru_reset_after"``.

Example:

>>> from keras_seqmodels.cells import registry
>>> cell = registry.get("gru", 4)
>>> type(cell).__name__, cell.reset_after
('GRUCell', False)
>>> sorted(registry.subset("lstm", "gru"))
['gru', 'lstm']
"""

import functools

from keras_seqmodels.cells.elman_cell import ElmanCell
from keras_seqmodels.cells.gated_cell import GatedCell
from keras_seqmodels.cells.gru_cell import GRUCell
from keras_seqmodels.cells.lstm_cell import LSTMCell

# Name -> callable(units, **kwargs) returning a new cell.
CELLS = {
    "elman": ElmanCell,
    "gated": GatedCell,
    "gru": functools.partial(GRUCell, reset_after=False),
    "gru_reset_after": functools.partial(GRUCell, reset_after=True),
    "lstm": LSTMCell,
}


def _check_name(name, known, owner, arg):
    if not isinstance(name, str) or name not in known:
        raise ValueError(
            f"{owner}: `{arg}` must be one of {sorted(known)}. Received: {arg}={name!r}"
        )
    return name


def get(name, units, *, owner="cells.registry.get", arg="name", **kwargs):
    """A new cell of the kind ``name`` with ``units`` units.

    Args:
        name: a key of ``CELLS``.
        units: the cell's width.
        owner: who asks (a layer's or a script's name), for the error.
        arg: the argument that held ``name`` (``"cell_type"``, ``"--cell"``),
            for the error.
        **kwargs: the cell's other arguments (``dropout=0.1``...).

    Raises:
        ValueError: ``name`` is not in the table; the message names
            ``owner``, ``arg``, the known names and the value received.
    """
    return CELLS[_check_name(name, CELLS, owner, arg)](units, **kwargs)


def subset(*names):
    """The entries of ``CELLS`` for ``names`` only: the cells one layer accepts.

    Raises:
        ValueError: one of ``names`` is not in the table.
    """
    return {n: CELLS[_check_name(n, CELLS, "cells.registry.subset", "names")] for n in names}
