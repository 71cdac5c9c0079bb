"""Layers: the recurrent runner, drop-in LSTM / GRU / SimpleRNN, and wrappers.

The tagging layers (``CRF``, ``CRFTagger``, ``CharacterEncoder``,
``SentenceVectorizer``, ``TagLookup``) live in ``keras_seqmodels.tagging``, the
tree layers (``RecursiveNN``, ``RNTN``, ``TreeLSTM``) in ``keras_seqmodels.trees``;
their old names here still work for one release, with a DeprecationWarning.
"""

import warnings

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

# Layers that moved to a task library: old name -> new home (one release).
_MOVED = {
    "CRF": "keras_seqmodels.tagging",
    "CRFTagger": "keras_seqmodels.tagging",
    "CharacterEncoder": "keras_seqmodels.tagging",
    "SentenceVectorizer": "keras_seqmodels.tagging",
    "TagLookup": "keras_seqmodels.tagging",
    "RecursiveNN": "keras_seqmodels.trees",
    "RNTN": "keras_seqmodels.trees",
    "TreeLSTM": "keras_seqmodels.trees",
}


def __getattr__(name):
    """The old names of the layers that moved (one release, with a warning)."""
    home = _MOVED.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    if home == "keras_seqmodels.tagging":
        from keras_seqmodels import tagging as package
    else:
        from keras_seqmodels import trees as package

    warnings.warn(
        f"keras_seqmodels.layers.{name} moved to {home}.{name}; the old name goes in "
        "the next release",
        DeprecationWarning,
        stacklevel=2,
    )
    return getattr(package, name)
