"""Eager calls of a tree layer: the first call, later calls of the same shapes, a new shape.

On JAX, an eager call of a tree layer used to trace and compile its level
loop every time (a new loop body per call). This times ``--calls`` eager calls
of ``TreeLSTM`` on one padded batch of random binary trees, then one call on a
batch with more nodes, and prints wall milliseconds per call:

    KERAS_BACKEND=jax python benchmarks/tree_eager_calls.py
    KERAS_BACKEND=tensorflow python benchmarks/tree_eager_calls.py

(To time an older version, run it with ``PYTHONPATH`` pointing at a checkout of it.)
``--out FILE.json`` also writes the figures with the command, date, machine and the
1-minute load average.
"""

import argparse
import datetime
import json
import os
import statistics
import sys
import time

from machine import machine  # noqa: E402 (beside this script)


def main(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument("--calls", type=int, default=5)
    p.add_argument("--batch", type=int, default=25)
    p.add_argument("--units", type=int, default=64)
    p.add_argument("--nodes", type=int, default=64, help="padded node count of the batch")
    p.add_argument("--variant", default="n_ary", choices=["n_ary", "child_sum"])
    p.add_argument("--out", help="also write the figures to this JSON file")
    args = p.parse_args(argv)
    load_start = os.getloadavg()[0]
    date = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")

    import keras
    import numpy as np

    import keras_seqmodels as ks
    from keras_seqmodels import trees

    rng = np.random.default_rng(0)

    def batch(max_nodes):
        sizes = rng.integers(2, max_nodes // 2, size=args.batch)
        encoded = trees.encode([trees.balanced_tree(int(s)) for s in sizes], max_nodes=max_nodes)
        x = rng.standard_normal(encoded["levels"].shape + (args.units,)).astype("float32")
        return [x, encoded["children"], encoded["levels"]]

    # Older versions (timed through PYTHONPATH) had the layer in ks.layers.
    tree_lstm = getattr(trees, "TreeLSTM", None) or ks.layers.TreeLSTM
    layer = tree_lstm(args.units, variant=args.variant)
    inputs = batch(args.nodes)
    times = []
    for _ in range(args.calls):
        start = time.perf_counter()
        _, root = layer(inputs)
        keras.ops.convert_to_numpy(root)
        times.append(1000 * (time.perf_counter() - start))
    other = batch(2 * args.nodes)
    start = time.perf_counter()
    keras.ops.convert_to_numpy(layer(other)[1])
    new_shape = 1000 * (time.perf_counter() - start)
    record = {
        "backend": keras.backend.backend(),
        "module": ks.__file__,
        "load_average": os.getloadavg(),
        "first_ms": times[0],
        "later_same_shape_ms": times[1:],
        "later_median_ms": statistics.median(times[1:]),
        "new_shape_ms": new_shape,
    }
    print(json.dumps(record, indent=1))
    if args.out:
        record.update({
            "command": "python benchmarks/tree_eager_calls.py " + " ".join(sys.argv[1:]),
            "date": date,
            "machine": machine(),
            "load_average_1min_start_end": [round(load_start, 2), round(os.getloadavg()[0], 2)],
            "config": vars(args),
        })  # fmt: skip
        with open(args.out, "w", encoding="utf-8") as f:
            json.dump(record, f, indent=2)
            f.write("\n")


if __name__ == "__main__":
    main()
