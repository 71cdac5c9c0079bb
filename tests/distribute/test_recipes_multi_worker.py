"""``seqmodels train NAME --strategy multi-worker`` with two real workers on
127.0.0.1 (smoke size): both workers finish and end with the same weights.
One recipe of each kind of input pipeline runs here (``MULTI_WORKER``: text
pairs in length buckets, CoNLL-U sentences, trees, pixel sequences); the
other recipes take the same framework path (the strategy made before any
data is read, then ``training.loop.fit``), and each of them smoke-trains on
one worker in tests/zoo/test_framework.py. ``ptb-lstm`` (and
``ptb-lstm-small``, ``ptb-mingru``) trains on one replica only (its stateful
TBPTT carries each row's state from batch to batch): its workers stop with
that one-line error (one of them here: the three share the refusal)."""

import io
import json
import os
import subprocess
import sys
import time
import zipfile

import numpy as np
import pytest
from test_multi_worker import free_ports

from keras_seqmodels.zoo.models import specs

pytestmark = [pytest.mark.tf_only, pytest.mark.slow]

TIMEOUT = 420
# The smoke sizes of tests/zoo/test_framework.py, smaller where the model allows.
SMALL = {
    "multi30k-en-de": ["--embedding-dim", "8", "--encoder-units", "8", "--decoder-units", "8",
                       "--batch-size", "4", "--beam", "1"],
    "ptb-lstm": ["--units", "8", "--batch-size", "4", "--bptt", "5"],
    "ptb-lstm-small": ["--units", "8", "--batch-size", "4", "--bptt", "5"],
    "ptb-mingru": ["--units", "8", "--blocks", "1", "--batch-size", "4", "--bptt", "5"],
    "ud-ewt-upos": ["--units", "8", "--word-dim", "8", "--char-dim", "4", "--char-units", "4"],
    # The global batch splits evenly over the 2 workers (the default is 25).
    "sst-treelstm": ["--units", "8", "--embed-dim", "8", "--skipgram-s", "5",
                     "--batch-size", "24"],
    "babi-memn2n": ["--embed-dim", "8", "--ls-max-epochs", "1"],
    "pixel-mnist-permuted": ["--units", "8", "--blocks", "1"],
}  # fmt: skip


def _weights(path):
    """``(name, array)`` of every variable of a ``.keras`` file (the optimizer's too)."""
    import h5py

    arrays = []
    with zipfile.ZipFile(path) as archive, archive.open("model.weights.h5") as f:
        with h5py.File(io.BytesIO(f.read()), "r") as h5:
            h5.visititems(
                lambda name, obj: arrays.append((name, obj[()]))
                if isinstance(obj, h5py.Dataset)
                else None
            )
    return arrays


SINGLE_REPLICA = {"ptb-lstm", "ptb-lstm-small", "ptb-mingru"}


def _train_on_two_workers(name, out, expect_success=True):
    workers = [f"127.0.0.1:{port}" for port in free_ports(2)]
    procs, logs = [], []
    try:
        for index in range(2):
            config = {"cluster": {"worker": workers}, "task": {"type": "worker", "index": index}}
            env = dict(os.environ, TF_CONFIG=json.dumps(config), KERAS_BACKEND="tensorflow")
            env["TF_CPP_MIN_LOG_LEVEL"] = "3"
            argv = [sys.executable, "-m", "keras_seqmodels.cli.main", "train", name, "--smoke",
                    "--epochs", "1", "--strategy", "multi-worker", "--verbose", "0",
                    "--work-dir", str(out / f"worker{index}"), *SMALL.get(name, [])]  # fmt: skip
            log = open(out / f"worker{index}.log", "w")
            logs.append(log)
            procs.append(subprocess.Popen(argv, env=env, stdout=log, stderr=subprocess.STDOUT))
        deadline = time.monotonic() + TIMEOUT
        for proc in procs:
            proc.wait(timeout=max(1.0, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        pass
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        for log in logs:
            log.close()
    logs = [(out / f"worker{index}.log").read_text() for index in range(2)]
    if not expect_success:
        return [proc.returncode for proc in procs], logs
    for index, proc in enumerate(procs):
        assert proc.returncode == 0, f"{name}: worker {index} failed:\n{logs[index][-3000:]}"
    return [out / f"worker{index}" / "best.keras" for index in range(2)]


# One recipe of each kind of input pipeline; every two workers cost two fresh
# TensorFlow processes (12-26 s each run on the CI machine).
MULTI_WORKER = ("multi30k-en-de", "ud-ewt-upos", "sst-treelstm", "pixel-mnist-permuted")


def test_the_multi_worker_recipes_are_zoo_recipes_on_several_replicas():
    assert set(MULTI_WORKER) <= set(specs()) - SINGLE_REPLICA


@pytest.mark.parametrize("name", MULTI_WORKER)
def test_recipe_trains_on_two_workers_to_the_same_weights(name, tmp_path):
    first, second = _train_on_two_workers(name, tmp_path)
    a, b = _weights(first), _weights(second)
    assert a and [n for n, _ in a] == [n for n, _ in b]
    for (key, x), (_, y) in zip(a, b):
        np.testing.assert_array_equal(x, y, err_msg=f"{name}: {key}")


@pytest.mark.parametrize("name", ["ptb-lstm-small"])
def test_single_replica_recipe_refuses_two_workers_in_one_line(name, tmp_path):
    codes, logs = _train_on_two_workers(name, tmp_path, expect_success=False)
    assert codes == [1, 1], logs
    for log in logs:
        assert "stateful TBPTT carries each row's" in log, log
        assert "Use --strategy default" in log, log
        assert "Traceback" not in log
