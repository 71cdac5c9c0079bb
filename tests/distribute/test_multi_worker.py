"""MultiWorkerMirroredStrategy with 2 worker processes on 127.0.0.1."""

import json
import os
import socket
import subprocess
import sys
import time

import numpy as np
import pytest

pytestmark = [pytest.mark.tf_only, pytest.mark.slow]

HERE = os.path.dirname(os.path.abspath(__file__))
TIMEOUT = 300


def free_ports(count):
    sockets = []
    try:
        for _ in range(count):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind(("127.0.0.1", 0))
            sockets.append(s)
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


@pytest.fixture(scope="module")
def cluster_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("multi_worker")
    ports = free_ports(2)
    workers = [f"127.0.0.1:{p}" for p in ports]
    procs = []
    logs = []
    try:
        for index in range(2):
            config = {
                "cluster": {"worker": workers},
                "task": {"type": "worker", "index": index},
            }
            env = dict(
                os.environ,
                TF_CONFIG=json.dumps(config),
                TF_CPP_MIN_LOG_LEVEL="3",
                KERAS_BACKEND="tensorflow",
            )
            log = open(out / f"worker{index}.log", "w")
            logs.append(log)
            procs.append(
                subprocess.Popen(
                    [
                        sys.executable,
                        os.path.join(HERE, "multi_worker_run.py"),
                        str(out),
                    ],
                    env=env,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                )
            )
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
    for index, proc in enumerate(procs):
        text = (out / f"worker{index}.log").read_text()
        assert proc.returncode == 0, f"worker {index} failed:\n{text[-4000:]}"
    results = []
    for index in range(2):
        with np.load(out / f"worker{index}.npz") as data:
            results.append({k: data[k] for k in data.files})
    return out, results


def test_two_workers_two_replicas(cluster_run):
    _, (w0, w1) = cluster_run
    assert w0["replicas"] == 2 and w1["replicas"] == 2
    assert bool(w0["is_chief"]) and not bool(w1["is_chief"])


def test_workers_end_with_identical_weights(cluster_run):
    _, (w0, w1) = cluster_run
    names = sorted(k for k in w0 if k.startswith("weight"))
    assert len(names) == 5
    for name in names:
        np.testing.assert_array_equal(w0[name], w1[name])
    # Training moved the weights, so identical weights are a real agreement.
    moved = sum(
        float(np.abs(w0[f"weight{i}"] - w0[f"initial{i}"]).sum()) for i in range(len(names))
    )
    assert moved > 1e-3
    np.testing.assert_allclose(w0["loss"], w1["loss"], rtol=1e-6)
    assert len(w0["loss"]) == 2


def test_chief_checkpoint_restores_on_one_device(cluster_run):
    import keras

    import keras_seqmodels  # noqa: F401  (registers the layers)

    out, (w0, _) = cluster_run
    assert (out / "model.keras").exists()
    # The other worker wrote its copy elsewhere, not over the chief's.
    assert (out / ".worker1" / "model.keras").exists()
    model = keras.saving.load_model(out / "model.keras")
    for i, w in enumerate(model.get_weights()):
        np.testing.assert_array_equal(w, w0[f"weight{i}"])
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 6, 3)).astype("float32")
    np.testing.assert_allclose(
        np.asarray(model.predict(x[:4], verbose=0)), w0["prediction"], atol=1e-6
    )
