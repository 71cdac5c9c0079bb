"""keras_seqmodels: recurrent and recursive sequence models for Keras 3."""

from keras_seqmodels import cells, data, layers, training, zoo
from keras_seqmodels.version import __version__

__all__ = ["cells", "data", "layers", "training", "zoo", "__version__"]
