"""Batch-1 latency of one LSTM model in each deployment format, on this CPU.

The model: ``keras.Input((length, features))`` -> ``Recurrent(LSTMCell(units))``
(last output), batch 1; default length 100, 128 -> 256. Rows:

- ``litert fused``: ``keras_seqmodels.export.to_litert`` (float32) at
  ``batch_size=1``, one ``UNIDIRECTIONAL_SEQUENCE_LSTM`` with a ``FILL`` of
  zeros writing each of its states before it (the default ``stateful=False``);
- ``litert keras LSTM loop`` (the anchor): the same weights in
  ``keras.layers.LSTM``, converted by TensorFlow's converter with builtin ops
  at a fixed batch of 1: a ``WHILE`` loop (Keras 3 has no fused path);
- ``litert fused stateful, reset`` / ``litert fused stateful, no reset``: the
  float32 file written with ``stateful=True`` (no ``FILL``; the states carry
  over between calls), timed with ``reset_all_variables`` before each call
  (what a stateless service has to do with it) and without (the kernel
  alone; each call then starts from the last one's state). Against
  ``litert fused`` they give the cost of the zero-state ``FILL`` ops, which
  a second table measures apart: those four float32 files timed in
  ``--fill-blocks`` alternating blocks of ``--fill-calls`` calls, each
  row's time as a ratio to the ``stateful, no reset`` row of the same block;
- ``litert fused dynamic batch``: the float32 file at ``batch_size=None``,
  run at batch 1 (its ``FILL`` shape comes from ``SHAPE``, ``SLICE`` and
  ``CONCATENATION`` ops at run time);
- ``litert fused float16`` / ``dynamic`` / ``int8``: ``to_litert`` with
  ``quantize=`` at ``batch_size=1`` (int8 calibrated on 64 random normal
  sequences); ``litert fused float16 dynamic batch``: ``"float16"`` at
  ``batch_size=None``, where the fused op keeps float32 weights;
- ``savedmodel``: ``keras_seqmodels.export.export`` (the package's SavedModel),
  its ``serving_default`` called from Python (TensorFlow with 2 threads);
- ``onnxruntime``: ``keras_seqmodels.export.to_onnx`` on onnxruntime's CPU
  provider (2 intra-op threads), where that exporter and onnxruntime exist.

LiteRT runs with ``ai_edge_litert``'s interpreter (``num_threads``, default 2;
its default XNNPACK delegate takes what it supports); the ``tf.lite`` rows run
the same two files in TensorFlow's own copy of the interpreter. A timed LiteRT
call is ``set_tensor`` once, then ``invoke`` (the files of ``stateful=False``
zero their states themselves); only the ``stateful, reset`` row calls
``reset_all_variables`` first. The rows are timed in turns, ``--rounds``
rounds of ``--calls`` calls each, so load from other processes falls on all
of them; a row's latency is the median over its rounds of the per-round
median. Also printed: file size, and the largest output difference from
``model.predict`` over 16 random sequences, each file called on them one
after another as it is timed (so the ``stateful, no reset`` row shows the
state carried over).

    python benchmarks/deploy_latency.py                 # the table
    python benchmarks/deploy_latency.py --length 20 --units 32 --rounds 2   # quick
    python benchmarks/deploy_latency.py --ptb   # also ptb-lstm-small's test perplexity
    python benchmarks/deploy_latency.py --ptb-only --ptb-model ptb-lstm   # only that, 2 x 650
    python benchmarks/deploy_latency.py --interpreter-options   # XNNPACK on/off, 1/2 threads
    python benchmarks/deploy_latency.py --interpreter-options --out FILE.json   # also as JSON

``--out``: every table's figures (and ``--ptb``'s), with the command, the start and end
dates, the machine (CPU model, cores), the package versions and the 1-minute load average
at the start, before and after the timed rounds and at the end, in one JSON file (the one
``tools/benchmark_plots.py`` builds BENCHMARKS.md's and docs/deploy.md's tables from).

``--ptb``: the ``--ptb-model`` zoo network (default ``ptb-lstm-small``) as LiteRT
float32, dynamic and int8 (calibrated on 256 windows of the training text), its
test-set perplexity through the LiteRT interpreter by the protocol of
``WordLanguageModel.perplexity`` (windows of 35 words from zero states, 32
windows per call), against the Keras model's, and the file sizes; data from
``--data-dir``. ``--ptb-only``: that table without the latency table.

``--interpreter-options``: the float32 fused file, the Keras loop and the
dynamic-range fused file again in both interpreters, with the default
delegate (XNNPACK) and without (``OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES``),
at 1 and 2 threads, in a second table (timed in the same turns).
"""

import argparse
import datetime
import json
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time

from machine import machine  # noqa: E402 (beside this script)

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("KERAS_BACKEND", "tensorflow")


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--length", type=int, default=100)
    parser.add_argument("--features", type=int, default=128)
    parser.add_argument("--units", type=int, default=256)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--calls", type=int, default=30)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--fill-blocks",
        type=int,
        default=60,
        help="blocks of the zero-state FILL comparison (after the main table's rounds)",
    )
    parser.add_argument("--fill-calls", type=int, default=10, help="calls per FILL block")
    parser.add_argument(
        "--interpreter-options",
        action="store_true",
        help="also the float32, dynamic-range and loop files with and without XNNPACK "
        "(the default delegate), at 1 and 2 threads, in both interpreters",
    )
    parser.add_argument("--ptb", action="store_true", help="also a PTB model's perplexity")
    parser.add_argument("--ptb-model", default="ptb-lstm-small", help="the zoo model for --ptb")
    parser.add_argument("--ptb-only", action="store_true", help="--ptb without the latency table")
    default_data = os.path.join(os.path.dirname(__file__), "..", "..", "shared", "data")
    parser.add_argument("--data-dir", default=default_data)
    parser.add_argument(
        "--out",
        help="also write the figures, the command, date, machine and 1-minute load "
        "averages to this JSON file",
    )
    return parser.parse_args(argv)



def _load():
    return round(os.getloadavg()[0], 2)


def _now():
    return datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")


def write_record(path, record):
    """``--out``: the figures with what made them (command, date, machine, load)."""
    with open(path, "w", encoding="utf-8") as f:
        json.dump(record, f, indent=2)
        f.write("\n")


def ptb_perplexity(args, window=35, batch=32):
    """Test perplexity of the zoo's ``--ptb-model`` as Keras and as LiteRT float32 / dynamic /
    int8."""
    import math

    import numpy as np
    from ai_edge_litert.interpreter import Interpreter

    from keras_seqmodels import export, zoo
    from keras_seqmodels.export.litert_export import run_litert
    from keras_seqmodels.language_model import text

    vocabulary = zoo.load(args.ptb_model).vocabulary  # the task: text is lower-cased
    network = zoo.load_model(args.ptb_model)
    folder = os.path.join(args.data_dir, "ptb")

    def windows(name):
        words = text.read_words(os.path.join(folder, f"ptb.{name}.txt"), True)
        ids = text.to_ids(words, vocabulary)
        n = len(ids) - 1
        count = -(-n // window)
        x = np.zeros((count * window,), "int32")
        y = np.zeros_like(x)
        x[:n], y[:n] = ids[:-1], ids[1:]
        real = np.arange(count * window) < n
        shape = (count, window)
        return x.reshape(shape), y.reshape(shape), real.reshape(shape), n

    x, y, real, n = windows("test")
    calibration = windows("train")[0][: 8 * batch]

    def perplexity(predict):
        total = 0.0
        for start in range(0, len(x), batch):
            rows = x[start : start + batch]
            padded = np.zeros((batch, window), "int32")
            padded[: len(rows)] = rows
            logits = np.asarray(predict(padded), "float64")[: len(rows)]
            logits = logits - logits.max(-1, keepdims=True)
            log_probs = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
            picked = np.take_along_axis(log_probs, y[start : start + batch][..., None], -1)
            total -= float(picked[..., 0][real[start : start + batch]].sum())
        return math.exp(total / n)

    results = [("Keras (model.predict_on_batch)", None, perplexity(network.predict_on_batch))]
    out = tempfile.mkdtemp(prefix="deploy_ptb_")
    try:
        for quantize in (None, "dynamic", "int8"):
            path = export.to_litert(
                network,
                os.path.join(out, f"ptb_{quantize}.tflite"),
                quantize=quantize,
                representative_data=calibration,
                batch_size=batch,
            )
            interpreter = Interpreter(model_path=path, num_threads=args.threads)
            value = perplexity(lambda ids, it=interpreter: run_litert(it, ids)[0])
            results.append((f"LiteRT {quantize or 'float32'}", os.path.getsize(path), value))
    finally:
        shutil.rmtree(out, ignore_errors=True)
    reference = results[1][2]
    print(f"\n{args.ptb_model} test perplexity ({n} predicted words; windows of {window})\n")
    print("| model | file KiB | x float file | perplexity | vs LiteRT float32 |")
    print("|---|---:|---:|---:|---:|")
    for name, size, value in results:
        kib = "-" if size is None else f"{size / 1024:.0f}"
        ratio = "-" if size is None else f"{size / results[1][1]:.2f}"
        print(f"| {name} | {kib} | {ratio} | {value:.2f} | {100 * (value / reference - 1):+.2f}% |")
    return {
        "model": args.ptb_model,
        "predicted_words": n,
        "window": window,
        "rows": [
            {"name": name, "file_bytes": size, "perplexity": value} for name, size, value in results
        ],
    }


def build_models(args):
    """The package's LSTM and Keras's LSTM with the same weights."""
    import keras

    import keras_seqmodels as ks

    keras.utils.set_random_seed(args.seed)
    shape = (args.length, args.features)
    ours = keras.Sequential(
        [keras.Input(shape, name="x"), ks.layers.Recurrent(ks.cells.LSTMCell(args.units))]
    )
    theirs = keras.Sequential([keras.Input(shape, batch_size=1), keras.layers.LSTM(args.units)])
    theirs.set_weights(ours.get_weights())  # same layout: kernel, recurrent, bias
    return ours, theirs


def keras_loop_tflite(model, folder):
    """Keras's LSTM through TensorFlow's converter, builtin ops, batch 1."""
    import tensorflow as tf

    function = tf.function(lambda x: model(x, training=False))
    spec = tf.TensorSpec(model.inputs[0].shape, tf.float32)
    module = tf.Module()
    module.f = function
    module.weights = [v.value for v in model.variables]  # tracked, so saved
    saved = os.path.join(folder, "keras_lstm_savedmodel")
    tf.saved_model.save(module, saved, signatures=function.get_concrete_function(spec))
    converter = tf.lite.TFLiteConverter.from_saved_model(saved)
    converter.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS]
    path = os.path.join(folder, "keras_lstm.tflite")
    with open(path, "wb") as f:
        f.write(converter.convert())
    return path


class LiteRTRow:
    """One ``.tflite`` file in one interpreter. ``reset``: call
    ``reset_all_variables`` before each call (only for a file whose fused
    states carry over between calls)."""

    def __init__(self, name, path, threads, runtime="ai_edge_litert", delegates=True, reset=False):
        from keras_seqmodels.export.litert_export import op_names, run_litert
        from keras_seqmodels.export.litert_runtime import stateful_ops

        if runtime == "ai_edge_litert":
            from ai_edge_litert.interpreter import Interpreter, OpResolverType
        else:  # TensorFlow's own copy of the interpreter
            import tensorflow as tf

            Interpreter = tf.lite.Interpreter
            OpResolverType = tf.lite.experimental.OpResolverType
        resolver = OpResolverType.AUTO  # XNNPACK takes what it supports
        if not delegates:
            resolver = OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES
        self.name, self.path = name, path
        self.interpreter = Interpreter(
            model_path=path, num_threads=threads, experimental_op_resolver_type=resolver
        )
        self._run = run_litert
        with open(path, "rb") as f:
            content = f.read()
        self.ops = op_names(content)
        if reset and not stateful_ops(content):
            raise ValueError(f"{name}: reset asked for a file without carried states")
        self.reset = reset
        self.size = os.path.getsize(path)
        self._call = None

    def predict(self, x):
        """One call as it is timed: the file's own answer, states as they are."""
        if self._call is None:
            self._call = self.prepare(x)
        interpreter = self.interpreter
        interpreter.set_tensor(self._input, x)
        self._call()
        return interpreter.get_tensor(self._output)

    def prepare(self, x):
        self._run(self.interpreter, x)  # sizes the tensors for this batch
        interpreter = self.interpreter
        signature = interpreter._get_full_signature_list()["serving_default"]
        ((self._input,), (self._output,)) = (
            signature["inputs"].values(),
            signature["outputs"].values(),
        )
        interpreter.set_tensor(self._input, x)
        if self.reset:

            def call():
                interpreter.reset_all_variables()
                interpreter.invoke()

            return call
        return interpreter.invoke


class SavedModelRow:
    def __init__(self, name, model, folder):
        import tensorflow as tf

        from keras_seqmodels import export

        self.name = name
        self.path = export.export(model, os.path.join(folder, "savedmodel"))
        self.function = tf.saved_model.load(self.path).signatures["serving_default"]
        self.ops = []
        self.size = sum(
            os.path.getsize(os.path.join(root, f))
            for root, _, files in os.walk(self.path)
            for f in files
        )

    def predict(self, x):
        (out,) = self.function(x=x).values()
        return out.numpy()

    def prepare(self, x):
        import tensorflow as tf

        tensor = tf.constant(x)
        return lambda: self.function(x=tensor)


class OnnxRow:
    def __init__(self, name, model, folder, threads):
        import onnxruntime

        from keras_seqmodels import export

        self.name = name
        self.path = export.to_onnx(model, os.path.join(folder, "model.onnx"))
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        self.session = onnxruntime.InferenceSession(
            self.path, options, providers=["CPUExecutionProvider"]
        )
        self.input = self.session.get_inputs()[0].name
        self.ops = []
        self.size = os.path.getsize(self.path)

    def predict(self, x):
        return self.session.run(None, {self.input: x})[0]

    def prepare(self, x):
        return lambda: self.session.run(None, {self.input: x})


OPTIONS = [
    (runtime, delegates, threads)
    for runtime in ("litert", "tf.lite")
    for delegates in (True, False)
    for threads in (1, 2)
]


def option_name(file, runtime, delegates, threads):
    return f"{runtime} {file}, {'XNNPACK' if delegates else 'no delegate'}, {threads} thr"


def option_rows(fused, loop, dynamic):
    """``--interpreter-options``: each file under each interpreter setting."""
    rows = []
    for runtime, delegates, threads in OPTIONS:
        for file, path in (("fused", fused), ("loop", loop), ("fused dynamic", dynamic)):
            name = option_name(file, runtime, delegates, threads)
            kind = "ai_edge_litert" if runtime == "litert" else "tf"
            rows.append(LiteRTRow(name, path, threads, runtime=kind, delegates=delegates))
    return rows


def print_options(seconds, anchor):
    print("\nInterpreter settings (same files): latency ms, and x the anchor\n")
    print(
        "| interpreter | default delegate | threads | fused float32 | Keras loop | "
        "fused dynamic | fused / loop, same setting |"
    )
    print("|---|---|---:|---:|---:|---:|---:|")
    for runtime, delegates, threads in OPTIONS:
        cells = []
        for file in ("fused", "loop", "fused dynamic"):
            latency = seconds[option_name(file, runtime, delegates, threads)]
            cells.append(f"{latency * 1e3:.2f} ({anchor / latency:.2f}x)")
        fused = seconds[option_name("fused", runtime, delegates, threads)]
        loop = seconds[option_name("loop", runtime, delegates, threads)]
        print(
            f"| {runtime} | {'XNNPACK' if delegates else 'none'} | {threads} | "
            f"{' | '.join(cells)} | {loop / fused:.2f}x |"
        )


def time_rows(rows, x, rounds, calls):
    """Per row: the median over rounds of the per-round median call time (s)."""
    calls_by_row = {row.name: row.prepare(x) for row in rows}
    for call in calls_by_row.values():
        for _ in range(3):  # warm up
            call()
    medians = {row.name: [] for row in rows}
    for _ in range(rounds):
        for row in rows:
            call = calls_by_row[row.name]
            times = []
            for _ in range(calls):
                start = time.perf_counter()
                call()
                times.append(time.perf_counter() - start)
            medians[row.name].append(statistics.median(times))
    return {name: statistics.median(values) for name, values in medians.items()}


FILL_ROWS = (
    "litert fused",
    "litert fused dynamic batch",
    "litert fused stateful, reset",
    "litert fused stateful, no reset",
)


def fill_cost(rows, x, blocks, calls):
    """The zero-state ``FILL`` ops' cost: the rows of ``FILL_ROWS`` timed in
    alternating blocks of ``calls`` calls (the order reversed every other
    block); per row, the median over blocks of its block median divided by
    the same block's ``stateful, no reset`` median (a paired ratio, so load
    that changes between blocks cancels), with the quartiles, and the median
    time (s)."""
    chosen = [row for row in rows if row.name in FILL_ROWS]
    calls_by_row = {row.name: row.prepare(x) for row in chosen}
    for call in calls_by_row.values():
        for _ in range(3):  # warm up
            call()
    medians = {row.name: [] for row in chosen}
    for block in range(blocks):
        for row in chosen if block % 2 == 0 else chosen[::-1]:
            call = calls_by_row[row.name]
            times = []
            for _ in range(calls):
                start = time.perf_counter()
                call()
                times.append(time.perf_counter() - start)
            medians[row.name].append(statistics.median(times))
    base = medians["litert fused stateful, no reset"]
    result = {}
    for name, values in medians.items():
        ratios = [a / b for a, b in zip(values, base)]
        quartiles = statistics.quantiles(ratios, n=4)
        result[name] = (statistics.median(values), statistics.median(ratios), quartiles)
    return result


def print_fill_cost(cost, blocks, calls):
    print(
        f"\nZero-state FILL ops (float32 fused file, batch 1): {blocks} alternating blocks "
        f"of {calls} calls; ratio = the row's block median / the same block's "
        "stateful, no reset median\n"
    )
    print("| file | ops before the LSTM | ms (median) | ratio, median (quartiles) |")
    print("|---|---|---:|---:|")
    before = {
        "litert fused": "FILL x 2 (constant shape)",
        "litert fused dynamic batch": "SHAPE, SLICE, CONCATENATION, FILL x 2",
        "litert fused stateful, reset": "- (reset_all_variables before invoke)",
        "litert fused stateful, no reset": "- (states carried over)",
    }
    for name in FILL_ROWS:
        seconds, ratio, (low, _, high) = cost[name]
        print(
            f"| {name} | {before[name]} | {seconds * 1e3:.3f} | "
            f"{ratio:.3f} ({low:.3f}-{high:.3f}) |"
        )


def main(argv=None):
    args = parse_args(argv)
    import tensorflow as tf

    tf.config.threading.set_intra_op_parallelism_threads(args.threads)
    tf.config.threading.set_inter_op_parallelism_threads(args.threads)
    import numpy as np

    from keras_seqmodels import export

    record = {
        "command": "python benchmarks/deploy_latency.py " + " ".join(sys.argv[1:]),
        "date_start": _now(),
        "machine": machine(),
        "load_average_1min": {"start": _load()},
        "versions": _versions(),
        "config": {
            k: getattr(args, k)
            for k in ("length", "features", "units", "threads", "rounds", "calls", "fill_blocks",
                      "fill_calls")
        },
    }  # fmt: skip
    if args.ptb or args.ptb_only:
        record["ptb"] = ptb_perplexity(args)
        record["load_average_1min"]["after_ptb"] = _load()
    if args.ptb_only:
        _finish(args, record)
        return
    ours, theirs = build_models(args)
    rng = np.random.default_rng(args.seed)
    shape = (args.length, args.features)
    calibration = rng.normal(size=(64,) + shape).astype("float32")
    check = rng.normal(size=(16,) + shape).astype("float32")
    x = check[:1]
    folder = tempfile.mkdtemp(prefix="deploy_latency_")
    try:
        fused = export.to_litert(ours, os.path.join(folder, "fused.tflite"), batch_size=1)
        stateful = export.to_litert(
            ours, os.path.join(folder, "stateful.tflite"), batch_size=1, stateful=True
        )
        unbatched = export.to_litert(ours, os.path.join(folder, "fused_dynamic_batch.tflite"))
        loop = keras_loop_tflite(theirs, folder)
        rows = [
            LiteRTRow("litert fused", fused, args.threads),
            LiteRTRow("litert keras LSTM loop", loop, args.threads),
            LiteRTRow("tf.lite fused", fused, args.threads, runtime="tf"),
            LiteRTRow("tf.lite keras LSTM loop", loop, args.threads, runtime="tf"),
            LiteRTRow("litert fused stateful, reset", stateful, args.threads, reset=True),
            LiteRTRow("litert fused stateful, no reset", stateful, args.threads),
            LiteRTRow("litert fused dynamic batch", unbatched, args.threads),
        ]
        for quantize, batch_size in (
            ("float16", 1),
            ("float16", None),
            ("dynamic", 1),
            ("int8", 1),
        ):
            suffix = "" if batch_size else " dynamic batch"
            path = export.to_litert(
                ours,
                os.path.join(folder, f"{quantize}{suffix.replace(' ', '_')}.tflite"),
                quantize=quantize,
                representative_data=calibration,
                batch_size=batch_size,
            )
            rows.append(LiteRTRow(f"litert fused {quantize}{suffix}", path, args.threads))
        options = []
        if args.interpreter_options:
            options = option_rows(fused, loop, os.path.join(folder, "dynamic.tflite"))
        rows.append(SavedModelRow("savedmodel (python call)", ours, folder))
        try:
            rows.append(OnnxRow("onnxruntime", ours, folder, args.threads))
        except (ImportError, AttributeError) as error:
            print(f"onnxruntime row skipped: {error}", file=sys.stderr)

        reference = ours.predict(check, verbose=0)
        errors = {}
        for row in rows:
            got = np.concatenate([row.predict(check[i : i + 1]) for i in range(len(check))])
            errors[row.name] = float(np.max(np.abs(got - reference)))
        record["load_average_1min"]["before_timing"] = _load()
        seconds = time_rows(rows + options, x, args.rounds, args.calls)
        record["load_average_1min"]["after_rounds"] = _load()
        cost = fill_cost(rows, x, args.fill_blocks, args.fill_calls)
    finally:
        shutil.rmtree(folder, ignore_errors=True)

    anchor = seconds["litert keras LSTM loop"]
    float_size = rows[0].size
    print(
        f"\nbatch 1 x {args.length} steps, {args.features} -> {args.units} LSTM; "
        f"{args.threads} threads; median of {args.rounds} rounds x {args.calls} calls\n"
    )
    print(
        "| format | ops (LiteRT main graph) | latency ms | sequences/s | "
        "x anchor | file KiB | x float file | max abs diff vs Keras |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for row in rows:
        ops = ", ".join(sorted(set(row.ops))) if row.ops else "-"
        latency = seconds[row.name]
        print(
            f"| {row.name} | {ops} | {latency * 1e3:.2f} | {1 / latency:.0f} | "
            f"{anchor / latency:.2f} | {row.size / 1024:.0f} | {row.size / float_size:.2f} | "
            f"{errors[row.name]:.1e} |"
        )
    print_fill_cost(cost, args.fill_blocks, args.fill_calls)
    if args.interpreter_options:
        print_options(seconds, anchor)
    record["rows"] = [
        {
            "name": row.name,
            "ops": sorted(set(row.ops)) if row.ops else [],
            "latency_ms": seconds[row.name] * 1e3,
            "file_bytes": row.size,
            "max_abs_diff": errors[row.name],
        }
        for row in rows
    ]
    record["anchor"] = "litert keras LSTM loop"
    record["fill_cost"] = [
        {
            "name": name,
            "median_ms": cost[name][0] * 1e3,
            "ratio_median": cost[name][1],
            "ratio_quartiles": [cost[name][2][0], cost[name][2][2]],
        }
        for name in FILL_ROWS
    ]
    if args.interpreter_options:
        record["interpreter_options"] = [
            {
                "runtime": runtime,
                "delegate": "XNNPACK" if delegates else None,
                "threads": threads,
                "latency_ms": {
                    file: seconds[option_name(file, runtime, delegates, threads)] * 1e3
                    for file in ("fused", "loop", "fused dynamic")
                },
            }
            for runtime, delegates, threads in OPTIONS
        ]
    _finish(args, record)


def _versions():
    from importlib import metadata

    versions = {"python": platform.python_version()}
    for name in ("tensorflow", "keras", "ai-edge-litert", "onnxruntime"):
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return versions


def _finish(args, record):
    record["date_end"] = _now()
    record["load_average_1min"]["end"] = _load()
    if args.out:
        write_record(args.out, record)


if __name__ == "__main__":
    main()
