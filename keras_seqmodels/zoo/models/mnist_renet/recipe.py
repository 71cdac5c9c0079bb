"""mnist-renet: two ReNet four-direction GRU layers on MNIST digits.

The model takes ``(batch, 28, 28)`` pixels 0-255, scales them itself and
returns 10 class scores (logits). Validation: 5,000 of the 60,000 training
images (a fixed seeded draw) select the epoch; test: the 10,000 test images.

    seqmodels train mnist-renet --epochs 5
    seqmodels evaluate mnist-renet --split test
"""

import gzip
import os

import numpy as np

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


def read_idx(path):
    """An idx ``.gz`` file: big-endian header (magic, dims), then uint8 data."""
    with gzip.open(path, "rb") as f:
        raw = f.read()
    ndim = raw[3]
    dims = [int.from_bytes(raw[4 + 4 * i : 8 + 4 * i], "big") for i in range(ndim)]
    return np.frombuffer(raw, np.uint8, offset=4 + 4 * ndim).reshape(dims)


def load_data(data_dir, split, smoke, config):
    """Images ``(n, 28, 28)`` float32 0-255 and labels ``(n,)``."""
    if smoke:
        rng = np.random.default_rng(list(SMOKE_SIZES).index(split))
        n = SMOKE_SIZES[split]
        return rng.integers(0, 256, (n, 28, 28)).astype("float32"), rng.integers(0, 10, n)
    prefix = "t10k" if split == "test" else "train"
    images = read_idx(os.path.join(data_dir, f"{prefix}-images-idx3-ubyte.gz"))
    labels = read_idx(os.path.join(data_dir, f"{prefix}-labels-idx1-ubyte.gz"))
    if split != "test":
        order = np.random.default_rng(SPLIT_SEED).permutation(len(images))
        index = np.sort(order[:VALID_SIZE] if split == "validation" else order[VALID_SIZE:])
        images, labels = images[index], labels[index]
    return images.astype("float32"), labels.astype("int64")


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
    x = ks.layers.FourDirectional2D(cell(config["units"]), patch_size=2, name="renet_1")(x)
    x = ks.layers.FourDirectional2D(cell(config["units2"]), patch_size=2, name="renet_2")(x)
    x = keras.layers.Flatten()(x)
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


def evaluate(model, data, config):
    images, labels = data
    scores = model.predict(images, batch_size=500, verbose=0)
    accuracy = float(np.mean(np.argmax(scores, axis=-1) == labels))
    return {
        "examples": int(len(labels)),
        "accuracy": round(accuracy, 4),
        "error_percent": round(100 * (1 - accuracy), 2),
    }
