"""``mnist-renet``: 28 x 28 grayscale pixels (0-255) in, a digit out."""

from keras_seqmodels.zoo.task import Task


class DigitTask(Task):
    """Handwritten digit classification.

    ``predict(image)`` takes one image, ``(28, 28)`` pixel values 0-255
    (white digit on black, as MNIST; nested lists or a NumPy array), and
    returns its digit as an ``int``; a batch ``(n, 28, 28)`` gives a list.
    """

    def is_single(self, inputs):
        import numpy as np

        return np.ndim(inputs) == 2

    def predict_batch(self, inputs):
        import numpy as np

        pixels = np.asarray(inputs, "float32")
        if pixels.shape[1:] != (28, 28):
            raise ValueError(
                "mnist-renet predict: images must be (28, 28) pixels, or a batch "
                f"(n, 28, 28). Received shape {pixels.shape}"
            )
        scores = np.asarray(self.model.predict_on_batch(pixels))
        return [int(d) for d in scores.argmax(-1)]


TASK = DigitTask
