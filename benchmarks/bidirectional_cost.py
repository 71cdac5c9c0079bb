"""Cost of our Bidirectional against keras.layers.Bidirectional, with masking.

In one process and on the current Keras backend, times a training step
(``train_on_batch``) and a forward pass (``predict_on_batch``) of a masked,
ragged batch through:

- ``ours``: ``keras_seqmodels.layers.Bidirectional`` around our ``Recurrent``;
- ``keras_wrapper``: ``keras.layers.Bidirectional`` around the same
  ``Recurrent`` (isolates the wrapper: per-row gather vs whole-batch flip);
- ``keras_layer``: ``keras.layers.Bidirectional`` around Keras's own layer
  (``keras.layers.LSTM`` / ``GRU`` / ``SimpleRNN``; the GRU reset-after on
  both sides, Keras's default form).

Before timing it checks that ours and the Keras wrapper give the same outputs
with the same weights. Prints milliseconds per batch and the ratios
``ours / keras_*`` (below 1 means ours is faster), and writes JSON.

    python benchmarks/bidirectional_cost.py --out benchmarks/results/bidirectional_tf.json
    KERAS_BACKEND=jax python benchmarks/bidirectional_cost.py
"""

import argparse
import json
import os
import platform
import time

import keras
import numpy as np
from keras import ops

import keras_seqmodels as ks

CELLS = {
    "LSTM": (ks.cells.LSTMCell, lambda u: keras.layers.LSTM(u, return_sequences=True)),
    "GRU": (  # both reset-after (Keras's default), so both compute the same cell
        lambda u: ks.cells.GRUCell(u, reset_after=True),
        lambda u: keras.layers.GRU(u, return_sequences=True, reset_after=True),
    ),
    "Elman": (
        ks.cells.ElmanCell,
        lambda u: keras.layers.SimpleRNN(u, return_sequences=True),
    ),
}


def ragged_batch(batch, time, features, seed=0):
    rng = np.random.default_rng(seed)
    lengths = rng.integers(time // 4, time + 1, batch)
    x = rng.standard_normal((batch, time, features)).astype("float32")
    x[np.arange(time)[None, :] >= lengths[:, None]] = 0.0
    return x, lengths


def make_model(wrapper, cfg):
    inputs = keras.Input((cfg["time"], cfg["features"]), batch_size=cfg["batch"])
    masked = keras.layers.Masking(0.0)(inputs)
    model = keras.Model(inputs, wrapper(masked))
    model.compile(optimizer=keras.optimizers.SGD(1e-3), loss="mse")
    return model


def timeit(fn, repeats, warmup=2):
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return 1000 * float(np.median(times))


def run(name, cfg, repeats):
    cell_cls, keras_layer = CELLS[name]
    units = cfg["units"]
    x, lengths = ragged_batch(cfg["batch"], cfg["time"], cfg["features"])
    wrappers = {
        "ours": ks.layers.Bidirectional(
            ks.layers.Recurrent(cell_cls(units), return_sequences=True)
        ),
        "keras_wrapper": keras.layers.Bidirectional(
            ks.layers.Recurrent(cell_cls(units), return_sequences=True)
        ),
        "keras_layer": keras.layers.Bidirectional(keras_layer(units)),
    }
    models = {k: make_model(w, cfg) for k, w in wrappers.items()}
    for src, dst in zip(models["ours"].weights, models["keras_wrapper"].weights):
        dst.assign(ops.convert_to_numpy(src.value))  # a copy: JAX donates buffers
    a = ops.convert_to_numpy(models["ours"].predict_on_batch(x))
    b = ops.convert_to_numpy(models["keras_wrapper"].predict_on_batch(x))
    max_diff = float(np.max(np.abs(a - b)))
    target = np.zeros(a.shape, "float32")
    result = {"cell": name, **cfg, "max_abs_diff_ours_vs_keras_wrapper": max_diff}
    for key, model in models.items():
        result[f"{key}_train_ms"] = timeit(lambda m=model: m.train_on_batch(x, target), repeats)
        result[f"{key}_forward_ms"] = timeit(lambda m=model: m.predict_on_batch(x), repeats)
    for phase in ("train", "forward"):
        for base in ("keras_wrapper", "keras_layer"):
            result[f"ratio_{phase}_ours_over_{base}"] = (
                result[f"ours_{phase}_ms"] / result[f"{base}_{phase}_ms"]
            )
    return result


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--time", type=int, default=50)
    parser.add_argument("--features", type=int, default=32)
    parser.add_argument("--units", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--cells", default="LSTM,GRU,Elman")
    parser.add_argument("--out", default=None, help="write results as JSON here")
    args = parser.parse_args(argv)
    cfg = dict(batch=args.batch, time=args.time, features=args.features, units=args.units)
    results = []
    header = (
        f"{'cell':6} {'ours tr':>8} {'kw tr':>8} {'kl tr':>8} {'ours fw':>8} "
        f"{'kw fw':>8} {'kl fw':>8} {'tr/kw':>6} {'tr/kl':>6} {'fw/kw':>6} {'fw/kl':>6}"
    )
    print(f"backend={keras.backend.backend()} {cfg} (ms per batch, median)")
    print(header)
    for name in args.cells.split(","):
        r = run(name, cfg, args.repeats)
        results.append(r)
        print(
            f"{name:6} {r['ours_train_ms']:8.1f} {r['keras_wrapper_train_ms']:8.1f} "
            f"{r['keras_layer_train_ms']:8.1f} {r['ours_forward_ms']:8.1f} "
            f"{r['keras_wrapper_forward_ms']:8.1f} {r['keras_layer_forward_ms']:8.1f} "
            f"{r['ratio_train_ours_over_keras_wrapper']:6.2f} "
            f"{r['ratio_train_ours_over_keras_layer']:6.2f} "
            f"{r['ratio_forward_ours_over_keras_wrapper']:6.2f} "
            f"{r['ratio_forward_ours_over_keras_layer']:6.2f}"
            f"   (max |ours - keras wrapper| = {r['max_abs_diff_ours_vs_keras_wrapper']:.1e})"
        )
    if args.out:
        os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
        meta = {
            "backend": keras.backend.backend(),
            "machine": platform.platform(),
            "cpus": os.cpu_count(),
            "load_average_at_end": os.getloadavg(),
        }
        with open(args.out, "w", encoding="utf-8") as f:
            json.dump({"meta": meta, "results": results}, f, indent=2)
    return results


if __name__ == "__main__":
    main()
