"""Layers: the recurrent runner, drop-in LSTM / GRU / SimpleRNN, and wrappers.

The tagging layers (``CRF``, ``CRFTagger``, ``CharacterEncoder``,
``SentenceVectorizer``, ``TagLookup``) live in ``keras_seqmodels.tagging``, the
tree layers (``RecursiveNN``, ``RNTN``, ``TreeLSTM``) in ``keras_seqmodels.trees``.
"""

from keras_seqmodels.layers.bias import Bias
from keras_seqmodels.layers.bidirectional import Bidirectional
from keras_seqmodels.layers.conditioned_recurrent import ConditionedRecurrent
from keras_seqmodels.layers.four_directional_2d import FourDirectional2D
from keras_seqmodels.layers.gru import GRU
from keras_seqmodels.layers.lstm import LSTM
from keras_seqmodels.layers.output_feedback import OutputFeedback
from keras_seqmodels.layers.probability_average import ProbabilityAverage
from keras_seqmodels.layers.recurrent import Recurrent
from keras_seqmodels.layers.simple_rnn import SimpleRNN

__all__ = [
    "Bias",
    "Bidirectional",
    "ConditionedRecurrent",
    "FourDirectional2D",
    "GRU",
    "LSTM",
    "OutputFeedback",
    "ProbabilityAverage",
    "Recurrent",
    "SimpleRNN",
]
