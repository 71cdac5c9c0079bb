"""Latency of GRU and Elman layers as LiteRT files against Keras, on this CPU.

LiteRT has a fused kernel for the Elman RNN (``UNIDIRECTIONAL_SEQUENCE_RNN``)
but none for the GRU, so ``keras_seqmodels.export.to_litert`` writes a GRU as
a ``WHILE`` loop of builtin ops. This script measures what that costs. The
model: ``keras.Input((length, features))`` -> one recurrent layer (last
output); default length 100, 128 -> 256 (the LSTM benchmark's shape). For
each batch size (default 1 and 32; each file converted at that fixed batch):

- ``keras``: the model called in a ``tf.function`` (TensorFlow, ``--threads``
  threads), the layer as Keras runs it by default (the package's fused loop);
- ``litert GRU loop``: ``to_litert`` of ``Recurrent(GRUCell)`` (reset-before)
  and ``GRU(reset_after=True)`` (Keras's default): a ``WHILE`` loop;
- ``litert Elman fused`` and ``litert Elman loop``: ``to_litert`` of
  ``Recurrent(ElmanCell)``, with the fused op and, for comparison, as the
  loop it was before (the exporter's stub op switched off);
- each LiteRT file also with ``quantize="dynamic"`` (int8 weights).

LiteRT runs in ``ai_edge_litert``'s interpreter (``--threads``, XNNPACK
delegate by default), its states reset before every call. Rows are timed in
turns (``deploy_latency.time_rows``): the median over ``--rounds`` rounds of
the per-round median of ``--calls`` calls. Also printed: the largest output
difference from ``model.predict`` over 4 batches.

    python benchmarks/litert_rnn_latency.py
    python benchmarks/litert_rnn_latency.py --length 20 --units 32 --rounds 2   # quick
    python benchmarks/litert_rnn_latency.py --out benchmarks/results/litert_rnn_latency_cpu.json

``--out``: also write the figures, with the command, date, machine and 1-minute load
averages, to a JSON file.
"""

import argparse
import os
import shutil
import sys
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("KERAS_BACKEND", "tensorflow")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from deploy_latency import (  # noqa: E402
    LiteRTRow,
    _load,
    _now,
    _versions,
    time_rows,
    write_record,
)
from machine import machine  # noqa: E402 (beside this script)


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--length", type=int, default=100)
    parser.add_argument("--features", type=int, default=128)
    parser.add_argument("--units", type=int, default=256)
    parser.add_argument("--batches", type=int, nargs="+", default=[1, 32])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--calls", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", help="also write the figures to this JSON file")
    return parser.parse_args(argv)


class KerasRow:
    def __init__(self, name, model):
        import tensorflow as tf

        self.name = name
        self.function = tf.function(lambda x: model(x, training=False))
        self.ops, self.size = [], 0

    def predict(self, x):
        return self.function(x).numpy()

    def prepare(self, x):
        import tensorflow as tf

        tensor = tf.constant(x)
        return lambda: self.function(tensor)


def models(args):
    import keras

    import keras_seqmodels as ks

    keras.utils.set_random_seed(args.seed)
    cells = {
        "GRU": ks.cells.GRUCell(args.units),
        "GRU reset-after": ks.cells.GRUCell(args.units, reset_after=True),
        "Elman": ks.cells.ElmanCell(args.units),
    }
    return {
        name: keras.Sequential(
            [keras.Input((args.length, args.features)), ks.layers.Recurrent(cell)]
        )
        for name, cell in cells.items()
    }


def rows_for(nets, batch, folder, threads):
    from keras_seqmodels import export
    from keras_seqmodels.export import litert_export

    def litert(name, label, quantize):
        path = os.path.join(folder, f"{label}_{quantize}_{batch}.tflite".replace(" ", "_"))
        export.to_litert(nets[name], path, quantize=quantize, batch_size=batch)
        suffix = "" if quantize is None else f" {quantize}"
        return LiteRTRow(f"litert {label}{suffix}", path, threads)

    rows = []
    for name in nets:
        rows.append(KerasRow(f"keras {name}", nets[name]))
        kind = "fused" if name == "Elman" else "loop"
        for quantize in (None, "dynamic"):
            rows.append(litert(name, f"{name} {kind}", quantize))
        # The Elman loop as before the fused op: the stub op switched off.
        if name == "Elman":
            register = litert_export._register_rnn_stub
            litert_export._register_rnn_stub = lambda: False
            try:
                for quantize in (None, "dynamic"):
                    rows.append(litert(name, "Elman loop", quantize))
            finally:
                litert_export._register_rnn_stub = register
        for row in rows:
            row.net = getattr(row, "net", name)
    return rows


def main(argv=None):
    args = parse_args(argv)
    import numpy as np
    import tensorflow as tf

    tf.config.threading.set_intra_op_parallelism_threads(args.threads)
    tf.config.threading.set_inter_op_parallelism_threads(args.threads)
    record = {
        "command": "python benchmarks/litert_rnn_latency.py " + " ".join(sys.argv[1:]),
        "date_start": _now(),
        "machine": machine(),
        "load_average_1min": [_load()],
        "versions": _versions(),
        "config": {k: getattr(args, k) for k in ("length", "features", "units", "threads",
                                                 "rounds", "calls")},
        "batches": [],
    }  # fmt: skip
    nets = models(args)
    rng = np.random.default_rng(args.seed)
    folder = tempfile.mkdtemp(prefix="litert_rnn_latency_")
    try:
        for batch in args.batches:
            rows = rows_for(nets, batch, folder, args.threads)
            checks = rng.normal(size=(4, batch, args.length, args.features)).astype("float32")
            errors = {}
            for row in rows:
                model = nets[row.net]
                errors[row.name] = max(
                    float(np.max(np.abs(row.predict(x) - model.predict(x, verbose=0))))
                    for x in checks
                )
            seconds = time_rows(rows, checks[0], args.rounds, args.calls)
            record["load_average_1min"].append(_load())
            record["batches"].append({
                "batch": batch,
                "rows": [
                    {"name": row.name, "layer": row.net, "ms": seconds[row.name] * 1e3,
                     "while_loop": "WHILE" in row.ops, "max_abs_diff": errors[row.name]}
                    for row in rows
                ],
            })  # fmt: skip
            print(
                f"\nbatch {batch} x {args.length} steps, {args.features} -> {args.units}; "
                f"{args.threads} threads"
            )
            print(f"{'row':36s} {'ms':>9s} {'keras/row':>9s} {'WHILE':>6s} {'max diff':>9s}")
            for row in rows:
                keras_ms = seconds[f"keras {row.net}"] * 1e3
                ms = seconds[row.name] * 1e3
                loop = "yes" if "WHILE" in row.ops else "no"
                print(
                    f"{row.name:36s} {ms:9.3f} {keras_ms / ms:8.2f}x {loop:>6s} "
                    f"{errors[row.name]:9.1e}"
                )
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    record["date_end"] = _now()
    if args.out:
        write_record(args.out, record)


if __name__ == "__main__":
    main()
