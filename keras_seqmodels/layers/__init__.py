"""Layers: the recurrent runner, drop-in LSTM / GRU / SimpleRNN, and wrappers."""

from keras_seqmodels.layers.bias import Bias
from keras_seqmodels.layers.bidirectional import Bidirectional
from keras_seqmodels.layers.character_encoder import CharacterEncoder
from keras_seqmodels.layers.conditioned_recurrent import ConditionedRecurrent
from keras_seqmodels.layers.crf import CRF
from keras_seqmodels.layers.crf_tagger import CRFTagger
from keras_seqmodels.layers.four_directional_2d import FourDirectional2D
from keras_seqmodels.layers.gru import GRU
from keras_seqmodels.layers.lstm import LSTM
from keras_seqmodels.layers.output_feedback import OutputFeedback
from keras_seqmodels.layers.probability_average import ProbabilityAverage
from keras_seqmodels.layers.recurrent import Recurrent
from keras_seqmodels.layers.recursive_nn import RecursiveNN
from keras_seqmodels.layers.rntn import RNTN
from keras_seqmodels.layers.sentence_vectorizer import SentenceVectorizer
from keras_seqmodels.layers.simple_rnn import SimpleRNN
from keras_seqmodels.layers.tag_lookup import TagLookup
from keras_seqmodels.layers.tree_lstm import TreeLSTM

__all__ = [
    "Bias",
    "Bidirectional",
    "CRF",
    "CRFTagger",
    "CharacterEncoder",
    "ConditionedRecurrent",
    "FourDirectional2D",
    "GRU",
    "LSTM",
    "OutputFeedback",
    "ProbabilityAverage",
    "Recurrent",
    "RecursiveNN",
    "RNTN",
    "TreeLSTM",
    "SentenceVectorizer",
    "SimpleRNN",
    "TagLookup",
]
