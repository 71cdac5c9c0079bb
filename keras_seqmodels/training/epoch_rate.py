"""A learning rate set at the start of each epoch: linear warm-up, then a
cosine decay over the epochs or over a number of seconds of training.

Set per epoch, not per step, because that is what reaches the optimizer on
every backend: on JAX, ``fit`` carries the optimizer's variables through a
whole epoch and reads an assignment made in ``on_epoch_begin`` only. The
decay over seconds ends when a time budget stops the run, whatever an epoch
takes on the machine at hand.
"""

import math
import time

import numpy as np


def warmup_cosine_rate(peak, epoch, epochs, warmup_epochs=1, floor=0.02, progress=None):
    """The rate of epoch ``epoch`` (from 0).

    Epochs ``0 .. warmup_epochs - 1`` climb linearly to ``peak``
    (``peak * (epoch + 1) / (warmup_epochs + 1)``); then the rate falls from
    ``peak`` to ``floor * peak`` along half a cosine. ``progress`` (0 to 1,
    clipped) is how far along the decay is; by default
    ``(epoch - warmup_epochs) / (epochs - warmup_epochs)``.

    Example:

    >>> [round(warmup_cosine_rate(1.0, e, 5, 1, floor=0.0), 3) for e in range(5)]
    [0.5, 1.0, 0.854, 0.5, 0.146]
    """
    if epoch < warmup_epochs:
        return peak * (epoch + 1) / (warmup_epochs + 1)
    if progress is None:
        progress = (epoch - warmup_epochs) / max(epochs - warmup_epochs, 1)
    progress = min(max(float(progress), 0.0), 1.0)
    return peak * (floor + (1 - floor) * 0.5 * (1 + math.cos(math.pi * progress)))


def epoch_rate_callback(peak, epochs, warmup_epochs=1, floor=0.02, seconds=0.0):
    """A Keras callback that assigns ``warmup_cosine_rate`` to the
    optimizer's ``learning_rate`` (a float rate, not a schedule) at the start
    of each epoch and logs it as ``learning_rate``.

    With ``seconds`` > 0 the decay's progress is the training time so far
    (plus half a typical epoch: the rate is meant for the epoch's middle)
    over ``seconds``; the first epoch's time, which includes compilation, is
    left out of the typical epoch once others are measured.
    """
    import keras

    class EpochRate(keras.callbacks.Callback):
        def on_train_begin(self, logs=None):
            self.start, self.durations = time.monotonic(), []

        def on_epoch_begin(self, epoch, logs=None):
            self.epoch_start = time.monotonic()
            progress = None
            if seconds > 0:
                typical = self.durations[1:] or self.durations
                half = 0.5 * float(np.mean(typical)) if typical else 0.0
                progress = (self.epoch_start - self.start + half) / seconds
            rate = warmup_cosine_rate(peak, epoch, epochs, warmup_epochs, floor, progress)
            self.model.optimizer.learning_rate.assign(rate)

        def on_epoch_end(self, epoch, logs=None):
            self.durations.append(time.monotonic() - self.epoch_start)
            if logs is not None:
                rate = self.model.optimizer.learning_rate
                logs["learning_rate"] = float(keras.ops.convert_to_numpy(rate))

    return EpochRate()
