"""The mnist-renet recipe's options: shifted training images and layer sizes."""

import numpy as np
import pytest

from keras_seqmodels.zoo.models.mnist_renet import recipe
from keras_seqmodels.zoo.models.mnist_renet.config import CONFIG


def _shift_by_slicing(image, down, right):
    out = np.zeros_like(image)
    h, w = image.shape
    src = image[max(0, -down) : h - max(0, down), max(0, -right) : w - max(0, right)]
    top, left = max(0, down), max(0, right)
    out[top : top + src.shape[0], left : left + src.shape[1]] = src
    return out


def test_shift_images_matches_slicing_for_every_shift():
    rng = np.random.default_rng(3)
    shifts = np.array([(r, c) for r in range(-2, 3) for c in range(-2, 3)])
    images = rng.integers(0, 256, (len(shifts), 6, 7)).astype("float32")
    shifted = recipe.shift_images(images, shifts, 2)
    assert shifted.shape == images.shape
    for image, out, (down, right) in zip(images, shifted, shifts):
        np.testing.assert_array_equal(out, _shift_by_slicing(image, down, right))


def test_shift_images_rejects_shifts_beyond_the_limit():
    images = np.zeros((1, 4, 4), "float32")
    with pytest.raises(ValueError, match="shift_images: shifts must lie in"):
        recipe.shift_images(images, [[3, 0]], 2)


def test_augmented_training_batches_are_shifted_copies_redrawn_each_epoch():
    config = dict(CONFIG, augment_shift=2, batch_size=16, smoke=True)
    images, labels = recipe.load_data(None, "train", True, dict(CONFIG, smoke=True))
    batches = recipe.load_data(None, "train", True, config)
    assert len(batches) == -(-len(labels) // 16)
    first = [batches[i] for i in range(len(batches))]
    seen = np.concatenate([y for _, y in first])
    assert sorted(seen.tolist()) == sorted(labels.tolist())
    for (x, _), i in zip(first, range(len(batches))):
        rows = batches.order[i * 16 : (i + 1) * 16]
        for image, k in zip(x, rows):
            down, right = batches.drawn[k]
            np.testing.assert_array_equal(image, _shift_by_slicing(images[k], down, right))
    before = batches.drawn.copy()
    batches.on_epoch_end()
    assert not np.array_equal(before, batches.drawn)
    # Validation images are never shifted.
    valid, _ = recipe.load_data(None, "validation", True, config)
    np.testing.assert_array_equal(valid, recipe.load_data(None, "validation", True, CONFIG)[0])


def test_default_config_builds_the_small_network_without_the_options():
    model = recipe.build_model(dict(CONFIG, smoke=True))
    assert model.count_params() == 87626  # 16/32 units, Flatten, Dropout, Dense(10)
    assert not any(layer.name.startswith("fc_") for layer in model.layers)


def test_options_add_renet_dropout_and_hidden_dense_layers():
    config = dict(CONFIG, renet_dropout=0.1, fc_units=24, fc_layers=2, smoke=True)
    model = recipe.build_model(config)
    names = [layer.name for layer in model.layers]
    assert {"renet_1_dropout", "renet_2_dropout", "fc_1", "fc_2"} <= set(names)
    assert model.get_layer("fc_2").units == 24
    assert model.get_layer("fc_1").input.shape[-1] == 7 * 7 * 2 * CONFIG["units2"]
    scores = model(np.zeros((2, 28, 28), "float32"))
    assert tuple(scores.shape) == (2, 10)
