"""ProbabilityAverage (ensemble head) against the mean of softmaxes in NumPy."""

import keras
import numpy as np
import pytest
from keras import ops

import keras_seqmodels as ks
from keras_seqmodels.testing import run_layer_test

F64 = keras.backend.backend() == "tensorflow"
DTYPE = "float64" if F64 else "float32"
ATOL = 1e-9 if F64 else 1e-5


def softmax(z):
    z = z - z.max(axis=-1, keepdims=True)
    return np.exp(z) / np.exp(z).sum(axis=-1, keepdims=True)


def test_output_is_the_log_of_the_mean_probability():
    rng = np.random.default_rng(0)
    logits = [rng.normal(0, 3, (4, 2, 7)).astype(DTYPE) for _ in range(3)]
    out = ops.convert_to_numpy(ks.layers.ProbabilityAverage(dtype=DTYPE)(logits))
    expected = np.mean([softmax(z.astype("float64")) for z in logits], axis=0)
    np.testing.assert_allclose(np.exp(out), expected, atol=ATOL)
    # Valid logits: their softmax is the mean probability itself.
    np.testing.assert_allclose(softmax(out.astype("float64")), expected, atol=ATOL)


def test_one_member_is_its_log_softmax_and_confident_members_stay_finite():
    z = np.array([[1000.0, -1000.0, 0.0]], DTYPE)
    layer = ks.layers.ProbabilityAverage(dtype=DTYPE)
    single = ops.convert_to_numpy(layer([z]))
    np.testing.assert_allclose(single, z - 1000.0, atol=ATOL)
    both = ops.convert_to_numpy(layer([z, -z]))
    assert np.all(np.isfinite(both))
    np.testing.assert_allclose(np.exp(both[0, :2]), [0.5, 0.5], atol=ATOL)


def test_mismatched_inputs_raise():
    layer = ks.layers.ProbabilityAverage(name="average")
    with pytest.raises(ValueError, match="average: all inputs must have the same shape"):
        layer([np.zeros((2, 5), "float32"), np.zeros((2, 6), "float32")])
    with pytest.raises(ValueError, match="average: inputs must be a non-empty list"):
        ks.layers.ProbabilityAverage(name="average").build((2, 5))


def test_layer_contract():
    rng = np.random.default_rng(1)
    run_layer_test(
        ks.layers.ProbabilityAverage,
        [rng.normal(size=(3, 5)).astype("float32") for _ in range(2)],
        expected_output_shape=(3, 5),
    )
