"""What ``train_language_model`` feeds to ``model.fit``: ``Windows``, the
training windows of the word stream (a new random offset and order each
epoch: truncated back-propagation through time, each window from zero LSTM
states), and ``Perplexity``, the callback that puts the training and
validation perplexities in the logs. ``train_language_model`` itself, and
``WordLanguageModel.from_text``, are in ``keras_seqmodels.language_model.model``.
"""

import math

import keras
import numpy as np

from keras_seqmodels.language_model import text as textlib


class Windows(keras.utils.PyDataset):
    """Training windows, a new random offset and order each epoch."""

    def __init__(self, ids, length, batch_size, seed):
        super().__init__()
        self.ids, self.length, self.batch_size = ids, length, batch_size
        self.rng = np.random.default_rng(seed)
        # Whole windows that fit at any offset: the number of steps stays fixed.
        self.count = max((len(ids) - length) // length, 1)
        self.on_epoch_end()

    def __len__(self):
        return -(-self.count // self.batch_size)

    def __getitem__(self, i):
        rows = self.order[i * self.batch_size : (i + 1) * self.batch_size]
        return self.x[rows], self.y[rows]

    def on_epoch_end(self):
        spare = len(self.ids) - 1 - self.count * self.length
        offset = int(self.rng.integers(0, spare + 1)) if spare > 0 else 0
        span = self.ids[offset : offset + self.count * self.length + 1]
        self.x, self.y = textlib.windows(span, self.length)
        self.order = self.rng.permutation(self.count)


class Perplexity(keras.callbacks.Callback):
    """``perplexity`` (exp of the epoch's loss) and the validation text's in the logs."""

    def __init__(self, val_ids, length, batch_size):
        super().__init__()
        self.val_ids, self.length, self.batch_size = val_ids, length, batch_size

    def on_epoch_end(self, epoch, logs=None):
        if logs is None:
            return
        if "loss" in logs:
            logs["perplexity"] = math.exp(min(float(logs["loss"]), 700.0))
        if self.val_ids is not None:
            ppl = self.model.stream_perplexity(self.val_ids, self.length, self.batch_size)
            logs["val_perplexity"] = ppl
            logs["val_loss"] = math.log(ppl)
