"""Where the time of a recurrent layer's training step goes, per XLA operation
(JAX backend, CPU or GPU).

Traces a few calls of forward + backward (the gradient of the mean squared
output with respect to the layer's weights) with ``jax.profiler``, reads the
trace with ``xprof`` (``pip install xprof``, an optional benchmark
dependency) and prints the operations that took the most time per call,
with how often each ran per call: an operation inside the time loop runs
once per step (a ``while`` span holds the operations of its loop).

    KERAS_BACKEND=jax python benchmarks/profile_recurrent.py --cell GRU --layer ours
    KERAS_BACKEND=jax python benchmarks/profile_recurrent.py --cell GRU --layer keras
"""

import argparse
import collections
import glob
import json
import os
import tempfile
import time

os.environ.setdefault("KERAS_BACKEND", "jax")
# Per-operation trace events on CPU.
os.environ["XLA_FLAGS"] = os.environ.get("XLA_FLAGS", "") + " --xla_cpu_enable_xprof_traceme=true"

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import keras  # noqa: E402
import numpy as np  # noqa: E402

import keras_seqmodels as ks  # noqa: E402


def make_layer(cell, layer, units):
    if layer == "keras":
        peer = {"LSTM": keras.layers.LSTM, "GRU": keras.layers.GRU, "Elman": keras.layers.SimpleRNN}
        return peer[cell](units, return_sequences=True)
    ours = {
        "LSTM": lambda: ks.cells.LSTMCell(units),
        "GRU": lambda: ks.cells.GRUCell(units, reset_after=True),
        "Elman": lambda: ks.cells.ElmanCell(units),
    }[cell]()
    return ks.layers.Recurrent(ours, return_sequences=True, fused=layer == "ours")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cell", choices=["LSTM", "GRU", "Elman"], default="GRU")
    parser.add_argument("--layer", choices=["ours", "generic", "keras"], default="ours")
    parser.add_argument("--shape", default="32,100,128,256", help="batch,time,features,units")
    parser.add_argument("--calls", type=int, default=5)
    parser.add_argument("--top", type=int, default=25)
    args = parser.parse_args()
    from xprof.convert import raw_to_tool_data

    batch, steps, features, units = (int(v) for v in args.shape.split(","))
    layer = make_layer(args.cell, args.layer, units)
    layer.build((batch, steps, features))
    weights = [v.value for v in layer.trainable_variables]
    others = [v.value for v in layer.non_trainable_variables]
    x = jnp.asarray(np.random.default_rng(0).standard_normal((batch, steps, features)), "float32")

    def loss(weights, x):
        y, _ = layer.stateless_call(weights, others, x, training=True)
        return jnp.mean(y**2)

    step = jax.jit(jax.grad(loss))
    jax.block_until_ready(step(weights, x))
    start = time.perf_counter()
    for _ in range(args.calls):
        jax.block_until_ready(step(weights, x))
    wall = (time.perf_counter() - start) / args.calls
    with tempfile.TemporaryDirectory() as folder:
        with jax.profiler.trace(folder):
            for _ in range(args.calls):
                jax.block_until_ready(step(weights, x))
        files = glob.glob(os.path.join(folder, "**", "*.xplane.pb"), recursive=True)
        data, _ = raw_to_tool_data.xspace_to_tool_data(files, "trace_viewer", {})
    events = json.loads(data)["traceEvents"]
    total, count = collections.Counter(), collections.Counter()
    for event in events:
        name = event.get("name", "")
        # XLA operations only (not the runtime's and Python's own spans).
        if event.get("ph") == "X" and not name.startswith("$") and "::" not in name:
            total[event["name"]] += event.get("dur", 0) / args.calls
            count[event["name"]] += 1
    print(f"{args.layer} {args.cell} {args.shape}: {wall * 1e3:.1f} ms per call (untraced)")
    print("   ms/call  runs/call  operation")
    for name, micros in total.most_common(args.top):
        print(f"{micros / 1e3:10.2f} {count[name] / args.calls:10.0f}  {name[:90]}")


if __name__ == "__main__":
    main()
