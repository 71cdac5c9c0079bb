"""The JAX random-noise memories of zoo/babi-memn2n/seeds_jax.py (the GPU trainer)
against ``keras_seqmodels.data.babi.insert_empty_memories``."""

import importlib.util
import os

import numpy as np
import pytest

from keras_seqmodels.data import babi

jnp = pytest.importorskip("jax.numpy")
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _seeds_jax():
    path = os.path.join(REPO, "zoo", "babi-memn2n", "seeds_jax.py")
    spec = importlib.util.spec_from_file_location("babi_seeds_jax", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class _FixedDraws:
    """A stand-in ``numpy.random.Generator`` whose ``random`` returns given draws."""

    def __init__(self, draws):
        self.draws = draws

    def random(self, shape):
        assert shape == self.draws.shape
        return self.draws


@pytest.mark.parametrize("rate", [0.1, 0.5])
def test_insert_empty_matches_the_numpy_reference(rate):
    rng = np.random.default_rng(3)
    n, size, words = 16, 12, 5
    stories = rng.integers(3, 40, (n, size, words)).astype("int32")
    stories[:, :, 3:] = 0
    used = rng.integers(0, size + 1, n)
    stories[np.arange(size)[None, :] >= used[:, None]] = 0
    uniform = rng.random((n, size))
    expected = babi.insert_empty_memories(stories, rate, _FixedDraws(uniform))
    got = np.asarray(_seeds_jax().insert_empty(jnp.asarray(stories), jnp.asarray(uniform < rate)))
    np.testing.assert_array_equal(got, expected)
    # Noise was inserted, and only as <nil>-only slots.
    inserted = (got[:, :, 0] == babi.NIL) & (got[:, :, 1:] == 0).all(-1)
    assert inserted.sum() > 0
