"""``ntm-copy``: a sequence of 8-bit vectors in, the network's copy of it out."""

from keras_seqmodels.zoo.task import Task


class CopyTask(Task):
    """The copy task with a Neural Turing Machine.

    ``predict(bits)`` takes one sequence, ``(length, 8)`` of 0/1 (nested
    lists or an array), and returns the network's copy as a list of
    ``length`` lists of 8 ints; a batch ``(n, length, 8)`` of one length
    gives a list of copies. Inside, the sequence is laid out as in training
    (the bits, one delimiter step, ``length`` blank steps) and the outputs of
    the blank steps are thresholded at 0.5.
    """

    def is_single(self, inputs):
        import numpy as np

        return np.ndim(inputs) == 2

    def predict_batch(self, inputs):
        import numpy as np

        bits = np.asarray(inputs, "float32")
        width = self.model.inputs[0].shape[-1] - 1
        if bits.ndim != 3 or bits.shape[-1] != width:
            raise ValueError(
                f"ntm-copy predict: a sequence must be (length, {width}) bits, or a batch "
                f"(n, length, {width}) of one length. Received shape {bits.shape}"
            )
        n, length = bits.shape[:2]
        laid_out = np.zeros((n, 2 * length + 1, width + 1), "float32")
        laid_out[:, :length, :width] = bits
        laid_out[:, length, width] = 1.0
        logits = np.asarray(self.model.predict_on_batch(laid_out))[:, length + 1 :]
        return (logits > 0).astype(int).tolist()


TASK = CopyTask
