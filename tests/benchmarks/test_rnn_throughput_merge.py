"""The recurrent benchmark's merging of repeated worker processes."""

import os

from scripts import ROOT, load_script


def load_benchmark():
    return load_script("benchmarks", "rnn_throughput")


def row(model, process, train, infer, backend="jax", cell="GRU"):
    return dict(
        backend=backend,
        config="b32_t100_128to256",
        cell=cell,
        model=model,
        train_tok_s=train,
        infer_tok_s=infer,
        train_tok_s_best=train,
        infer_tok_s_best=infer,
        process=process,
    )


def test_rows_of_several_processes_merge_to_medians_and_per_process_ratios():
    bench = load_benchmark()
    rows = []
    # Keras's own speed moves between processes; ours moves with it.
    for process, keras_train, ours_train in ((1, 40.0, 56.0), (2, 50.0, 60.0), (3, 45.0, 58.5)):
        rows.append(row("keras", process, keras_train, 100.0))
        rows.append(row("ours", process, ours_train, 110.0))
        rows.append(row("ours_generic", process, 30.0, 90.0))
    merged = {r["model"]: r for r in bench.merge(rows)}
    assert set(merged) == {"keras", "ours", "ours_generic"}
    assert merged["keras"]["train_tok_s"] == 45.0
    assert merged["ours"]["train_tok_s"] == 58.5
    assert merged["ours"]["processes"] == 3
    assert merged["ours"]["train_vs_keras"] == [56.0 / 40.0, 60.0 / 50.0, 58.5 / 45.0]
    assert merged["ours"]["infer_vs_keras"] == [1.1, 1.1, 1.1]
    line = [x for x in bench.table(list(merged.values())).splitlines() if "| GRU | jax |" in x][0]
    # The median of the per-process ratios (1.30), not 58.5 / 45.0 of the medians.
    assert "**1.30** (1.20-1.40)" in line
    assert "**1.10** (1.10-1.10)" in line
    # A merged result merges again (``--combine`` of a ``--processes`` file)
    # to the same table.
    again = bench.merge(list(merged.values()))
    assert bench.table(again) == bench.table(list(merged.values()))


def test_a_single_process_keeps_its_rows_and_the_plain_ratio():
    bench = load_benchmark()
    rows = [row("keras", 7, 40.0, 100.0), row("ours", 7, 52.0, 105.0)]
    assert bench.merge(rows) == rows
    line = [x for x in bench.table(rows).splitlines() if "| GRU | jax |" in x][0]
    assert "**1.30** |" in line and "**1.05** |" in line


def test_files_without_a_process_field_count_as_one_process_each(tmp_path):
    import json
    import subprocess
    import sys

    paths = []
    for i, (keras_train, ours_train) in enumerate(((40.0, 52.0), (50.0, 70.0))):
        rows = [row("keras", None, keras_train, 100.0), row("ours", None, ours_train, 100.0)]
        for r in rows:
            del r["process"]
        path = tmp_path / f"part{i}.json"
        path.write_text(json.dumps({"meta": {}, "results": rows}))
        paths.append(str(path))
    out = tmp_path / "all.json"
    script = os.path.join(ROOT, "benchmarks", "rnn_throughput.py")
    cmd = [sys.executable, script, "--combine", *paths, "--out", str(out)]
    printed = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    ours = [r for r in json.loads(out.read_text())["results"] if r["model"] == "ours"]
    assert len(ours) == 1 and ours[0]["processes"] == 2
    assert ours[0]["train_vs_keras"] == [1.3, 1.4]
    assert "**1.35** (1.30-1.40)" in printed


def test_a_worker_runs_on_the_backend_it_is_named_for(monkeypatch):
    bench = load_benchmark()
    monkeypatch.setenv("KERAS_BACKEND", "tensorflow")
    assert bench.keras_backend("jax") == "jax"
    assert bench.keras_backend("tensorflow") == "tensorflow"
    assert bench.keras_backend("torch", torch_keras=True) == "torch"
    assert bench.keras_backend("torch") == "torch"


def test_a_worker_named_jax_times_keras_on_jax(tmp_path):
    # With KERAS_BACKEND unset (Keras's default is TensorFlow) the worker
    # must still build its models on JAX.
    import json
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "KERAS_BACKEND"}
    env["KERAS_HOME"] = str(tmp_path)  # no keras.json naming another backend
    out = tmp_path / "jax.json"
    script = os.path.join(ROOT, "benchmarks", "rnn_throughput.py")
    cmd = [
        sys.executable,
        script,
        "--worker",
        "jax",
        "--configs",
        "b32_t100_128to256",
        "--cells",
        "Elman",
        "--repeats-scale",
        "0",
        "--out",
        str(out),
    ]
    subprocess.run(cmd, env=env, check=True, capture_output=True, timeout=600)
    result = json.loads(out.read_text())
    assert result["meta"]["jax"]["keras_backend"] == "jax"


JIT_CHECK = """
import sys
import numpy as np
import jax
sys.path.insert(0, sys.argv[1])
import rnn_throughput as bench
from keras_seqmodels.layers import backend_rnn, kernels

cfg = dict(batch=4, time=5, features=3, units=6)
rng = np.random.default_rng(0)
x = rng.standard_normal((4, 5, 3)).astype("float32")
keep = np.arange(5)[None, :] < np.array([5, 3, 1, 4])[:, None]
y = rng.standard_normal((4, 5, 6)).astype("float32")
sample = jax.device_put(([x, keep], y))
for cell in ("LSTM", "GRU"):
    runners = bench.jax_jit_models(cell, cfg, sample)
    names = {"ours", "ours_generic", "keras", "ours_fused_infer", "ours_hoist"}
    assert names <= set(runners), sorted(runners)
    assert ("ours_cudnn_infer" in runners) == (cell == "LSTM")
    for name, (train, infer) in runners.items():
        before = np.asarray(infer(sample[0]))
        assert before.shape == (4, 5, 6) and np.isfinite(before).all(), name
        if name.startswith("ours"):
            assert np.all(before[~keep] == 0), name  # masked steps output zeros
        train(*sample)
        after = np.asarray(infer(sample[0]))
        assert np.abs(after - before).max() > 0, name  # the SGD step changed the weights
assert not backend_rnn._JAX_REFERENCE
# As on a GPU (where the defaults differ): the variants' own switches must hold.
import keras
from keras_seqmodels.layers import fused_rnn
fused_rnn._jax_platform = lambda: "gpu"
wide = keras.KerasTensor((128, 50, 3))
def fused(layer, training=False):
    return kernels.plan_of(layer, wide, training, kernel="fused")
for cell, kind in (("LSTM", "lstm"), ("GRU", "gru_after")):
    layers = bench.jit_layers(cell, cfg)
    assert fused(layers["ours"]).hoist is True  # the GPU default hoists
    assert fused(layers["ours_fused_infer"]).kind == kind
    assert fused(layers["ours_fused_infer"], True).hoist is False
    assert fused(layers["ours_hoist"]).kind == kind
    assert fused(layers["ours_hoist"], True).hoist is True
    if cell == "LSTM":
        assert layers["ours_cudnn_infer"]._kernels[0].cudnn_inference is True
        assert layers["ours"]._kernels[0].cudnn_inference is False
print("ok")
"""


def test_jit_mode_times_compiled_layers_that_train(tmp_path):
    # --jit (JAX): each layer as one compiled function; the inference runs the
    # layer's forward and the training step updates the weights it reads.
    import subprocess
    import sys

    env = dict(os.environ, KERAS_BACKEND="jax", KERAS_HOME=str(tmp_path))
    env["PYTHONPATH"] = os.pathsep.join([ROOT, env.get("PYTHONPATH", "")])
    bench_dir = os.path.join(ROOT, "benchmarks")
    result = subprocess.run([sys.executable, "-c", JIT_CHECK, bench_dir], env=env,
                            capture_output=True, text=True, timeout=600)  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip().endswith("ok")


def test_jit_mode_is_for_the_jax_worker_only():
    import pytest

    bench = load_benchmark()
    with pytest.raises(SystemExit, match="--jit times JAX only"):
        bench.run_worker("tensorflow", [], [], 1.0, jit=True)
