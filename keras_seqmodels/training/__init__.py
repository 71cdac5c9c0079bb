"""Training utilities: distribution strategies, callbacks, regularizers."""

from keras_seqmodels.training.distribute import STRATEGIES, get_strategy

__all__ = ["STRATEGIES", "get_strategy"]
