"""Counts of the reliability cases tried, printed at the end of the run.

Every property test calls ``record(kind, outcome)`` once per generated case;
``conftest.py`` prints the table (and writes it as JSON to the path in
``RELIABILITY_REPORT`` when set), which is where RELIABILITY.md's numbers
come from.
"""

import collections
import os

import hypothesis
import keras
import numpy as np

CASES = collections.Counter()

# CI runs a small, derandomized sample; set RELIABILITY_FUZZ_SCALE=10 (or more)
# for a deeper local run.
SCALE = float(os.environ.get("RELIABILITY_FUZZ_SCALE", "1"))


def record(kind, outcome):
    CASES[(kind, outcome)] += 1


def fuzz_settings(max_examples):
    """Reproducible settings: derandomized, no example database, no deadline."""
    return hypothesis.settings(
        max_examples=max(1, int(max_examples * SCALE)),
        deadline=None,
        derandomize=True,
        database=None,
        print_blob=True,
        suppress_health_check=[
            hypothesis.HealthCheck.too_slow,
            hypothesis.HealthCheck.data_too_large,
        ],
    )


# Shared by the fuzz modules: float64 references on TensorFlow (Keras on JAX
# computes some activations in float32), weights drawn per case.
F64 = keras.backend.backend() == "tensorflow"
DTYPE = "float64" if F64 else "float32"
ATOL = 1e-9 if F64 else 5e-5


def randomize(layer, seed, scale=0.6):
    """Draw every trainable weight of ``layer`` uniformly in [-scale, scale]."""
    rng = np.random.default_rng(seed)
    for v in layer.weights:
        if v.trainable:
            v.assign(rng.uniform(-scale, scale, v.shape).astype(v.dtype))
