"""pixel-mnist-permuted: the pixel-mnist recipe on permuted pixel MNIST.

The same data, network, schedule and evaluation as
``keras_seqmodels.zoo.models.pixel_mnist.recipe``; the 784 pixels are read in
one fixed order, ``numpy.random.default_rng(permutation_seed).permutation(784)``
(``--permutation-seed``, default 0), which the model applies itself (a frozen
0/1 Dense layer): it takes the same raw ``(batch, 28, 28)`` images.

    seqmodels train pixel-mnist-permuted --epochs 30
    seqmodels evaluate pixel-mnist-permuted --split test
"""

from keras_seqmodels.data import mnist
from keras_seqmodels.zoo.models.pixel_mnist import network, recipe
from keras_seqmodels.zoo.models.pixel_mnist.config import PERMUTED_CONFIG as CONFIG  # noqa: F401
from keras_seqmodels.zoo.models.pixel_mnist.recipe import (  # noqa: F401 (the recipe's hooks)
    DATA,
    DATA_SUBDIR,
    MONITOR,
    callbacks,
    compile_options,
    evaluate,
)

OWNER = "pixel-mnist-permuted"  # in error messages
TASK = (
    "MNIST digit classification from (batch, 28, 28) pixels 0-255 read one pixel at a "
    "time in a fixed permutation (784 steps; 10 class scores, logits)"
)


def load_data(data_dir, split, smoke, config):
    """Images ``(n, 28, 28)`` float32 0-255 and labels ``(n,)`` (unpermuted:
    the model permutes)."""
    if smoke:
        return recipe.load_data(None, split, True, config)
    return mnist.read_mnist_split(
        data_dir, split, recipe.VALID_SIZE, recipe.SPLIT_SEED, owner=OWNER
    )


def build_model(config):
    return network.build_model(config, OWNER)
