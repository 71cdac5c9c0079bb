"""Initializers for recurrent weight matrices."""

from keras_seqmodels.initializers.spectral_radius import SpectralRadius, spectral_radius

__all__ = ["SpectralRadius", "spectral_radius"]
