"""Exports are written complete or not at all: a writer that fails, or a
process killed while writing, leaves the previous file (or nothing) at the
target, never a partial ``.onnx``, ``.tflite`` or SavedModel."""

import os
import signal
import subprocess
import sys
import textwrap
import time

import keras
import numpy as np
import onnx
import pytest

import keras_seqmodels as ks
from keras_seqmodels.export import atomic, to_onnx
from keras_seqmodels.export.generic import export_model


def small_model():
    inputs = keras.Input((None, 3), name="x")
    return keras.Model(inputs, ks.layers.Recurrent(ks.cells.GRUCell(4))(inputs))


def leftovers(folder):
    return sorted(n for n in os.listdir(folder) if atomic.PARTIAL in n)


def test_a_failing_onnx_write_leaves_the_previous_file(tmp_path, monkeypatch):
    target = tmp_path / "m.onnx"
    target.write_bytes(b"the previous export")
    real_save = onnx.save

    def half_then_fail(proto, path, *args, **kwargs):
        real_save(proto, path, *args, **kwargs)
        with open(path, "r+b") as f:
            f.truncate(os.path.getsize(path) // 2)
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(onnx, "save", half_then_fail)
    with pytest.raises(OSError, match="No space left"):
        to_onnx(small_model(), str(target))
    assert target.read_bytes() == b"the previous export"
    assert leftovers(tmp_path) == []
    monkeypatch.setattr(onnx, "save", real_save)
    to_onnx(small_model(), str(target))  # then a complete one replaces it
    onnx.checker.check_model(onnx.load(str(target)))
    assert leftovers(tmp_path) == []


@pytest.mark.tf_only
def test_a_failing_savedmodel_write_leaves_nothing(tmp_path, monkeypatch):
    target = tmp_path / "served"

    def partial_then_fail(self, path, **kwargs):
        os.makedirs(os.path.join(path, "variables"))
        with open(os.path.join(path, "saved_model.pb"), "wb") as f:
            f.write(b"\x08\x01")  # the start of a graph, then the failure
        raise RuntimeError("the tracing failed half-way")

    archive = type(keras.export.ExportArchive())  # the backend's class
    monkeypatch.setattr(archive, "write_out", partial_then_fail)
    with pytest.raises(RuntimeError, match="half-way"):
        export_model(small_model(), str(target))
    assert not target.exists() and leftovers(tmp_path) == []
    target.mkdir()  # an empty folder stays empty
    with pytest.raises(RuntimeError, match="half-way"):
        export_model(small_model(), str(target))
    assert target.is_dir() and os.listdir(target) == [] and leftovers(tmp_path) == []


_KILLED_WRITER = textwrap.dedent(
    """
    import os, sys, time
    import keras, onnx
    import keras_seqmodels as ks
    from keras_seqmodels.export import to_onnx

    target, ready = sys.argv[1], sys.argv[2]
    real_save = onnx.save

    def slow_save(proto, path, *args, **kwargs):
        real_save(proto, path, *args, **kwargs)
        with open(path, "r+b") as f:
            f.truncate(os.path.getsize(path) // 2)  # half written...
        open(ready, "w").close()
        time.sleep(600)  # ... when the process is killed

    onnx.save = slow_save
    inputs = keras.Input((None, 3), name="x")
    model = keras.Model(inputs, ks.layers.Recurrent(ks.cells.LSTMCell(8))(inputs))
    to_onnx(model, target)
    """
)


def test_a_killed_export_leaves_the_previous_file(tmp_path):
    target = tmp_path / "m.onnx"
    to_onnx(small_model(), str(target))
    previous = target.read_bytes()
    ready = tmp_path / "ready"
    process = subprocess.Popen(
        [sys.executable, "-c", _KILLED_WRITER, str(target), str(ready)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 300  # a watchdog: the import alone takes a while
        while not ready.exists():
            assert process.poll() is None, process.stderr.read()[-2000:]
            assert time.monotonic() < deadline, "the writer never started writing"
            time.sleep(0.05)
        os.kill(process.pid, signal.SIGKILL)
        process.wait(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert target.read_bytes() == previous  # the complete earlier export
    # Only a hidden partial file beside it, which is never the target.
    left = leftovers(tmp_path)
    assert len(left) == 1 and left[0].startswith(".m.onnx.")


def test_atomic_file_replaces_in_one_step(tmp_path):
    target = tmp_path / "m.tflite"
    atomic.write_bytes(str(target), b"first")
    atomic.write_bytes(str(target), b"second")
    assert target.read_bytes() == b"second" and leftovers(tmp_path) == []
    data = np.arange(4, dtype="float32").tobytes()
    with pytest.raises(ValueError):
        with atomic.atomic_file(str(target)) as partial:
            with open(partial, "wb") as f:
                f.write(data)
            raise ValueError("the check after writing failed")
    assert target.read_bytes() == b"second" and leftovers(tmp_path) == []
