"""A short training run that the fault tests kill and restart (run as a script).

    python fault_child.py --work DIR [--kill-at-step N] [--kill-in-backup N]
        [--kill-in-plain-save] [--kill-in-atomic-save]

Trains a small LSTM tagger-like model with Adam and input dropout on fixed
data (``shuffle=False``) with ``AtomicBackupAndRestore``. Faults are injected
from inside the process with SIGKILL (no clean-up runs, as with the OOM
killer or a pre-empted machine):

- ``--kill-at-step N``: at the end of the N-th training batch of this process;
- ``--kill-in-backup N``: in the middle of writing this process's N-th backup;
- ``--kill-in-plain-save``: after training, in the middle of overwriting a
  good ``plain.keras`` with ``model.save`` (the control: Keras writes in place);
- ``--kill-in-atomic-save``: after training, in the middle of overwriting a
  good ``atomic.keras`` with ``atomic_save``.

"In the middle of writing" is the third call of Keras's ``_save_state``, when
the target (or its temporary) already holds part of the archive. Prints JSON
lines: ``restored`` (epoch), ``epoch_end`` (epoch), ``done``.
"""

import argparse
import json
import os
import signal
import sys

import keras
import numpy as np
from keras.src.saving import saving_lib

import keras_seqmodels as ks
from keras_seqmodels.training import fault_tolerance

EPOCHS = 4
SEED = 1234


def emit(**event):
    print(json.dumps(event), flush=True)


def die():
    sys.stdout.flush()
    os.kill(os.getpid(), signal.SIGKILL)


class SaveKiller:
    """Kills the process inside a save while ``armed``."""

    def __init__(self):
        self.armed = False
        self.calls = 0
        original = saving_lib._save_state

        def patched(*args, **kwargs):
            if self.armed:
                self.calls += 1
                if self.calls == 3:
                    die()
            return original(*args, **kwargs)

        saving_lib._save_state = patched


def build_model():
    keras.utils.set_random_seed(SEED)
    inputs = keras.Input((10, 4))
    h = ks.layers.Recurrent(ks.cells.LSTMCell(8, dropout=0.25, seed=SEED), return_sequences=True)(
        inputs
    )
    outputs = keras.layers.Dense(3)(h)
    model = keras.Model(inputs, outputs)
    model.compile(
        optimizer=keras.optimizers.Adam(0.01),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
    )
    return model


def data():
    rng = np.random.default_rng(SEED)
    x = rng.standard_normal((64, 10, 4)).astype("float32")
    y = (x.sum(-1) > 0).astype("int32") + (x[..., 0] > 1).astype("int32")
    return x, y


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--work", required=True)
    parser.add_argument("--kill-at-step", type=int)
    parser.add_argument("--kill-in-backup", type=int)
    parser.add_argument("--kill-in-plain-save", action="store_true")
    parser.add_argument("--kill-in-atomic-save", action="store_true")
    args = parser.parse_args()
    if keras.backend.backend() == "tensorflow":
        import tensorflow as tf

        tf.config.experimental.enable_op_determinism()
    killer = SaveKiller()
    model = build_model()
    x, y = data()
    backup = fault_tolerance.AtomicBackupAndRestore(os.path.join(args.work, "backup"))
    original_save = backup._save_model
    saves = [0]

    def counted_save():
        saves[0] += 1
        killer.armed = saves[0] == args.kill_in_backup
        original_save()
        killer.armed = False

    backup._save_model = counted_save
    steps = [0]

    class Faults(keras.callbacks.Callback):
        def on_epoch_begin(self, epoch, logs=None):
            # After the backup callback's on_train_begin has restored.
            if not hasattr(self, "reported"):
                self.reported = True
                emit(event="restored", epoch=backup.restored_epoch)

        def on_train_batch_end(self, batch, logs=None):
            steps[0] += 1
            if steps[0] == args.kill_at_step:
                die()

        def on_epoch_end(self, epoch, logs=None):
            emit(event="epoch_end", epoch=epoch + 1)

    model.fit(
        x,
        y,
        batch_size=8,
        epochs=EPOCHS,
        shuffle=False,
        verbose=0,
        callbacks=[Faults(), backup],
    )
    np.savez(
        os.path.join(args.work, "final.npz"),
        *[np.asarray(w) for w in model.get_weights()],
    )
    emit(event="done")
    if args.kill_in_plain_save:
        plain = os.path.join(args.work, "plain.keras")
        model.save(plain)
        killer.armed = True
        model.save(plain)
    if args.kill_in_atomic_save:
        atomic = os.path.join(args.work, "atomic.keras")
        fault_tolerance.atomic_save(model, atomic)
        for w in model.trainable_weights:
            w.assign(w * 0.0)
        killer.armed = True
        fault_tolerance.atomic_save(model, atomic)


if __name__ == "__main__":
    main()
