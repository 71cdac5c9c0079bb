"""Recurrent cells: one time step of each recurrent design."""

from keras_seqmodels.cells.clockwork_cell import ClockworkCell
from keras_seqmodels.cells.deep_transition_cell import DeepTransitionCell
from keras_seqmodels.cells.delayed_cell import DelayedCell
from keras_seqmodels.cells.echo_state_cell import (
    EchoStateCell,
    fit_readout,
    teacher_forcing_inputs,
)
from keras_seqmodels.cells.echo_state_generator import EchoStateGenerator
from keras_seqmodels.cells.elman_cell import ElmanCell
from keras_seqmodels.cells.gated_cell import GatedCell
from keras_seqmodels.cells.gru_cell import GRUCell
from keras_seqmodels.cells.leaky_cell import LeakyCell
from keras_seqmodels.cells.lstm_cell import LSTMCell
from keras_seqmodels.cells.output_feedback_cell import OutputFeedbackCell
from keras_seqmodels.cells.recurrent_cell import RecurrentCell
from keras_seqmodels.cells.stacked_cells import StackedCells
from keras_seqmodels.cells.state_machine_cell import StateMachineCell, state_machine_step
from keras_seqmodels.cells.steps import (
    elman_step,
    gated_step,
    gru_reset_after_step,
    gru_step,
    lstm_step,
)
from keras_seqmodels.cells.weight_conversion import (
    cell_from_keras,
    weights_from_keras,
    weights_from_torch,
)

__all__ = [
    "ClockworkCell",
    "DeepTransitionCell",
    "DelayedCell",
    "EchoStateCell",
    "EchoStateGenerator",
    "LeakyCell",
    "OutputFeedbackCell",
    "fit_readout",
    "teacher_forcing_inputs",
    "ElmanCell",
    "GatedCell",
    "GRUCell",
    "LSTMCell",
    "RecurrentCell",
    "StackedCells",
    "StateMachineCell",
    "state_machine_step",
    "elman_step",
    "gated_step",
    "gru_reset_after_step",
    "gru_step",
    "lstm_step",
    "cell_from_keras",
    "weights_from_keras",
    "weights_from_torch",
]
