"""``pixel-mnist`` and ``pixel-mnist-permuted``: 28 x 28 grayscale pixels
(0-255) in, a digit out (the model reads them one pixel at a time)."""

from keras_seqmodels.zoo.task import InputError, Task

EXPECTED = "(28, 28) finite pixel values 0-255, or a batch (n, 28, 28)"


class PixelDigitTask(Task):
    """Handwritten digit classification from a pixel sequence.

    ``predict(image)`` takes one image, ``(28, 28)`` pixel values 0-255
    (white digit on black, as MNIST; nested lists or a NumPy array), and
    returns its digit as an ``int``; a batch ``(n, 28, 28)`` gives a list.
    The model itself flattens the image into 784 steps (and, for
    ``pixel-mnist-permuted``, applies its fixed permutation).
    """

    input_kind = "array"
    input_expected = EXPECTED

    def is_single(self, inputs):
        import numpy as np

        try:
            return np.ndim(inputs) == 2
        except ValueError:  # ragged: refused as a batch by predict_batch
            return False

    def predict_batch(self, inputs):
        import numpy as np

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


TASK = PixelDigitTask
