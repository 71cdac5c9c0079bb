"""Test helpers shared by the package's own tests and by users' cells."""

from keras_seqmodels.testing.clean_process import (
    CleanProcessError,
    call_saved_model,
    run_in_clean_process,
)
from keras_seqmodels.testing.layer_test import compute_gradients, run_layer_test
from keras_seqmodels.testing.memory import peak_rss_bytes

__all__ = [
    "CleanProcessError",
    "call_saved_model",
    "compute_gradients",
    "peak_rss_bytes",
    "run_in_clean_process",
    "run_layer_test",
]
