"""Recurrent cells: one time step of each recurrent design."""

from keras_seqmodels.cells.elman_cell import ElmanCell
from keras_seqmodels.cells.gated_cell import GatedCell
from keras_seqmodels.cells.gru_cell import GRUCell
from keras_seqmodels.cells.lstm_cell import LSTMCell
from keras_seqmodels.cells.recurrent_cell import RecurrentCell
from keras_seqmodels.cells.steps import elman_step, gated_step, gru_step, lstm_step

__all__ = [
    "ElmanCell",
    "GatedCell",
    "GRUCell",
    "LSTMCell",
    "RecurrentCell",
    "elman_step",
    "gated_step",
    "gru_step",
    "lstm_step",
]
