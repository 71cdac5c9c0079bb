"""How many blocks of rows the fused JAX loop should carry on this CPU.

Times one forward + backward pass (the gradient of the mean squared output
with respect to the weights, under ``jax.jit``) and one inference pass of
``Recurrent(<cell>)`` with its batch carried as 1, 2, 4, ... blocks of rows
(``keras_seqmodels.layers.fused_rnn.row_groups``), and of Keras's own layer,
all in one process, in turns; prints the medians and the ratios to Keras.
The package uses 2 blocks for the GRU and the LSTM on a CPU when the batch
is small (even, 16 rows or more, batch x units at most 16384), from these
timings on a 2-core CPU (BENCHMARKS.md).

    KERAS_BACKEND=jax python benchmarks/row_groups.py --cell GRU --shape 32,100,128,256

``--chunks 1,2`` times the reverse loop in 1 and 2 chunks of steps with each
block count (``kernels.FusedKernel.chunks``; the package uses 2 chunks where
it uses row blocks for the LSTM). ``--out FILE.json`` also writes the medians
with the command, date, machine and the 1-minute load average.
"""

import argparse
import datetime
import functools
import json
import os
import sys
import time

from machine import machine  # noqa: E402 (beside this script)

os.environ.setdefault("KERAS_BACKEND", "jax")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import keras  # noqa: E402
import numpy as np  # noqa: E402

import keras_seqmodels as ks  # noqa: E402
from keras_seqmodels.layers import kernels  # noqa: E402

# Each cell with Keras's layer of the same form (the GRU's reset gate after or
# before the recurrent matrix product: ``reset_after`` on both sides).
CELLS = {
    "GRU": (
        lambda n: ks.cells.GRUCell(n, reset_after=True),
        functools.partial(keras.layers.GRU, reset_after=True),
    ),
    "GRU_reset_before": (
        lambda n: ks.cells.GRUCell(n, reset_after=False),
        functools.partial(keras.layers.GRU, reset_after=False),
    ),
    "LSTM": (lambda n: ks.cells.LSTMCell(n), keras.layers.LSTM),
    "Elman": (lambda n: ks.cells.ElmanCell(n), keras.layers.SimpleRNN),
}


def compiled(layer, x):
    """The jitted gradient and inference functions of ``layer`` on ``x``."""
    layer.build(x.shape)
    weights = [v.value for v in layer.trainable_variables]
    others = [v.value for v in layer.non_trainable_variables]

    def loss(weights, x):
        y, _ = layer.stateless_call(weights, others, x, training=True)
        return jnp.mean(y**2)

    grad = jax.jit(jax.grad(loss))
    infer = jax.jit(lambda w, x: layer.stateless_call(w, others, x, training=False)[0])
    jax.block_until_ready((grad(weights, x), infer(weights, x)))
    return grad, infer, weights


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cell", choices=list(CELLS), default="GRU")
    parser.add_argument("--shape", default="32,100,128,256", help="batch,time,features,units")
    parser.add_argument("--groups", default="1,2,4,8")
    parser.add_argument(
        "--chunks",
        default="default",
        help="chunks of the reverse loop, e.g. 1,2 (each with every block count); "
        "default: the package's choice",
    )
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--out", help="also write the medians to this JSON file")
    args = parser.parse_args()
    load_start = round(os.getloadavg()[0], 2)
    date = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
    batch, steps, features, units = (int(v) for v in args.shape.split(","))
    x = jnp.asarray(np.random.default_rng(0).standard_normal((batch, steps, features)), "float32")
    make_cell, peer = CELLS[args.cell]
    runs = {}
    if peer is not None:
        runs["keras"] = compiled(peer(units, return_sequences=True), x)
    chunk_counts = [None] if args.chunks == "default" else [int(v) for v in args.chunks.split(",")]
    for g in (int(v) for v in args.groups.split(",")):
        if batch % g:
            continue
        for c in chunk_counts:
            layer = ks.layers.Recurrent(make_cell(units), return_sequences=True)
            kernels.tune(layer, groups=g, chunks=c)  # force g blocks (and c chunks)
            name = f"{g} block(s)"
            if c is not None:
                name += f", {c} chunk(s)"
            runs[name] = compiled(layer, x)
    times = {name: ([], []) for name in runs}
    for _ in range(args.repeats):
        for name, (grad, infer, weights) in runs.items():
            for fn, out in ((grad, times[name][0]), (infer, times[name][1])):
                start = time.perf_counter()
                jax.block_until_ready(fn(weights, x))
                out.append(time.perf_counter() - start)
    ref = [np.median(t) for t in times.get("keras", times[next(iter(times))])]
    print(f"{args.cell} {args.shape}: forward+backward / inference, median ms (Keras ÷ this)")
    for name, (train, infer) in times.items():
        t, i = np.median(train), np.median(infer)
        ratios = f"({ref[0] / t:.2f} / {ref[1] / i:.2f})"
        print(f"  {name:22s} {1e3 * t:7.1f} / {1e3 * i:6.1f}   {ratios}")
    if args.out:
        record = {
            "cell": args.cell,
            "shape": args.shape,
            "repeats": args.repeats,
            "median_ms": {
                name: {
                    "train": 1e3 * float(np.median(train)),
                    "infer": 1e3 * float(np.median(infer)),
                }
                for name, (train, infer) in times.items()
            },
            "command": "KERAS_BACKEND=jax python benchmarks/row_groups.py "
            + " ".join(sys.argv[1:]),
            "date": date,
            "machine": machine(),
            "load_average_1min_start_end": [load_start, round(os.getloadavg()[0], 2)],
            "versions": {"jax": jax.__version__, "keras": keras.__version__},
        }
        with open(args.out, "w", encoding="utf-8") as f:
            json.dump(record, f, indent=2)
            f.write("\n")



if __name__ == "__main__":
    main()
