"""Faults during training: SIGKILL mid-epoch and mid-save, then restart.

The child process (``fault_child.py``) trains a small LSTM model with Adam
and input dropout on fixed data with ``AtomicBackupAndRestore``. One run is
left alone; another is killed mid-epoch, restarted, killed again in the
middle of writing a backup, and restarted again. Its final weights must equal
the uninterrupted run's exactly (the same bits): a backup holds the model,
optimizer and dropout-seed state of the end of an epoch, and a resumed run
repeats the interrupted epoch from that state.
"""

import json
import os
import subprocess
import sys
import zipfile

import keras
import numpy as np
import pytest
from fuzz_record import record

from keras_seqmodels.training import fault_tolerance

CHILD = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fault_child.py")
STEPS_PER_EPOCH = 8  # 64 samples, batch 8


def run_child(work, *flags):
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    proc = subprocess.run(
        [sys.executable, CHILD, "--work", str(work), *flags],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    events = [json.loads(line) for line in proc.stdout.splitlines() if line[:1] == "{"]
    return proc.returncode, events, proc.stderr


def weights(work):
    with np.load(os.path.join(work, "final.npz")) as f:
        return [f[k] for k in sorted(f.files, key=lambda k: int(k.split("_")[1]))]


def epochs_ended(events):
    return [e["epoch"] for e in events if e["event"] == "epoch_end"]


def restored(events):
    return [e["epoch"] for e in events if e["event"] == "restored"][0]


@pytest.mark.slow
def test_killed_and_restarted_run_equals_uninterrupted_run(tmp_path):
    clean, killed = tmp_path / "clean", tmp_path / "killed"
    rc, events, err = run_child(clean, "--kill-in-plain-save")
    assert rc == -9, err  # the plain-save control kills itself at the end
    assert epochs_ended(events) == [1, 2, 3, 4] and restored(events) is None

    # Control: Keras's own save, killed midway, destroyed the good file that
    # was there (so the injected kill really lands inside a write).
    with pytest.raises(Exception):  # noqa: B017 (any load error will do)
        keras.saving.load_model(clean / "plain.keras", compile=False)
    record("faults injected", "kill in plain save: corrupt")

    # 1. SIGKILL in the middle of epoch 2 (its 5th batch).
    rc, events, err = run_child(killed, "--kill-at-step", str(STEPS_PER_EPOCH + 5))
    assert rc == -9, err
    assert epochs_ended(events) == [1] and restored(events) is None
    record("faults injected", "SIGKILL mid-epoch")

    # 2. Restart: resumes at epoch 2; SIGKILL inside its first backup write.
    rc, events, err = run_child(killed, "--kill-in-backup", "1")
    assert rc == -9, err
    assert restored(events) == 1 and epochs_ended(events) == [2]
    record("faults injected", "SIGKILL mid-backup")

    # 3. Restart: the half-written backup is ignored, epoch 1's is restored.
    rc, events, err = run_child(killed, "--kill-in-atomic-save")
    assert rc == -9, err
    assert restored(events) == 1 and epochs_ended(events) == [2, 3, 4]
    assert any(e["event"] == "done" for e in events)

    for a, b in zip(weights(clean), weights(killed), strict=True):
        np.testing.assert_array_equal(a, b)
    record("resumed runs", "weights equal uninterrupted")

    # The atomic save killed midway left the previous complete model in place.
    model = keras.saving.load_model(killed / "atomic.keras", compile=False)
    for a, b in zip(model.get_weights(), weights(killed), strict=True):
        np.testing.assert_array_equal(a, b)
    record("faults injected", "kill in atomic save: intact")


def tiny_model(value):
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2)])
    for w in model.weights:
        w.assign(np.full(w.shape, value, "float32"))
    return model


def test_atomic_save_failure_keeps_the_old_file_and_no_temporary(tmp_path):
    path = tmp_path / "model.keras"
    fault_tolerance.atomic_save(tiny_model(1.0), path)
    broken = tiny_model(2.0)

    def failing_save(*args, **kwargs):
        raise OSError("disk full (injected)")

    broken.save = failing_save
    with pytest.raises(OSError, match="disk full"):
        fault_tolerance.atomic_save(broken, path)
    loaded = keras.saving.load_model(path, compile=False)
    assert all(np.all(np.asarray(w) == 1.0) for w in loaded.get_weights())
    assert os.listdir(tmp_path) == ["model.keras"]
    record("faults injected", "exception in atomic save")


def test_stale_temporaries_and_half_backups_are_ignored_on_restore(tmp_path):
    backup_dir = tmp_path / "backup"
    backup_dir.mkdir()
    model = tiny_model(3.0)
    model.compile(optimizer="sgd", loss="mse")
    fault_tolerance.atomic_save(model, backup_dir / "state-000000004.weights.h5")
    (backup_dir / "state-000000004.json").write_text('{"epoch": 4, "batch": 0}')
    # What a kill leaves behind: a temporary, and newer weights with no JSON.
    (backup_dir / ".tmp-abc.weights.h5").write_bytes(b"\x89HDF\r\n")
    (backup_dir / "state-000000005.weights.h5").write_bytes(b"\x89HDF\r\n")
    fresh = tiny_model(0.0)
    fresh.compile(optimizer="sgd", loss="mse")
    callback = fault_tolerance.AtomicBackupAndRestore(str(backup_dir))
    callback.set_model(fresh)
    callback.on_train_begin()
    assert callback.restored_epoch == 4 and fresh._initial_epoch == 4
    assert all(np.all(np.asarray(w) == 3.0) for w in fresh.get_weights())
    assert not (backup_dir / ".tmp-abc.weights.h5").exists()
    record("bad files", "half-written backup ignored")


def test_corrupt_newest_backup_falls_back_to_the_previous_one(tmp_path):
    backup_dir = tmp_path / "backup"
    backup_dir.mkdir()
    model = tiny_model(5.0)
    model.compile(optimizer="sgd", loss="mse")
    fault_tolerance.atomic_save(model, backup_dir / "state-000000001.weights.h5")
    (backup_dir / "state-000000001.json").write_text('{"epoch": 1, "batch": 0}')
    (backup_dir / "state-000000002.weights.h5").write_bytes(b"not hdf5 at all")
    (backup_dir / "state-000000002.json").write_text('{"epoch": 2, "batch": 0}')
    fresh = tiny_model(0.0)
    fresh.compile(optimizer="sgd", loss="mse")
    callback = fault_tolerance.AtomicBackupAndRestore(str(backup_dir))
    callback.set_model(fresh)
    callback.on_train_begin()
    assert callback.restored_epoch == 1
    assert all(np.all(np.asarray(w) == 5.0) for w in fresh.get_weights())
    record("bad files", "corrupt backup: fell back")


def test_atomic_model_checkpoint_keeps_the_best(tmp_path):
    x = np.random.default_rng(0).standard_normal((16, 3)).astype("float32")
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])
    model.compile(optimizer=keras.optimizers.SGD(0.1), loss="mse")
    path = tmp_path / "best.keras"
    checkpoint = fault_tolerance.AtomicModelCheckpoint(
        str(path), monitor="loss", save_best_only=True
    )
    history = model.fit(x, x[:, :1], epochs=3, verbose=0, callbacks=[checkpoint])
    assert checkpoint.best == min(history.history["loss"])
    assert zipfile.is_zipfile(path)
    assert sorted(os.listdir(tmp_path)) == ["best.keras"]


def test_helpers_reject_bad_arguments(tmp_path):
    with pytest.raises(ValueError, match="atomic_save: `filepath` must end in '.keras'"):
        fault_tolerance.atomic_save(tiny_model(0.0), tmp_path / "model.h5")
    with pytest.raises(ValueError, match="`keep` must be a positive integer"):
        fault_tolerance.AtomicBackupAndRestore(str(tmp_path), keep=0)
    with pytest.raises(ValueError, match="`mode` must be 'min' or 'max'"):
        fault_tolerance.AtomicModelCheckpoint(str(tmp_path / "m.keras"), mode="best")
