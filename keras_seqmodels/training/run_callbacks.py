"""The training run's callbacks: the best checkpoint, the clock and plain progress lines."""

import json
import os
import sys
import time

import keras

from keras_seqmodels.training.fault_tolerance import AtomicModelCheckpoint, atomic_write


class BestCheckpoint(AtomicModelCheckpoint):
    """``AtomicModelCheckpoint(save_best_only=True)`` that survives a restart.

    The best value so far and its epoch are kept in ``best.json`` beside the
    checkpoint (written atomically after the model), so a resumed run only
    replaces the checkpoint with a better one.
    """

    def __init__(self, filepath, monitor, mode):
        super().__init__(filepath, monitor=monitor, mode=mode, save_best_only=True)
        self.record_path = os.path.join(os.path.dirname(os.path.abspath(filepath)), "best.json")
        record = read_record(self.record_path)
        if record is not None and os.path.isfile(filepath):
            self.best = record["value"]

    def on_epoch_end(self, epoch, logs=None):
        before = self.best
        super().on_epoch_end(epoch, logs)
        if self.best is not before:
            record = {
                "monitor": self.monitor,
                "mode": self.mode,
                "value": float(self.best),
                "epoch": epoch + 1,
            }

            def write(path):
                with open(path, "w", encoding="utf-8") as f:
                    json.dump(record, f)

            atomic_write(self.record_path, write)


def read_record(path):
    """``best.json`` as a dict, or ``None`` where there is none."""
    if not os.path.isfile(path):
        return None
    with open(path, encoding="utf-8") as f:
        return json.load(f)


class Clock(keras.callbacks.Callback):
    """Adds ``seconds`` (the epoch's wall time) to the logs and stops
    training after ``budget`` seconds of this process (0: never)."""

    def __init__(self, budget=0.0):
        super().__init__()
        self.budget = float(budget)
        self.start = time.monotonic()

    def on_epoch_begin(self, epoch, logs=None):
        self.epoch_start = time.monotonic()

    def on_train_batch_end(self, batch, logs=None):
        if self.budget and time.monotonic() - self.start > self.budget:
            self.model.stop_training = True

    def on_epoch_end(self, epoch, logs=None):
        if logs is not None:
            logs["seconds"] = time.monotonic() - self.epoch_start


class ProgressLines(keras.callbacks.Callback):
    """A plain line every ``interval`` seconds within an epoch, for output
    that goes to a file or pipe (where Keras's ``verbose=2`` is silent until
    the epoch ends, and ``verbose=1`` writes a bar redrawn with carriage
    returns): ``epoch 1: step 120/500, loss 2.3104, 31 s``."""

    INTERVAL = 30.0  # seconds, when ``interval`` is not given

    def __init__(self, interval=None, stream=None):
        super().__init__()
        self.interval = float(self.INTERVAL if interval is None else interval)
        self.stream = stream

    def on_epoch_begin(self, epoch, logs=None):
        self.epoch = epoch + 1
        self.epoch_start = self.last = time.monotonic()

    def on_train_batch_end(self, batch, logs=None):
        now = time.monotonic()
        if now - self.last < self.interval:
            return
        self.last = now
        steps = self.params.get("steps") if self.params else None
        step = f"{batch + 1}/{steps}" if steps else f"{batch + 1}"
        loss = (logs or {}).get("loss")
        shown = f", loss {float(loss):.4f}" if loss is not None else ""
        stream = self.stream or sys.stdout
        print(
            f"epoch {self.epoch}: step {step}{shown}, {now - self.epoch_start:.0f} s",
            file=stream,
            flush=True,
        )
