"""pixel-mnist: MNIST digits read one pixel at a time (784 steps) by a stack of
recurrent blocks (sequential pixel MNIST; Le, Jaitly and Hinton 2015).

The model takes ``(batch, 28, 28)`` pixels 0-255, scales them itself, reads
them in raster order and returns 10 class scores (logits); the network is in
``network.py``. ``--layer`` picks the recurrent layer of every block:
``mingru`` (default), ``minlstm``, ``lru``, ``hawk`` (the parallel-scan layers
of ``keras_seqmodels.linear_rnn``) or ``lstm`` (the package's LSTM, the
baseline). Validation: 5,000 of the 60,000 training images (the seeded draw
of keras_seqmodels.data.mnist) select the epoch; test: the 10,000 test images.

    seqmodels train pixel-mnist --epochs 30
    seqmodels train pixel-mnist --layer lstm --units 96 --time-budget 600 \\
        --schedule-seconds 600
    seqmodels evaluate pixel-mnist --split test

AdamW (weight decay on the matrices only), the rate warmed up linearly over
``--warmup-epochs`` and then cosine-decayed to 2% of ``--learning-rate`` over
``--epochs``, or over ``--schedule-seconds`` of training (set it to
``--time-budget``); the rate is set at the start of each epoch. The MNIST
files are read with NumPy (``keras_seqmodels.data.mnist``): training and
evaluation need no TensorFlow (``KERAS_BACKEND=jax``).
"""

from keras_seqmodels.zoo import digits
from keras_seqmodels.zoo.digits import evaluate  # noqa: F401 (the recipe's)
from keras_seqmodels.zoo.models.pixel_mnist import network
from keras_seqmodels.zoo.models.pixel_mnist.config import (
    CONFIG,  # noqa: F401 (the recipe's)
    SMOKE_SIZES,
    SPLIT_SEED,
    VALID_SIZE,
)

OWNER = "pixel-mnist"  # in error messages
TASK = (
    "MNIST digit classification from (batch, 28, 28) pixels 0-255 read one pixel at a "
    "time in raster order (784 steps; 10 class scores, logits)"
)
DATA = "MNIST: train 55,000 / validation 5,000 held out from train (seed 0) / test 10,000"
MONITOR = ("val_accuracy", "max")
DATA_SUBDIR = "mnist"
MIN_RATE = 0.02  # the floor of the cosine decay, a fraction of the peak rate

# Variables without weight decay (Keras matches these names by regular expression):
# biases, LayerNorm's scale and offset, and the recurrences' per-unit vectors.
NO_DECAY = ("bias", "gamma", "beta", "nu", "theta", "log", "a_param", "lambda")


def load_data(data_dir, split, smoke, config):
    """Images ``(n, 28, 28)`` float32 0-255 and labels ``(n,)``."""
    return digits.load_split(data_dir, split, smoke, SMOKE_SIZES, VALID_SIZE, SPLIT_SEED, OWNER)


def build_model(config):
    return network.build_model(config, OWNER)


def compile_options(config):
    import keras

    optimizer = keras.optimizers.AdamW(
        config["learning_rate"], weight_decay=config["weight_decay"], clipnorm=config["clipnorm"]
    )
    optimizer.exclude_from_weight_decay(var_names=list(NO_DECAY))
    options = dict(
        optimizer=optimizer,
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        metrics=["accuracy"],
    )
    if keras.backend.backend() == "jax":
        # Compiled also in a smoke run: op by op, JAX runs a step over 784
        # pixels several times slower than it compiles and runs it.
        options["jit_compile"] = True
    return options


def callbacks(config, work_dir, train):
    """The rate, set at the start of each epoch (``warmup_cosine_rate``)."""
    from keras_seqmodels.training.epoch_rate import epoch_rate_callback

    return [
        epoch_rate_callback(
            config["learning_rate"],
            config["epochs"],
            config["warmup_epochs"],
            MIN_RATE,
            config["schedule_seconds"],
        )
    ]
