"""``ntm-copy``: a sequence of 8-bit vectors in, the network's copy of it out."""

from keras_seqmodels.zoo.task import InputError, Task


class CopyTask(Task):
    """The copy task with a Neural Turing Machine.

    ``predict(bits)`` takes one sequence, ``(length, 8)`` of 0/1 (nested
    lists or an array), and returns the network's copy as a list of
    ``length`` lists of 8 ints; a batch ``(n, length, 8)`` of one length
    gives a list of copies. Inside, the sequence is laid out as in training
    (the bits, one delimiter step, ``length`` blank steps) and the outputs of
    the blank steps are thresholded at 0.5.
    """

    input_kind = "array"

    single_ndim = 2

    def predict_batch(self, inputs):
        import numpy as np

        width = self.model.inputs[0].shape[-1] - 1
        expected = (
            f"(length, {width}) bits of 0 or 1, or a batch (n, length, {width}) of one length"
        )
        try:
            bits = np.asarray(inputs, "float32")
        except (TypeError, ValueError):
            problem = "bits that are not numbers of one shape"
            raise InputError(self.name, problem, expected) from None
        if bits.ndim != 3 or bits.shape[-1] != width or bits.shape[1] == 0:
            shape = bits.shape[1:] if bits.ndim == 3 else bits.shape
            raise InputError(self.name, f"a sequence of shape {shape}", expected)
        bad = ~np.isin(bits, (0.0, 1.0))  # NaN, infinities and 0.5 alike
        if bad.any():
            row = int(np.flatnonzero(bad.any(axis=(1, 2)))[0])
            value = bits[row][bad[row]][0]
            raise InputError(self.name, f"sequence {row} has the value {value:g}", expected)
        n, length = bits.shape[:2]
        laid_out = np.zeros((n, 2 * length + 1, width + 1), "float32")
        laid_out[:, :length, :width] = bits
        laid_out[:, length, width] = 1.0
        logits = np.asarray(self.run_model(laid_out))[:, length + 1 :]
        return (logits > 0).astype(int).tolist()


TASK = CopyTask
