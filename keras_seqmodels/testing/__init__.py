"""Test helpers shared by the package's own tests and by users' cells."""

from keras_seqmodels.testing.layer_test import compute_gradients, run_layer_test

__all__ = ["compute_gradients", "run_layer_test"]
