"""Layers: the recurrent runner and (later) wrappers."""

from keras_seqmodels.layers.recurrent import Recurrent

__all__ = ["Recurrent"]
