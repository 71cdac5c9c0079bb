"""The shipped mnist-renet artifact: contract and accuracy on 200 test images."""

import os

import numpy as np
import pytest

from keras_seqmodels import zoo

FIXTURE = os.path.join(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
    "fixtures",
    "mnist_test_sample.npz",
)


@pytest.fixture(scope="module")
def model():
    return zoo.load("mnist-renet").model


def test_index_entry_records_the_card():
    entry = zoo.info("mnist-renet")
    assert entry["metrics"]["test_error_percent"] <= 1.0
    assert entry["card"] == "zoo/mnist-renet/card.md"
    assert entry["command"] == "seqmodels evaluate mnist-renet --split test"


def test_takes_raw_pixels_and_returns_ten_scores(model):
    sample = np.load(FIXTURE)
    images = sample["images"][:4]
    scores = np.asarray(model.predict(images.astype("float32"), verbose=0))
    assert scores.shape == (4, 10)
    assert np.all(np.isfinite(scores))
    # The model scales pixels itself: feeding 0-1 values instead changes
    # its scores, so callers must pass 0-255 as documented.
    scaled = np.asarray(model.predict(images.astype("float32") / 255.0, verbose=0))
    assert not np.allclose(scores, scaled)


def test_accuracy_on_committed_test_sample(model):
    sample = np.load(FIXTURE)
    images, labels = sample["images"], sample["labels"]
    assert images.shape == (200, 28, 28) and images.dtype == np.uint8
    scores = np.asarray(model.predict(images.astype("float32"), batch_size=100, verbose=0))
    accuracy = np.mean(np.argmax(scores, -1) == labels)
    # The shipped model reads all 200 of these test images correctly; allow
    # two misreadings for numerical differences across platforms.
    assert accuracy >= 0.99, accuracy
