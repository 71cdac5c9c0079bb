"""Batch-1 latency of the ``linear_rnn`` layers' exported files, on this CPU.

For each of the six layers of ``keras_seqmodels.linear_rnn`` (``MinGRU``,
``MinLSTM``, ``LRU``, ``RGLRU`` after a ``Dense`` input projection, as in
the Hawk block, ``HawkBlock``, ``SelectiveSSM``) and the package's LSTM
(``ks.layers.LSTM``, the peer), one model ``keras.Input((None, features))``
-> the layer with ``return_sequences=True`` (default 128 -> 256;
``SelectiveSSM``'s output width is its input width, state 16), written with
``keras_seqmodels.export.to_litert`` (float32, dynamic batch and length:
each scan blocks of unrolled steps around a ``WHILE`` loop, the LSTM one
fused ``UNIDIRECTIONAL_SEQUENCE_LSTM``) and ``to_onnx`` (a ``Scan`` node; the LSTM
an ``LSTM`` node), and timed at batch 1:

- ``sequence``: the whole sequence in one call, at each ``--lengths``
  (default 256 and 1,024; add 4,096 to see how the cost grows), in
  ai-edge-litert's interpreter (the input resized to the length), in
  onnxruntime (CPU provider), and in Keras
  (``model.predict(x, verbose=0)``, and ``model.predict_on_batch(x)``,
  without ``predict``'s per-call data set);
- ``stream``: one step per call, the streaming file of each layer (input
  ``(1, 1, features)`` and the states in, the output and the new states
  out, as docs/deploy.md builds it, with the whole-sequence model's
  weights), in both runtimes (LiteRT through its signature runner) and in
  Keras (``predict_on_batch`` of the step model).

Each timing: two warm-up calls, then calls until ``--budget`` seconds or
``--max-calls`` (at least 3); the median is reported (and the minimum).
Every file's outputs are checked against Keras's on the timed input
(largest absolute difference, in the results). Threads: ``--threads``
(default 1) for the LiteRT interpreter, onnxruntime's intra-op pool and
TensorFlow's intra-op pool, so a shared machine's other load falls less on
one runtime than another.

    python benchmarks/linear_rnn_export_latency.py   # the JSON in benchmarks/results/
    python benchmarks/linear_rnn_export_latency.py --lengths 16 --budget 0.2  # quick

The JSON records the command, machine, date, versions and the 1-minute load
average before and after the run.
"""

import argparse
import json
import os
import platform
import statistics
import sys
import tempfile
import time

from machine import cpu_name  # noqa: E402 (beside this script)

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("KERAS_BACKEND", "tensorflow")

LAYERS = ("MinGRU", "MinLSTM", "LRU", "RGLRU", "HawkBlock", "SelectiveSSM", "LSTM")
HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_OUT = os.path.join(HERE, "results", "linear_rnn_export_latency_cpu.json")


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", nargs="+", default=list(LAYERS), choices=LAYERS)
    parser.add_argument("--lengths", nargs="+", type=int, default=[256, 1024])
    parser.add_argument("--features", type=int, default=128)
    parser.add_argument("--units", type=int, default=256)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--budget", type=float, default=2.0, help="seconds per timing")
    parser.add_argument("--max-calls", type=int, default=200)
    parser.add_argument("--out", default=DEFAULT_OUT)
    return parser.parse_args(argv)


def _recurrent(name, units, **kwargs):
    import keras_seqmodels as ks

    if name == "LSTM":
        return ks.layers.LSTM(units, **kwargs)
    if name == "SelectiveSSM":
        return ks.linear_rnn.SelectiveSSM(16, **kwargs)
    return getattr(ks.linear_rnn, name)(units, **kwargs)


def build_models(name, features, units):
    """The whole-sequence model and its one-step streaming model (same
    weights), and the streaming model's state shapes."""
    import keras

    def body(x, **kwargs):
        if name == "RGLRU":  # elementwise: a Dense projection to its width first
            x = keras.layers.Dense(units)(x)
        layer = _recurrent(name, units, return_sequences=True, **kwargs)
        return layer, x

    x = keras.Input((None, features), name="x")
    layer, h = body(x)
    whole = keras.Model(x, layer(h))
    x_t = keras.Input((1, features), batch_size=1, name="x_t")
    step, h_t = body(x_t, return_state=True)
    if name == "LSTM":
        shapes = [(units,), (units,)]
    else:
        step.build((None, None, h_t.shape[-1]))
        shapes = step.state_shapes()
    states = [keras.Input(s, batch_size=1, name=f"state_{i}") for i, s in enumerate(shapes)]
    out, *new_states = step(h_t, initial_state=states)
    stream = keras.Model([x_t, *states], [out, *new_states])
    stream.set_weights(whole.get_weights())
    return whole, stream, shapes


def timed(fn, budget, max_calls):
    for _ in range(2):
        fn()
    times = []
    start = time.perf_counter()
    while len(times) < 3 or (time.perf_counter() - start < budget and len(times) < max_calls):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return {
        "median_ms": 1e3 * statistics.median(times),
        "min_ms": 1e3 * min(times),
        "calls": len(times),
    }


def _litert_sequence(path, x, threads):
    from ai_edge_litert.interpreter import Interpreter

    interpreter = Interpreter(model_path=path, num_threads=threads)
    detail = interpreter.get_input_details()[0]
    interpreter.resize_tensor_input(detail["index"], x.shape)
    interpreter.allocate_tensors()
    out_index = interpreter.get_output_details()[0]["index"]

    def call():
        interpreter.set_tensor(detail["index"], x)
        interpreter.invoke()
        return interpreter.get_tensor(out_index)

    return call


def _litert_stream(path, feeds, threads):
    from ai_edge_litert.interpreter import Interpreter

    interpreter = Interpreter(model_path=path, num_threads=threads)
    runner = interpreter.get_signature_runner()
    names = list(interpreter.get_signature_list()["serving_default"]["inputs"])
    args = {n: feeds[n] for n in names}

    def call():
        result = runner(**args)
        return result[min(result, key=lambda k: int(k.rsplit("_", 1)[-1]))]

    return call


def _onnx(path, feeds, threads):
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    session = ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])
    args = {i.name: feeds[i.name] for i in session.get_inputs()}

    def call():
        return session.run(None, args)[0]

    return call


def measure(name, args, workdir, rows):
    import numpy as np

    from keras_seqmodels import export

    whole, stream, shapes = build_models(name, args.features, args.units)
    paths = {}
    for kind, model in (("sequence", whole), ("stream", stream)):
        for fmt, writer in (("litert", export.to_litert), ("onnx", export.to_onnx)):
            path = os.path.join(workdir, f"{name}_{kind}.{'tflite' if fmt == 'litert' else 'onnx'}")
            t0 = time.perf_counter()
            writer(model, path)
            paths[kind, fmt] = path
            print(f"  {name} {kind} {fmt}: written in {time.perf_counter() - t0:.1f} s, "
                  f"{os.path.getsize(path) / 1e6:.2f} MB", flush=True)  # fmt: skip
    rng = np.random.default_rng(0)

    def add(kind, length, runtime, fn, reference):
        result = timed(fn, args.budget, args.max_calls)
        got = np.asarray(fn())
        result["max_abs_diff_vs_keras"] = float(np.abs(got - reference).max())
        row = dict(layer=name, kind=kind, length=length, runtime=runtime, **result)
        if runtime in ("litert", "onnxruntime"):
            fmt = "litert" if runtime == "litert" else "onnx"
            row["file_mb"] = round(os.path.getsize(paths[kind, fmt]) / 1e6, 3)
        rows.append(row)
        print(f"  {name:12s} {kind:8s} T={length:5d} {runtime:22s} "
              f"{result['median_ms']:9.3f} ms (min {result['min_ms']:.3f}, "
              f"{result['calls']} calls, diff {result['max_abs_diff_vs_keras']:.1e})",
              flush=True)  # fmt: skip

    for length in args.lengths:
        x = rng.standard_normal((1, length, args.features)).astype("float32")
        reference = np.asarray(whole.predict_on_batch(x))
        add("sequence", length, "keras_predict",
            lambda x=x: whole.predict(x, verbose=0), reference)  # fmt: skip
        add("sequence", length, "keras_predict_on_batch",
            lambda x=x: whole.predict_on_batch(x), reference)  # fmt: skip
        add("sequence", length, "litert",
            _litert_sequence(paths["sequence", "litert"], x, args.threads), reference)  # fmt: skip
        add("sequence", length, "onnxruntime",
            _onnx(paths["sequence", "onnx"], {"x": x}, args.threads), reference)  # fmt: skip
    feeds = {"x_t": rng.standard_normal((1, 1, args.features)).astype("float32")}
    for i, s in enumerate(shapes):
        feeds[f"state_{i}"] = (0.1 * rng.standard_normal((1,) + tuple(s))).astype("float32")
    ordered = [feeds["x_t"]] + [feeds[f"state_{i}"] for i in range(len(shapes))]
    reference = np.asarray(stream.predict_on_batch(ordered)[0])
    add("stream", 1, "keras_predict_on_batch",
        lambda: stream.predict_on_batch(ordered)[0], reference)  # fmt: skip
    add("stream", 1, "litert", _litert_stream(paths["stream", "litert"], feeds, args.threads),
        reference)  # fmt: skip
    add("stream", 1, "onnxruntime", _onnx(paths["stream", "onnx"], feeds, args.threads),
        reference)  # fmt: skip


def main(argv=None):
    args = parse_args(argv)
    import tensorflow as tf

    tf.config.threading.set_intra_op_parallelism_threads(args.threads)
    tf.config.threading.set_inter_op_parallelism_threads(1)
    import ai_edge_litert
    import keras
    import onnxruntime

    load_before = os.getloadavg()[0]
    started = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())
    rows = []
    with tempfile.TemporaryDirectory() as workdir:
        for name in args.layers:
            print(f"{name}:", flush=True)
            measure(name, args, workdir, rows)
    record = {
        "command": "python " + " ".join([os.path.relpath(sys.argv[0])] + sys.argv[1:]),
        "date_utc": started,
        "finished_utc": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
        "machine": {
            "cpu": cpu_name(),
            "cores": os.cpu_count(),
            "platform": platform.platform(),
            "python": platform.python_version(),
        },
        "load_average_1min": {"before": load_before, "after": os.getloadavg()[0]},
        "versions": {
            "tensorflow": tf.__version__,
            "keras": keras.__version__,
            "onnxruntime": onnxruntime.__version__,
            "ai_edge_litert": getattr(ai_edge_litert, "__version__", _dist("ai-edge-litert")),
        },
        "config": {
            "batch": 1,
            "features": args.features,
            "units": args.units,
            "lengths": args.lengths,
            "threads": args.threads,
            "budget_s": args.budget,
            "max_calls": args.max_calls,
        },
        "rows": rows,
    }
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(record, f, indent=1)
    print(f"wrote {args.out}; load average (1 min) {load_before:.2f} -> {os.getloadavg()[0]:.2f}")


def _dist(name):
    from importlib import metadata

    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


if __name__ == "__main__":
    main()
