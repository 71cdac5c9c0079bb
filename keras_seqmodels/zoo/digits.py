"""What the zoo's MNIST digit models share: the digit task (``predict`` on
28 x 28 pixel images), the splits their recipes read, and the accuracy their
recipes report. Their specs name ``DigitTask``; their recipes call
``load_split`` and take ``evaluate``."""

import numpy as np

from keras_seqmodels.data import mnist
from keras_seqmodels.zoo.task import InputError, Task

EXPECTED = "(28, 28) finite pixel values 0-255, or a batch (n, 28, 28)"


class DigitTask(Task):
    """Handwritten digit classification.

    ``predict(image)`` takes one image, ``(28, 28)`` pixel values 0-255
    (white digit on black, as MNIST; nested lists or a NumPy array), and
    returns its digit as an ``int``; a batch ``(n, 28, 28)`` gives a list.
    The model does its own scaling (and, for the pixel-sequence models, reads
    the 784 pixels as a sequence in its own order).
    """

    input_kind = "array"
    input_expected = EXPECTED

    single_ndim = 2

    def predict_batch(self, inputs):
        try:
            pixels = np.asarray(inputs, "float32")
        except (TypeError, ValueError):
            problem = "pixels that are not numbers of one shape"
            raise InputError(self.name, problem, EXPECTED) from None
        if pixels.ndim != 3 or pixels.shape[1:] != (28, 28):
            shape = pixels.shape[1:] if pixels.ndim == 3 else pixels.shape
            raise InputError(self.name, f"an image of shape {shape}", EXPECTED)
        for problem, bad in (
            ("a non-finite pixel", ~np.isfinite(pixels)),
            ("a pixel outside 0-255", np.isfinite(pixels) & ((pixels < 0) | (pixels > 255))),
        ):
            rows = np.flatnonzero(bad.any(axis=(1, 2)))
            if rows.size:
                raise InputError(self.name, f"image {int(rows[0])} has {problem}", EXPECTED)
        if len(pixels) == 0:
            return []
        scores = np.asarray(self.run_model(pixels))
        return [int(d) for d in scores.argmax(-1)]


def load_split(data_dir, split, smoke, smoke_sizes, valid_size, split_seed, owner):
    """Images ``(n, 28, 28)`` float32 0-255 and labels ``(n,)`` of one split:
    the idx files' split (``keras_seqmodels.data.mnist.read_mnist_split``),
    or, with ``smoke``, ``smoke_sizes[split]`` random images and labels
    (seeded by the split)."""
    if smoke:
        rng = np.random.default_rng(list(smoke_sizes).index(split))
        n = smoke_sizes[split]
        return rng.integers(0, 256, (n, 28, 28)).astype("float32"), rng.integers(0, 10, n)
    return mnist.read_mnist_split(data_dir, split, valid_size, split_seed, owner=owner)


def evaluate(model, data, config):
    """A recipe's ``evaluate``: accuracy and error of ``model`` on ``(images, labels)``."""
    images, labels = data
    scores = model.predict(images, batch_size=500, verbose=0)
    accuracy = float(np.mean(np.argmax(scores, axis=-1) == labels))
    return {
        "examples": int(len(labels)),
        "accuracy": round(accuracy, 4),
        "error_percent": round(100 * (1 - accuracy), 2),
    }
