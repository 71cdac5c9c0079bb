"""Recursive networks on trees: node-level labels learned with model.fit.

    python examples/recursive_trees.py [--trees 600] [--epochs 8] [--layer TreeLSTM]

A synthetic sentiment-like task: leaves are digits -2..2, and every node's
label is the sign of the sum of its leaves (negative / zero / positive), so
a node's label depends on its whole subtree. Half of the trees are random
binary trees, half balanced trees (``trees.balanced_tree``, depth
⌈log2 τ⌉). The trees are bracketed strings like the Stanford Sentiment
Treebank, parsed by ``trees.parse_ptb`` and batched by ``trees.tree_dataset``
for ``tf.data``; the layer evaluates all nodes of one level of the whole
batch together. Prints node and root accuracy on held-out trees.
"""

import argparse
import sys

import numpy as np


def random_tree_string(rng, leaves):
    """A random binary bracketed tree over ``leaves`` with sign labels."""
    def build(items):
        if len(items) == 1:
            v = items[0]
            return f"({int(np.sign(v)) + 1} {v})", v
        cut = int(rng.integers(1, len(items)))
        left, lv = build(items[:cut])
        right, rv = build(items[cut:])
        return f"({int(np.sign(lv + rv)) + 1} {left} {right})", lv + rv

    return build(list(leaves))[0]


def make_trees(rng, count):
    from keras_seqmodels import trees as T

    out = []
    for i in range(count):
        leaves = rng.integers(-2, 3, int(rng.integers(2, 12)))
        if i % 2:
            out.append(T.parse_ptb(random_tree_string(rng, leaves)))
        else:
            t = T.balanced_tree(len(leaves), tokens=[str(v) for v in leaves])
            sums = {}
            for node in reversed(t.preorder()):
                kids = t.children[node]
                sums[node] = sum(sums[k] for k in kids) if kids else int(t.tokens[node])
            t.labels = [int(np.sign(sums[n])) + 1 for n in range(len(t))]
            out.append(t)
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trees", type=int, default=600)
    parser.add_argument("--epochs", type=int, default=8)
    parser.add_argument("--layer", default="TreeLSTM",
                        choices=["TreeLSTM", "RecursiveNN", "RNTN"])
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    import keras

    from keras_seqmodels import trees

    keras.utils.set_random_seed(args.seed)
    rng = np.random.default_rng(args.seed)
    train = make_trees(rng, args.trees)
    test = make_trees(rng, max(20, args.trees // 4))
    vocab = ["", "-2", "-1", "0", "1", "2"]

    tokens = keras.Input((None,), dtype="string")
    children = keras.Input((None, 2), dtype="int32")
    levels = keras.Input((None,), dtype="int32")
    ids = keras.layers.StringLookup(vocabulary=vocab, mask_token=None)(tokens)
    x = keras.layers.Embedding(len(vocab) + 1, 16)(ids)
    layer = getattr(trees, args.layer)(16)
    nodes, _ = layer([x, children, levels])
    logits = keras.layers.Dense(3)(nodes)
    model = keras.Model([tokens, children, levels], logits)
    model.compile(
        optimizer=keras.optimizers.Adam(1e-2),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True, ignore_class=-1),
    )
    history = model.fit(trees.tree_dataset(train, 32, shuffle=True), shuffle=False,
                        epochs=args.epochs, verbose=0)  # fmt: skip

    batch = trees.encode(test, arity=2)
    pred = np.asarray(model.predict_on_batch(
        [batch["tokens"].astype(object), batch["children"], batch["levels"]]
    )).argmax(-1)
    real = batch["labels"] >= 0
    node_acc = float(np.mean(pred[real] == batch["labels"][real]))
    rows = np.arange(len(test))
    root_acc = float(np.mean(pred[rows, batch["roots"]]
                             == batch["labels"][rows, batch["roots"]]))
    depth = [trees.balanced_tree(n).depth() for n in (2, 5, 11)]
    print(f"{args.layer}: loss {history.history['loss'][0]:.3f} -> "
          f"{history.history['loss'][-1]:.3f}; held-out node accuracy "
          f"{node_acc:.3f}, root accuracy {root_acc:.3f} "
          f"(balanced-tree depths for 2, 5, 11 leaves: {depth})")
    return {"loss": history.history["loss"], "node_accuracy": node_acc,
            "root_accuracy": root_acc}


if __name__ == "__main__":
    main()
    sys.exit(0)
