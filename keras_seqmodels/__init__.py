"""keras_seqmodels: recurrent and recursive sequence models for Keras 3."""

from keras_seqmodels import cells, data, initializers, layers, memory, training, trees, zoo
from keras_seqmodels import seq2seq
from keras_seqmodels.version import __version__

__all__ = ["cells", "data", "initializers", "layers", "memory", "seq2seq", "training", "trees", "zoo", "__version__"]
