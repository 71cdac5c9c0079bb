"""Training examples/s on 1 vs 2 replicas, and serving latency of a SavedModel.

Training: the same LSTM model (``Recurrent(LSTMCell)``, Dense head) trained
with ``model.fit`` under the default strategy (1 device) and under
``MirroredStrategy`` over 2 logical CPU devices, same global batch. The
logical devices share this machine's cores, so the ratio measures what
mirroring costs (splitting, all-reduce), not a speed-up from more hardware.
Timings are interleaved (1, 2, 1, 2, ...) and the median is reported.

Serving: a SavedModel is loaded in a clean process that imports only
TensorFlow (``keras_seqmodels.testing.run_in_clean_process``) and its
``serving_default`` signature is called one request at a time at batch 1 and
batch 32; p50/p99 of the per-request latency are reported. Without
``--saved-model`` a small float-sequence LSTM model is exported and timed.

    python benchmarks/distributed_throughput.py --out benchmarks/results/distributed.json
    python benchmarks/distributed_throughput.py --skip-training \\
        --zoo-model multi30k-en-de --string-input "A man is riding a bicycle."
"""

import argparse
import json
import os
import platform
import sys
import tempfile
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ["KERAS_BACKEND"] = "tensorflow"

import tensorflow as tf  # noqa: E402

_cpu = tf.config.list_physical_devices("CPU")[0]
tf.config.set_logical_device_configuration(_cpu, [tf.config.LogicalDeviceConfiguration()] * 2)

import keras  # noqa: E402
import numpy as np  # noqa: E402

import keras_seqmodels as ks  # noqa: E402
from keras_seqmodels.testing import run_in_clean_process  # noqa: E402
from keras_seqmodels.zoo.framework.distribution import strategy_scope  # noqa: E402


def build_lstm(time_steps, features, units):
    inputs = keras.Input((time_steps, features))
    hidden = ks.layers.Recurrent(ks.cells.LSTMCell(units))(inputs)
    return keras.Model(inputs, keras.layers.Dense(1)(hidden))


def training_run(strategy, args, x, y):
    with strategy_scope(strategy=strategy, batch_size=args.batch) as dist:
        keras.utils.set_random_seed(0)
        model = build_lstm(args.time, args.features, args.units)
        dist.compile(model, optimizer=keras.optimizers.SGD(0.01), loss="mse")
        data = dist.batch(tf.data.Dataset.from_tensor_slices((x, y))).repeat()
    # Warm up (tracing) with the same steps_per_epoch as the timed call.
    model.fit(data, epochs=1, steps_per_epoch=args.steps, verbose=0)

    def timed():
        start = time.perf_counter()
        model.fit(data, epochs=1, steps_per_epoch=args.steps, verbose=0)
        return args.steps * args.batch / (time.perf_counter() - start)

    return dist.num_replicas, timed


def measure_training(args):
    rng = np.random.default_rng(0)
    n = args.batch * args.steps
    x = rng.standard_normal((n, args.time, args.features)).astype("float32")
    y = rng.standard_normal((n, 1)).astype("float32")
    runs = {name: training_run(name, args, x, y) for name in ("default", "mirrored")}
    samples = {name: [] for name in runs}
    for _ in range(args.repeats):
        for name, (_, timed) in runs.items():
            samples[name].append(timed())
    result = {}
    for name, (replicas, _) in runs.items():
        result[name] = dict(
            replicas=replicas,
            examples_per_s=float(np.median(samples[name])),
            samples=[round(s, 1) for s in samples[name]],
        )
    result["ratio_2_over_1"] = (
        result["mirrored"]["examples_per_s"] / result["default"]["examples_per_s"]
    )
    return result


def export_small_model(path, args):
    keras.utils.set_random_seed(0)
    model = build_lstm(args.time, args.features, args.units)
    model.export(path, format="tf_saved_model", verbose=False)
    return {"kind": "float sequences", "model": "Recurrent(LSTMCell) + Dense"}


SERVING_SNIPPET = """
import time
import numpy as np
import tensorflow as tf

loaded = tf.saved_model.load(str(inputs["export_dir"]))
fn = loaded.signatures["serving_default"]
(name, spec), = fn.structured_input_signature[1].items()
requests = int(inputs["requests"])
for batch in (1, 32):
    if spec.dtype == tf.string:
        example = tf.constant([bytes(inputs["string"])] * batch)
    else:
        shape = [batch] + [int(d) for d in spec.shape[1:]]
        example = tf.random.stateless_normal(shape, seed=(0, 0), dtype=spec.dtype)
    for _ in range(5):
        fn(**{name: example})
    times = []
    for _ in range(requests):
        start = time.perf_counter()
        out = fn(**{name: example})
        for value in out.values():
            value.numpy()
        times.append(time.perf_counter() - start)
    outputs[f"batch{batch}"] = np.asarray(times)
"""


def measure_serving(export_dir, args):
    payload = {
        "export_dir": np.asarray(os.path.abspath(export_dir)),
        "requests": np.asarray(args.requests),
        "string": np.asarray((args.string_input or "").encode()),
    }
    times = run_in_clean_process(SERVING_SNIPPET, payload, timeout=1200)
    result = {}
    for key, values in times.items():
        ms = values * 1000.0
        result[key] = dict(
            p50_ms=float(np.percentile(ms, 50)),
            p99_ms=float(np.percentile(ms, 99)),
            requests=int(len(ms)),
        )
    return result


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=64, help="global batch")
    parser.add_argument("--time", type=int, default=50)
    parser.add_argument("--features", type=int, default=32)
    parser.add_argument("--units", type=int, default=128)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--saved-model", default=None, help="time this SavedModel")
    parser.add_argument(
        "--zoo-model",
        default=None,
        help="export this zoo model (keras_seqmodels.export) and time it",
    )
    parser.add_argument("--string-input", default=None)
    parser.add_argument("--skip-training", action="store_true")
    parser.add_argument("--out", default=None)
    args = parser.parse_args(argv)

    report = {
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, "
        f"{platform.python_version()}, TF {tf.__version__}, Keras {keras.__version__}",
        "command": " ".join([os.path.basename(sys.argv[0])] + (argv or sys.argv[1:])),
        "config": {k: v for k, v in vars(args).items() if k != "out"},
    }
    if not args.skip_training:
        report["training"] = measure_training(args)
        t = report["training"]
        print(
            f"training  1 replica : {t['default']['examples_per_s']:9.1f} examples/s\n"
            f"training  2 replicas: {t['mirrored']['examples_per_s']:9.1f} examples/s"
            f"  (ratio {t['ratio_2_over_1']:.2f})"
        )
    with tempfile.TemporaryDirectory() as tmp:
        export_dir = args.saved_model
        if args.zoo_model:
            from keras_seqmodels import zoo

            export_dir = zoo.load(args.zoo_model).export(os.path.join(tmp, "zoo"))
            report["served_model"] = {"zoo": args.zoo_model}
        elif export_dir is None:
            export_dir = os.path.join(tmp, "lstm")
            report["served_model"] = export_small_model(export_dir, args)
        else:
            report["served_model"] = {"path": export_dir}
        report["serving"] = measure_serving(export_dir, args)
    for key, value in report["serving"].items():
        print(
            f"serving {key:8s}: p50 {value['p50_ms']:8.2f} ms, "
            f"p99 {value['p99_ms']:8.2f} ms ({value['requests']} requests)"
        )
    if args.out:
        os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
        with open(args.out, "w") as f:
            json.dump(report, f, indent=2)
    return report


if __name__ == "__main__":
    main()
