"""Training that survives being killed: atomic saves and resumable backups.

Keras's ``model.save`` writes its target in place, and
``keras.callbacks.BackupAndRestore`` writes the weights and then, as a second
file, the epoch they belong to. A process killed inside either write (SIGKILL,
out-of-memory killer, pre-emption) leaves a truncated artifact where the good
one was, or weights that do not match the recorded epoch; the next run then
fails to load, or silently replays an epoch on top of weights that already
contain it. The helpers here write every file to a temporary name in the same
directory, flush it to disk and rename it over the target (``os.replace`` is
atomic on POSIX and Windows), so a reader only ever sees the old file or the
complete new one.

    >>> import keras_seqmodels as ks
    >>> callbacks = ks.training.fault_tolerant_callbacks(
    ...     "runs/tagger/backup", checkpoint_path="runs/tagger/best.keras"
    ... )  # doctest: +SKIP
    >>> model.fit(data, epochs=20, callbacks=callbacks)  # doctest: +SKIP

Restarting the same command after a kill resumes at the start of the epoch
that was interrupted, with the model and optimizer state of the end of the
epoch before. With ``shuffle=False`` (or a dataset whose order depends only on
its seed and the epoch) the final weights equal those of an uninterrupted run;
see ``tests/reliability/test_fault_tolerance.py``.
"""

import glob
import json
import os
import re
import shutil
import tempfile

import keras
import numpy as np

_TMP_PREFIX = ".tmp-"


def _fsync_path(path):
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_dir(directory):
    # Makes the rename itself durable; not supported on every platform.
    try:
        _fsync_path(directory)
    except OSError:
        pass


def _suffix(filepath):
    for suffix in (".weights.h5", ".weights.json", ".keras", ".h5", ".json"):
        if filepath.endswith(suffix):
            return suffix
    return os.path.splitext(filepath)[1]


def atomic_write(filepath, write):
    """Call ``write(tmp_path)``, then move the finished file onto ``filepath``.

    The temporary file lives in the target's directory (so the rename cannot
    cross file systems) and keeps the target's suffix (Keras picks the format
    from it). If ``write`` raises, the temporary file is removed and the
    target is untouched.

    Args:
        filepath: the final path.
        write: a callable that writes a complete file at the path it is given.

    Returns:
        ``filepath``.
    """
    filepath = os.fspath(filepath)
    directory = os.path.dirname(os.path.abspath(filepath))
    os.makedirs(directory, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=_TMP_PREFIX, suffix=_suffix(filepath))
    os.close(fd)
    try:
        write(tmp)
        _fsync_path(tmp)
        os.replace(tmp, filepath)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise
    _fsync_dir(directory)
    return filepath


def atomic_save(model, filepath, weights_only=None):
    """Save a model (``.keras``) or its weights (``.weights.h5``) atomically.

    Args:
        model: a built ``keras.Model``.
        filepath: a path ending in ``.keras`` or ``.weights.h5``.
        weights_only: save only the weights; default: decided by the suffix.

    Returns:
        ``filepath``.

    Raises:
        ValueError: the path has neither suffix.

    Example:

    >>> import os, tempfile, keras
    >>> model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2)])
    >>> path = atomic_save(model, os.path.join(tempfile.mkdtemp(), "m.keras"))
    >>> keras.saving.load_model(path).output_shape
    (None, 2)
    """
    filepath = os.fspath(filepath)
    if weights_only is None:
        weights_only = filepath.endswith(".weights.h5")
    expected = ".weights.h5" if weights_only else ".keras"
    if not filepath.endswith(expected):
        raise ValueError(
            f"atomic_save: `filepath` must end in {expected!r}"
            f"{' (weights_only=True)' if weights_only else ''}. "
            f"Received: filepath={filepath!r}"
        )
    if weights_only:
        return atomic_write(filepath, lambda p: model.save_weights(p, overwrite=True))
    return atomic_write(filepath, lambda p: model.save(p, overwrite=True))


def remove_stale_temporaries(directory):
    """Delete temporary files left by a process killed in the middle of a save."""
    removed = []
    for path in glob.glob(os.path.join(directory, _TMP_PREFIX + "*")):
        if os.path.isfile(path):
            os.remove(path)
            removed.append(path)
    return removed


class AtomicModelCheckpoint(keras.callbacks.Callback):
    """Save the model at the end of epochs, never leaving a partial file.

    A small counterpart of ``keras.callbacks.ModelCheckpoint`` whose writes go
    through ``atomic_save``.

    Args:
        filepath: ``.keras`` (or ``.weights.h5``) path; may contain
            ``{epoch}`` and log keys, e.g. ``"ckpt-{epoch:02d}.keras"``.
        monitor: the log key compared when ``save_best_only``.
        mode: ``"min"`` or ``"max"``: whether lower or higher is better.
        save_best_only: save only when ``monitor`` improves.
        weights_only: save only the weights (path must end in ``.weights.h5``).

    Example:

    >>> import os, tempfile
    >>> checkpoint = AtomicModelCheckpoint(
    ...     os.path.join(tempfile.mkdtemp(), "best.keras"), save_best_only=True)
    >>> # model.fit(..., validation_data=..., callbacks=[checkpoint])
    """

    def __init__(
        self,
        filepath,
        monitor="val_loss",
        mode="min",
        save_best_only=False,
        weights_only=False,
    ):
        super().__init__()
        if mode not in ("min", "max"):
            raise ValueError(
                f"AtomicModelCheckpoint: `mode` must be 'min' or 'max'. Received: mode={mode!r}"
            )
        suffix = ".weights.h5" if weights_only else ".keras"
        if not os.fspath(filepath).endswith(suffix):
            raise ValueError(
                f"AtomicModelCheckpoint: `filepath` must end in {suffix!r}. "
                f"Received: filepath={filepath!r}"
            )
        self.filepath = os.fspath(filepath)
        self.monitor = monitor
        self.mode = mode
        self.save_best_only = bool(save_best_only)
        self.weights_only = bool(weights_only)
        self.best = None

    def _improved(self, value):
        if self.best is None:
            return True
        return value < self.best if self.mode == "min" else value > self.best

    def on_epoch_end(self, epoch, logs=None):
        logs = logs or {}
        if self.save_best_only:
            value = logs.get(self.monitor)
            if value is None:
                raise ValueError(
                    f"AtomicModelCheckpoint: `monitor`={self.monitor!r} is not "
                    f"in the logs. Available: {sorted(logs)}"
                )
            if not self._improved(value):
                return
            self.best = value
        path = self.filepath.format(epoch=epoch + 1, **logs)
        atomic_save(self.model, path, weights_only=self.weights_only)


class AtomicBackupAndRestore(keras.callbacks.BackupAndRestore):
    """``keras.callbacks.BackupAndRestore`` whose backups survive a kill.

    Each backup is a pair ``state-<n>.weights.h5`` (model and optimizer
    variables) and ``state-<n>.json`` (the epoch it belongs to and the
    seed-generator states that ``save_weights`` leaves out), each written
    atomically, the JSON last: a backup counts only once its JSON exists, so
    a kill at any instant leaves the previous complete backup in charge. The
    last ``keep`` backups are kept; on restore, a backup that fails to load
    (e.g. a disk error) falls back to the one before.

    Args:
        backup_dir: a directory used by this run only.
        save_freq: ``"epoch"`` or an integer number of batches. Keras resumes
            at the start of the recorded epoch, so with an integer the batches
            of that epoch before the backup are trained on again; ``"epoch"``
            is the setting for which a resumed run equals an uninterrupted one.
        delete_checkpoint: remove the backups when ``fit`` completes.
        keep: number of complete backups kept (at least 1).

    Example (rerun the same command after a kill: ``fit`` resumes):

    >>> import os, tempfile, numpy as np, keras
    >>> model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])
    >>> model.compile("sgd", "mse")
    >>> backup = AtomicBackupAndRestore(os.path.join(tempfile.mkdtemp(), "backup"),
    ...                                 delete_checkpoint=False)
    >>> history = model.fit(np.ones((8, 3)), np.ones((8, 1)), epochs=2, verbose=0,
    ...                     callbacks=[backup])
    >>> sorted(os.listdir(backup.backup_dir))
    ['state-000000000.json', 'state-000000000.weights.h5',
     'state-000000001.json', 'state-000000001.weights.h5']
    """

    _STATE = re.compile(r"state-(\d+)\.json$")

    def __init__(self, backup_dir, save_freq="epoch", delete_checkpoint=True, keep=2):
        super().__init__(backup_dir, save_freq=save_freq, delete_checkpoint=delete_checkpoint)
        if isinstance(keep, bool) or not isinstance(keep, int) or keep < 1:
            raise ValueError(
                "AtomicBackupAndRestore: `keep` must be a positive integer. "
                f"Received: keep={keep!r}"
            )
        self.keep = keep
        self.restored_epoch = None

    def _states(self):
        """Complete backups, newest first, as ``(n, json_path)``."""
        found = []
        for path in glob.glob(os.path.join(self.backup_dir, "state-*.json")):
            match = self._STATE.search(os.path.basename(path))
            if match:
                found.append((int(match.group(1)), path))
        return sorted(found, reverse=True)

    def _weights_of(self, number):
        return os.path.join(self.backup_dir, f"state-{number:09d}.weights.h5")

    def _unsaved_variables(self):
        # Model variables that ``save_weights`` leaves out: the states of the
        # layers' seed generators (dropout masks). Without them a resumed run
        # draws other masks than an uninterrupted one.
        saved = {id(v) for v in self.model.weights}
        return [v for v in self.model.variables if id(v) not in saved]

    def on_train_begin(self, logs=None):
        if not os.path.isdir(self.backup_dir):
            return
        remove_stale_temporaries(self.backup_dir)
        if not self.model.built:
            raise ValueError(
                "AtomicBackupAndRestore: the model must be built before "
                "`fit()` so that a backup can be restored into it."
            )
        errors = []
        for number, meta_path in self._states():
            try:
                with open(meta_path, encoding="utf-8") as f:
                    meta = json.load(f)
                optimizer = self.model.optimizer
                if optimizer is not None and not optimizer.built:
                    optimizer.build(self.model.trainable_variables)
                self.model.load_weights(self._weights_of(number))
            except (OSError, ValueError, KeyError) as err:
                errors.append(f"{meta_path}: {err}")
                continue
            for var, value in zip(self._unsaved_variables(), meta.get("extra", [])):
                var.assign(np.asarray(value, dtype=var.dtype))
            self.model._initial_epoch = meta["epoch"]
            self._current_epoch = meta["epoch"]
            self.restored_epoch = meta["epoch"]
            return
        if errors:
            raise ValueError(
                "AtomicBackupAndRestore: no backup in "
                f"{self.backup_dir} could be restored: " + "; ".join(errors)
            )

    def _save_model(self):
        os.makedirs(self.backup_dir, exist_ok=True)
        states = self._states()
        number = states[0][0] + 1 if states else 0
        weights = self._weights_of(number)
        atomic_write(weights, lambda p: self.model.save_weights(p, overwrite=True))
        meta = {
            "epoch": self._current_epoch,
            "batch": self._last_batch_seen,
            "extra": [np.asarray(v.numpy()).tolist() for v in self._unsaved_variables()],
        }
        meta_path = os.path.join(self.backup_dir, f"state-{number:09d}.json")

        def write_meta(path):
            with open(path, "w", encoding="utf-8") as f:
                json.dump(meta, f)

        atomic_write(meta_path, write_meta)
        kept = {number} | {n for n, _ in states[: self.keep - 1]}
        for _, old_meta in states[self.keep - 1 :]:
            os.remove(old_meta)
        # Weights whose JSON is gone, including any orphaned by a kill here.
        for path in glob.glob(os.path.join(self.backup_dir, "state-*.weights.h5")):
            match = re.search(r"state-(\d+)\.weights\.h5$", path)
            if match and int(match.group(1)) not in kept:
                os.remove(path)

    def on_train_end(self, logs=None):
        if self.delete_checkpoint and os.path.isdir(self.backup_dir):
            shutil.rmtree(self.backup_dir)


def fault_tolerant_callbacks(backup_dir, checkpoint_path=None, monitor="val_loss", mode="min"):
    """The callbacks a recipe adds to ``fit`` to survive being killed.

    Args:
        backup_dir: directory for the resumable backups (one per run).
        checkpoint_path: optional ``.keras`` path where the best model so far
            is saved, atomically.
        monitor, mode: what "best" means for ``checkpoint_path``.

    Returns:
        A list of callbacks: ``AtomicBackupAndRestore`` and, with a
        ``checkpoint_path``, ``AtomicModelCheckpoint``.

    Example:

    >>> import os, tempfile
    >>> run = tempfile.mkdtemp()
    >>> callbacks = fault_tolerant_callbacks(os.path.join(run, "backup"),
    ...                                      os.path.join(run, "best.keras"))
    >>> [type(c).__name__ for c in callbacks]
    ['AtomicBackupAndRestore', 'AtomicModelCheckpoint']
    """
    callbacks = [AtomicBackupAndRestore(backup_dir)]
    if checkpoint_path is not None:
        callbacks.append(
            AtomicModelCheckpoint(checkpoint_path, monitor=monitor, mode=mode, save_best_only=True)
        )
    return callbacks
