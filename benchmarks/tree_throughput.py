"""Trees per second of the batched Tree-LSTM vs a node-by-node implementation.

    python benchmarks/tree_throughput.py [--data-dir ../shared/data] [--trees 200]
        [--batch-size 25] [--units 64] [--repeats 3] [--out results.json]

Both compute the same binary N-ary Tree-LSTM with the same weights (checked
at start): the batched layer evaluates all nodes of one level of every tree of
the batch together (``keras_seqmodels.trees.TreeLSTM``, inside
``tf.function`` / ``train_on_batch``); the baseline walks each tree in
post-order and evaluates one node at a time with the same step function,
eagerly, as a straightforward recursive implementation does (its work per
node is identical, only the batching differs). Trees are SST dev trees when
``--data-dir`` holds ``sst/dev.txt``, else balanced trees of random lengths.
Inference: forward of all trees; training: forward, backward and an Adam
update per batch. Prints trees/s and the speed-up ratios. TensorFlow backend.
"""

import argparse
import json
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_DATA = os.path.join(os.path.dirname(os.path.dirname(HERE)), "shared", "data")


def load_trees(data_dir, count, seed):
    from keras_seqmodels import trees as T

    path = os.path.join(data_dir, "sst", "dev.txt")
    if os.path.isfile(path):
        return T.read_ptb_file(path, limit=count), "SST dev"
    rng = np.random.default_rng(seed)
    return [T.balanced_tree(int(n)) for n in rng.integers(5, 40, count)], "balanced"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default=DEFAULT_DATA)
    parser.add_argument("--trees", type=int, default=200)
    parser.add_argument("--batch-size", type=int, default=25)
    parser.add_argument("--units", type=int, default=64)
    parser.add_argument("--features", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default=None)
    args = parser.parse_args(argv)

    import keras
    import tensorflow as tf
    from keras import ops

    from keras_seqmodels import trees as T
    from keras_seqmodels.trees.steps import nary_tree_lstm_step
    from keras_seqmodels.trees.tree_lstm import TreeLSTM

    keras.utils.set_random_seed(args.seed)
    trees, source = load_trees(args.data_dir, args.trees, args.seed)
    rng = np.random.default_rng(args.seed)
    feats = [rng.standard_normal((len(t), args.features)).astype("float32") for t in trees]
    batches = []
    for i in range(0, len(trees), args.batch_size):
        enc = T.encode(trees[i : i + args.batch_size], arity=2)
        x = np.zeros(enc["levels"].shape + (args.features,), "float32")
        for j, f in enumerate(feats[i : i + args.batch_size]):
            x[j, : len(f)] = f
        batches.append((x, enc["children"], enc["levels"], enc["roots"]))

    # Batched model: node states -> per-node score; loss is the mean root score.
    xin = keras.Input((None, args.features))
    cin = keras.Input((None, 2), dtype="int32")
    lin = keras.Input((None,), dtype="int32")
    layer = TreeLSTM(args.units)
    _, root = layer([xin, cin, lin])
    model = keras.Model([xin, cin, lin], keras.layers.Dense(1)(root))
    model.compile(optimizer=keras.optimizers.Adam(1e-3), loss="mse")
    dense = model.layers[-1]
    infer = tf.function(lambda x, c, lv: model([x, c, lv]), reduce_retracing=True)

    def naive_forward(tree, x):
        # One node at a time, children before parents (a recursive walk).
        zero = ops.zeros((1, args.units))
        h, c = {}, {}
        z_all = ops.matmul(ops.convert_to_tensor(x), layer.kernel) + layer.bias
        for node in reversed(tree.preorder()):
            kids = list(tree.children[node]) + [None] * (2 - len(tree.children[node]))
            ch = ops.stack([h[k] if k is not None else zero for k in kids], axis=1)
            cc = ops.stack([c[k] if k is not None else zero for k in kids], axis=1)
            h[node], c[node] = nary_tree_lstm_step(
                z_all[node : node + 1], ch, cc, layer.recurrent_kernel,
                layer.activation, layer.recurrent_activation,
            )
        return dense(h[tree.root])

    # Same numbers from both.
    x0, c0, l0, _ = batches[0]
    ref = np.asarray(infer(x0, c0, l0))[:3, 0]
    naive = np.array([float(naive_forward(trees[j], feats[j])[0, 0]) for j in range(3)])
    np.testing.assert_allclose(ref, naive, atol=1e-4)

    targets = [np.zeros((len(b[0]), 1), "float32") for b in batches]
    opt = keras.optimizers.Adam(1e-3)
    opt.build(model.trainable_variables)

    def run_batched_infer():
        for x, c, lv, _ in batches:
            infer(x, c, lv)

    def run_batched_train():
        for (x, c, lv, _), y in zip(batches, targets):
            model.train_on_batch([x, c, lv], y)

    def run_naive_infer():
        for t, f in zip(trees, feats):
            naive_forward(t, f)

    def run_naive_train():
        for i in range(0, len(trees), args.batch_size):
            with tf.GradientTape() as tape:
                outs = [naive_forward(t, f) for t, f in
                        zip(trees[i : i + args.batch_size], feats[i : i + args.batch_size])]
                loss = tf.reduce_mean(tf.square(tf.concat(outs, 0)))
            grads = tape.gradient(loss, model.trainable_variables)
            opt.apply_gradients(zip(grads, model.trainable_variables))

    def timed(fn, repeats):
        fn()  # warm-up (tracing)
        best = np.inf
        for _ in range(repeats):
            start = time.perf_counter()
            fn()
            best = min(best, time.perf_counter() - start)
        return len(trees) / best

    results = {
        "source": source, "trees": len(trees), "batch_size": args.batch_size,
        "units": args.units, "features": args.features,
        "nodes_mean": float(np.mean([len(t) for t in trees])),
        "depth_mean": float(np.mean([t.depth() for t in trees])),
        "backend": keras.backend.backend(), "cpus": os.cpu_count(),
    }
    results["inference_batched_trees_per_s"] = timed(run_batched_infer, args.repeats)
    results["inference_node_by_node_trees_per_s"] = timed(run_naive_infer, 1)
    results["train_batched_trees_per_s"] = timed(run_batched_train, args.repeats)
    results["train_node_by_node_trees_per_s"] = timed(run_naive_train, 1)
    results["inference_speedup"] = (results["inference_batched_trees_per_s"]
                                    / results["inference_node_by_node_trees_per_s"])
    results["train_speedup"] = (results["train_batched_trees_per_s"]
                                / results["train_node_by_node_trees_per_s"])
    for k, v in results.items():
        print(f"{k:40s} {v:.1f}" if isinstance(v, float) else f"{k:40s} {v}")
    if args.out:
        with open(args.out, "w") as f:
            json.dump(results, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
