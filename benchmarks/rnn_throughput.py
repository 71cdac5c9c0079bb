"""Training and inference throughput of the package's cells vs Keras's layers.

Runs, in one process and on the current Keras backend, our LSTM, GRU and Elman
(``keras_seqmodels.layers.Recurrent``) against ``keras.layers.LSTM``, ``GRU``
and ``SimpleRNN`` at the same sizes, and times the bare matrix products the
same work needs (a floor on this machine). Prints a table of tokens/s and
ratios and writes JSON.

    python benchmarks/rnn_throughput.py --out benchmarks/results/rnn_tf.json
    KERAS_BACKEND=jax python benchmarks/rnn_throughput.py --out ...
"""

import argparse
import json
import os
import platform
import time

import keras
import numpy as np

import keras_seqmodels as ks

CONFIGS = {
    "b32_t100": dict(batch=32, time=100, features=128, units=256),
    "b1_t1000": dict(batch=1, time=1000, features=128, units=256),
}

PAIRS = {
    "LSTM": (
        lambda u: ks.cells.LSTMCell(u),
        lambda u: keras.layers.LSTM(u, return_sequences=True),
        4,
    ),
    "GRU": (
        lambda u: ks.cells.GRUCell(u),
        lambda u: keras.layers.GRU(u, return_sequences=True, reset_after=False),
        3,
    ),
    "Elman": (
        lambda u: ks.cells.ElmanCell(u),
        lambda u: keras.layers.SimpleRNN(u, return_sequences=True),
        1,
    ),
}


def make_model(layer, cfg):
    inputs = keras.Input((cfg["time"], cfg["features"]), batch_size=cfg["batch"])
    outputs = layer(inputs)
    model = keras.Model(inputs, outputs)
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
    return float(np.median(times))


def measure_interleaved(models, cfg, repeats):
    """Median tokens/s of each model, timing them in turns so that load
    changes on a shared machine hit every model alike."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((cfg["batch"], cfg["time"], cfg["features"])).astype("float32")
    y = np.asarray(models[0].predict_on_batch(x))
    y = rng.standard_normal(y.shape).astype("float32")
    for model in models:
        for _ in range(2):
            model.train_on_batch(x, y)
            np.asarray(model.predict_on_batch(x))
    train = [[] for _ in models]
    infer = [[] for _ in models]
    for _ in range(repeats):
        for i, model in enumerate(models):
            start = time.perf_counter()
            model.train_on_batch(x, y)
            train[i].append(time.perf_counter() - start)
            start = time.perf_counter()
            np.asarray(model.predict_on_batch(x))
            infer[i].append(time.perf_counter() - start)
    tokens = cfg["batch"] * cfg["time"]
    return [
        (tokens / float(np.median(t)), tokens / float(np.median(f))) for t, f in zip(train, infer)
    ]


def bare_matmul_seconds(cfg, blocks, repeats):
    """Time of the matrix products of one forward pass (no gates, no loop)."""
    b, t, d, u = cfg["batch"], cfg["time"], cfg["features"], cfg["units"]
    rng = np.random.default_rng(0)
    x = keras.ops.convert_to_tensor(rng.standard_normal((b * t, d)).astype("float32"))
    h = keras.ops.convert_to_tensor(rng.standard_normal((t, b, u)).astype("float32"))
    w = keras.ops.convert_to_tensor(rng.standard_normal((d, blocks * u)).astype("float32"))
    r = keras.ops.convert_to_tensor(rng.standard_normal((u, blocks * u)).astype("float32"))

    def work():
        return keras.ops.sum(keras.ops.matmul(x, w)) + keras.ops.sum(keras.ops.matmul(h, r))

    if keras.backend.backend() == "tensorflow":
        import tensorflow as tf

        fn = tf.function(work, jit_compile=True)
        run = lambda: fn().numpy()  # noqa: E731
    elif keras.backend.backend() == "jax":
        import jax

        fn = jax.jit(work)
        run = lambda: fn().block_until_ready()  # noqa: E731
    else:
        run = lambda: keras.ops.convert_to_numpy(work())  # noqa: E731
    return timeit(run, repeats)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--configs", default=",".join(CONFIGS))
    parser.add_argument("--cells", default=",".join(PAIRS))
    parser.add_argument("--out", default=None, help="JSON file to write")
    args = parser.parse_args()

    results = []
    for cfg_name in args.configs.split(","):
        cfg = CONFIGS[cfg_name]
        for cell_name in args.cells.split(","):
            ours_fn, keras_fn, blocks = PAIRS[cell_name]
            keras.utils.set_random_seed(0)
            ours = make_model(
                ks.layers.Recurrent(ours_fn(cfg["units"]), return_sequences=True), cfg
            )
            hoisted = make_model(
                ks.layers.Recurrent(
                    ours_fn(cfg["units"]), return_sequences=True, precompute_inputs=True
                ),
                cfg,
            )
            theirs = make_model(keras_fn(cfg["units"]), cfg)
            (o_train, o_inf), (h_train, h_inf), (k_train, k_inf) = measure_interleaved(
                [ours, hoisted, theirs], cfg, args.repeats
            )
            floor = bare_matmul_seconds(cfg, blocks, args.repeats)
            tokens = cfg["batch"] * cfg["time"]
            row = dict(
                config=cfg_name,
                cell=cell_name,
                ours_train_tok_s=o_train,
                keras_train_tok_s=k_train,
                train_ratio=o_train / k_train,
                ours_infer_tok_s=o_inf,
                keras_infer_tok_s=k_inf,
                infer_ratio=o_inf / k_inf,
                hoisted_train_ratio=h_train / k_train,
                hoisted_infer_ratio=h_inf / k_inf,
                bare_matmul_forward_tok_s=tokens / floor,
                jit_compile=bool(ours.jit_compile),
            )
            results.append(row)
            print(
                f"{cfg_name:9s} {cell_name:6s} train {o_train:10.0f} vs {k_train:10.0f} "
                f"({row['train_ratio']:.2f}x)  infer {o_inf:10.0f} vs {k_inf:10.0f} "
                f"({row['infer_ratio']:.2f}x)  bare-matmul fwd {tokens / floor:10.0f}",
                flush=True,
            )
    meta = dict(
        backend=keras.backend.backend(),
        keras=keras.__version__,
        machine=platform.machine(),
        cpus=os.cpu_count(),
        repeats=args.repeats,
    )
    print(
        "\n| config | cell | train tok/s ours | Keras | ratio | infer tok/s ours "
        "| Keras | ratio | hoisted-projection ratio train/infer "
        "| bare matmul fwd tok/s |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in results:
        print(
            f"| {r['config']} | {r['cell']} | {r['ours_train_tok_s']:.0f} "
            f"| {r['keras_train_tok_s']:.0f} | {r['train_ratio']:.2f} "
            f"| {r['ours_infer_tok_s']:.0f} | {r['keras_infer_tok_s']:.0f} | "
            f"{r['infer_ratio']:.2f} | {r['hoisted_train_ratio']:.2f} / "
            f"{r['hoisted_infer_ratio']:.2f} | {r['bare_matmul_forward_tok_s']:.0f} |"
        )
    if args.out:
        os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
        with open(args.out, "w") as f:
            json.dump(dict(meta=meta, results=results), f, indent=2)


if __name__ == "__main__":
    main()
