"""Training and inference throughput of the linear recurrences
(``keras_seqmodels.linear_rnn``) against the package's LSTM / GRU, Keras's,
and PyTorch's ``nn.LSTM``, at long lengths.

The matrix: backends (TensorFlow, JAX, PyTorch; one process each) x lengths
(batch 8, 128 -> 256 by default) x the layers of ``LAYERS`` (a table: a new
layer is one entry). Each Keras layer runs in a one-layer model with
``return_sequences=True``; training = one ``train_on_batch`` (forward,
backward, SGD on a mean squared error), inference = one
``predict_on_batch``. Also timed: ``projection``, the ``Dense`` input
product of ``MinGRU`` alone (``2 * units`` wide, same training step), so the
table gives "MinGRU time / its projection's time", the physical floor of a
layer whose recurrence is elementwise. The torch worker times
``torch.nn.LSTM`` (2 threads). Timings are taken in turns (every model once,
then again), the median of the repeats is kept, the load average recorded.

    python benchmarks/linear_rnn_throughput.py --lengths 1024,4096,16384 \
        --out benchmarks/results/linear_rnn_throughput_cpu.json

Ratios printed: each model's training and inference time against the
package's fused LSTM of the same backend (``ks_lstm``), and the growth of
each model's training time with the length. On a GPU (whatever JAX sees;
the package's LSTM and Keras's take cuDNN there):

    KERAS_BACKEND=jax python benchmarks/linear_rnn_throughput.py --backends jax \
        --lengths 4096 --out gpu.json

``--layers`` limits the layers (names of ``LAYERS``); ``--worker BACKEND``
runs one backend in this process; ``--repeats`` the timed repeats.
"""

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time


def _ks():
    import keras_seqmodels as ks

    return ks


# name -> (units -> a Keras layer with return_sequences=True). LIN layers
# added to the package go here.
LAYERS = {
    "min_gru": lambda u: _ks().linear_rnn.MinGRU(u, return_sequences=True),
    "min_lstm": lambda u: _ks().linear_rnn.MinLSTM(u, return_sequences=True),
    "lru": lambda u: _ks().linear_rnn.LRU(u, return_sequences=True),
    "hawk_block": lambda u: _ks().linear_rnn.HawkBlock(u, return_sequences=True),
    # Output width = input width (features), state (features, 16): its scan
    # holds batch x length x features x 16 floats per tensor (1 GiB at 8 x
    # 16,384 x 128).
    "selective_ssm": lambda u: _ks().linear_rnn.SelectiveSSM(16, return_sequences=True),
    "ks_lstm": lambda u: _ks().layers.LSTM(u, return_sequences=True),
    "ks_gru": lambda u: _ks().layers.GRU(u, return_sequences=True),
    "keras_lstm": lambda u: __import__("keras").layers.LSTM(u, return_sequences=True),
    "keras_gru": lambda u: __import__("keras").layers.GRU(u, return_sequences=True),
    "projection": lambda u: __import__("keras").layers.Dense(2 * u),
}
BASELINE = "ks_lstm"
BACKENDS = ["tensorflow", "jax", "torch"]


def keras_runners(names, batch, length, features, units):
    import keras

    runners = {}
    for name in names:
        layer = LAYERS[name](units)
        inputs = keras.Input((length, features), batch_size=batch)
        model = keras.Model(inputs, layer(inputs))
        model.compile(optimizer=keras.optimizers.SGD(1e-3), loss="mse")
        out = model.output_shape
        runners[name] = (
            lambda x, y, m=model: m.train_on_batch(x, y),
            lambda x, m=model: keras.ops.convert_to_numpy(m.predict_on_batch(x)),
            out[-1],
        )
    return runners


def torch_runners(units, features, threads=2):
    import torch

    torch.set_num_threads(threads)
    lstm = torch.nn.LSTM(features, units, batch_first=True)
    opt = torch.optim.SGD(lstm.parameters(), lr=1e-3)

    def train(x, y):
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(lstm(x)[0], y)
        loss.backward()
        opt.step()

    def infer(x):
        with torch.no_grad():
            return lstm(x)[0]

    return {"torch_lstm": (train, infer, units)}


def run_worker(backend, lengths, names, batch, features, units, repeats):
    import numpy as np

    if backend == "torch":
        import torch

        runners_for = lambda t: torch_runners(units, features)  # noqa: E731
        to = torch.from_numpy
    else:
        import keras

        if keras.backend.backend() != backend:
            raise SystemExit(
                f"linear_rnn_throughput: Keras runs {keras.backend.backend()}, "
                f"not {backend} (set KERAS_BACKEND before importing Keras)."
            )
        runners_for = lambda t: keras_runners(names, batch, t, features, units)  # noqa: E731
        to = lambda a: a  # noqa: E731
    rows = []
    rng = np.random.default_rng(0)
    for length in lengths:
        runners = runners_for(length)
        x = rng.standard_normal((batch, length, features)).astype("float32")
        data = {
            n: (to(x), to(rng.standard_normal((batch, length, w)).astype("float32")))
            for n, (_, _, w) in runners.items()
        }
        for name, (train, infer, _) in runners.items():  # compile, warm up
            train(*data[name])
            infer(data[name][0])
        times = {name: ([], []) for name in runners}
        loads = [os.getloadavg()[0]]
        for _ in range(repeats):
            for name, (train, infer, _) in runners.items():
                start = time.perf_counter()
                train(*data[name])
                times[name][0].append(time.perf_counter() - start)
                start = time.perf_counter()
                infer(data[name][0])
                times[name][1].append(time.perf_counter() - start)
            loads.append(os.getloadavg()[0])
        for name, (tr, inf) in times.items():
            row = dict(backend=backend, length=length, batch=batch, features=features,
                       units=units, model=name, train_ms=1e3 * statistics.median(tr),
                       infer_ms=1e3 * statistics.median(inf), train_ms_all=[1e3 * t for t in tr],
                       infer_ms_all=[1e3 * t for t in inf], load_avg_1min=loads)  # fmt: skip
            rows.append(row)
            print(f"{backend:10s} T={length:6d} {name:12s} train {row['train_ms']:9.1f} ms "
                  f"infer {row['infer_ms']:9.1f} ms  load {loads[-1]:.1f}", flush=True)  # fmt: skip
    return rows


def table(rows):
    """Markdown: times and ratios to the baseline of the same backend and length."""
    base = {(r["backend"], r["length"]): r for r in rows if r["model"] == BASELINE}
    first = {}
    for r in sorted(rows, key=lambda r: r["length"]):
        first.setdefault((r["backend"], r["model"]), r)
    lines = [
        "| backend | length | model | train ms | infer ms | train speed-up vs ks_lstm "
        "| infer speed-up vs ks_lstm | train ms / ms at shortest length (length ratio) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in sorted(rows, key=lambda r: (r["backend"], r["length"], r["model"])):
        b = base.get((r["backend"], r["length"]))
        f = first[(r["backend"], r["model"])]
        speed = ("", "")
        if b:
            speed = (
                f"{b['train_ms'] / r['train_ms']:.1f}x",
                f"{b['infer_ms'] / r['infer_ms']:.1f}x",
            )
        growth = f"{r['train_ms'] / f['train_ms']:.1f} ({r['length'] / f['length']:.0f})"
        lines.append(f"| {r['backend']} | {r['length']} | {r['model']} | {r['train_ms']:.1f} "
                     f"| {r['infer_ms']:.1f} | {speed[0]} | {speed[1]} | {growth} |")  # fmt: skip
    return "\n".join(lines)


def meta():
    info = dict(machine=platform.machine(), cpus=os.cpu_count(), python=platform.python_version(),
                date=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                command=" ".join(sys.argv))  # fmt: skip
    try:
        import jax

        info["jax_devices"] = [str(d) for d in jax.devices()]
    except ImportError:
        pass
    return info


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--worker", choices=BACKENDS)
    parser.add_argument("--backends", default=",".join(BACKENDS))
    parser.add_argument("--lengths", default="256,1024,4096,16384")
    parser.add_argument("--layers", default=",".join(LAYERS))
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--features", type=int, default=128)
    parser.add_argument("--units", type=int, default=256)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", default="benchmarks/results/linear_rnn_throughput_cpu.json")
    args = parser.parse_args()
    lengths = [int(v) for v in args.lengths.split(",")]
    names = [n for n in args.layers.split(",") if n]
    unknown = [n for n in names if n not in LAYERS]
    if unknown:
        raise SystemExit(
            f"linear_rnn_throughput: --layers must be among {list(LAYERS)}; received {unknown}"
        )
    if args.worker:
        rows = run_worker(args.worker, lengths, names, args.batch, args.features, args.units,
                          args.repeats)  # fmt: skip
        with open(args.out, "w") as f:
            json.dump(dict(meta=meta(), rows=rows), f, indent=1)
        return
    rows = []
    for backend in args.backends.split(","):
        part = f"{args.out}.{backend}.part"
        env = dict(os.environ, KERAS_BACKEND=backend if backend != "torch" else "torch")
        cmd = [sys.executable, __file__, "--worker", backend, "--out", part,
               "--lengths", args.lengths, "--layers", args.layers, "--batch", str(args.batch),
               "--features", str(args.features), "--units", str(args.units),
               "--repeats", str(args.repeats)]  # fmt: skip
        if subprocess.run(cmd, env=env).returncode != 0:
            print(f"linear_rnn_throughput: the {backend} worker failed", file=sys.stderr)
            continue
        with open(part) as f:
            rows += json.load(f)["rows"]
        os.remove(part)
    with open(args.out, "w") as f:
        json.dump(dict(meta=meta(), rows=rows), f, indent=1)
    print(table(rows))


if __name__ == "__main__":
    main()
