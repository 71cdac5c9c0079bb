"""mnist-renet: two ReNet four-direction GRU layers on MNIST digits.

The model takes ``(batch, 28, 28)`` pixels 0-255, scales them itself and
returns 10 class scores (logits). Validation: 5,000 of the 60,000 training
images (a fixed seeded draw) select the epoch; test: the 10,000 test images.

    seqmodels train mnist-renet --epochs 5
    seqmodels evaluate mnist-renet --split test

Options beyond the small default network (their defaults leave it as is): ``--patch-size``,
``--renet-dropout`` (after each ReNet layer), ``--fc-units``/``--fc-layers``
(ReLU Dense layers before the scores, each after a ``--dropout``) and
``--augment-shift N`` (each training image moved by a random whole number of
pixels, up to N, in each direction, anew every epoch; the validation and
test images are never moved).
"""

import numpy as np

from keras_seqmodels.zoo import digits
from keras_seqmodels.zoo.digits import evaluate  # noqa: F401 (the recipe's)
from keras_seqmodels.zoo.models.mnist_renet.config import (
    CONFIG,  # noqa: F401 (the recipe's)
    SPLIT_SEED,
    VALID_SIZE,
)

TASK = (
    "MNIST digit classification from (batch, 28, 28) pixels 0-255 "
    "(10 class scores, logits) with two ReNet four-direction GRU layers"
)
DATA = "MNIST: train 55,000 / validation 5,000 held out from train (seed 0) / test 10,000"
MONITOR = ("val_accuracy", "max")
DATA_SUBDIR = "mnist"


SMOKE_SIZES = {"train": 64, "validation": 32, "test": 32}


def load_data(data_dir, split, smoke, config):
    """Images ``(n, 28, 28)`` float32 0-255 and labels ``(n,)``."""
    images, labels = digits.load_split(
        data_dir, split, smoke, SMOKE_SIZES, VALID_SIZE, SPLIT_SEED, owner="mnist-renet"
    )
    if split == "train" and config.get("augment_shift", 0) > 0:
        return _shifted_batches(images, labels, config)
    return images, labels


def shift_images(images, shifts, limit):
    """``images`` ``(n, h, w)`` each moved by its ``shifts[k] = (rows, cols)``
    whole pixels (positive: down / right; ``|shift| <= limit``), zeros
    filling what moves in. One gather for the whole batch."""
    n, h, w = images.shape
    shifts = np.asarray(shifts)
    if limit < 0 or np.any(np.abs(shifts) > limit):
        raise ValueError(
            f"mnist-renet shift_images: shifts must lie in [-limit, limit] with "
            f"limit >= 0. Received limit={limit}, largest |shift| {np.abs(shifts).max()}"
        )
    padded = np.pad(images, ((0, 0), (limit, limit), (limit, limit)))
    rows = np.arange(h)[None, :] + limit - shifts[:, :1]  # (n, h)
    cols = np.arange(w)[None, :] + limit - shifts[:, 1:]  # (n, w)
    return padded[np.arange(n)[:, None, None], rows[:, :, None], cols[:, None, :]]


def _shifted_batches(images, labels, config):
    """Training batches of randomly shifted images, reshuffled and redrawn
    every epoch (a ``PyDataset``)."""
    from keras_seqmodels.zoo.framework.batches import epoch_batches

    limit = config["augment_shift"]

    def shifts(rng):
        return rng.integers(-limit, limit + 1, (len(labels), 2))

    def batch(rows, drawn):
        return shift_images(images[rows], drawn[rows], limit), labels[rows]

    return epoch_batches(len(labels), config["batch_size"], config["seed"], shifts, batch)


def build_model(config):
    import keras

    import keras_seqmodels as ks

    def cell(units):
        if config["cell"] == "gru":
            return ks.cells.GRUCell(units, reset_after=config["reset_after"])
        return ks.cells.LSTMCell(units)

    inputs = keras.Input((28, 28), name="pixels")
    x = keras.layers.Rescaling(1.0 / 255.0)(inputs)
    x = keras.layers.Reshape((28, 28, 1))(x)
    patch = config.get("patch_size", 2)
    for i, units in enumerate((config["units"], config["units2"]), 1):
        x = ks.layers.FourDirectional2D(cell(units), patch_size=patch, name=f"renet_{i}")(x)
        if config.get("renet_dropout", 0.0) > 0:
            x = keras.layers.Dropout(config["renet_dropout"], name=f"renet_{i}_dropout")(x)
    x = keras.layers.Flatten()(x)
    for i in range(config.get("fc_layers", 1) if config.get("fc_units", 0) > 0 else 0):
        x = keras.layers.Dropout(config["dropout"])(x)
        x = keras.layers.Dense(config["fc_units"], activation="relu", name=f"fc_{i + 1}")(x)
    x = keras.layers.Dropout(config["dropout"])(x)
    # float32 scores under a mixed-precision policy: the softmax loss needs them.
    outputs = keras.layers.Dense(10, name="scores", dtype="float32")(x)
    return keras.Model(inputs, outputs, name="mnist-renet")


def compile_options(config):
    import keras

    train_size = SMOKE_SIZES["train"] if config["smoke"] else 60000 - VALID_SIZE
    steps = config["epochs"] * -(-train_size // config["batch_size"])
    schedule = keras.optimizers.schedules.CosineDecay(
        config["learning_rate"], decay_steps=steps, alpha=0.05
    )
    return dict(
        optimizer=keras.optimizers.Adam(schedule, clipnorm=1.0),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        metrics=["accuracy"],
    )
