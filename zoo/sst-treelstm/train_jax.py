"""Train the sst-treelstm network on JAX (GPU) from ``gpu_data.py``'s arrays.

    KERAS_BACKEND=jax python zoo/sst-treelstm/train_jax.py --data D/sst_arrays.npz \
        --out OUT/cfg [--optimizer adam --lr 2e-3 --embed-dim 100 --units 120 ...]
        [--budget-s 480] [--init OUT/cfg/best.npz]

Needs no TensorFlow. The network is the artifact's without its
``StringLookup`` (integer token ids in, as ``gpu_data.py`` numbers them), with
the same layer names, so ``recipe.py assemble`` copies the weights into the
string-input model. Batches have fixed shapes (``--batch-size`` trees padded to
one of a few node-count buckets, short batches filled with one-node trees
without labels) so that XLA compiles once per bucket. Stops after
``--budget-s`` seconds of wall time; after every epoch it scores dev (root
fine-grained and binary accuracy) and, when fine-grained improves, saves the
weights to ``OUT/cfg/best.npz`` (embedding in float16) and the history to
``OUT/cfg/history.json`` at every epoch (with ``--snapshots`` also every
epoch's weights in ``OUT/cfg/eN/``). ``--init`` continues a stored run from its
weights (the optimiser state starts afresh).
"""

import argparse
import json
import os
import sys
import time

import numpy as np

BUCKETS = (32, 64, 104)


def load_split(data, split):
    off = data[f"{split}_offsets"]
    trees = []
    for t in range(len(off) - 1):
        s = slice(off[t], off[t + 1])
        trees.append((data[f"{split}_ids"][s], data[f"{split}_children"][s],
                      data[f"{split}_levels"][s], data[f"{split}_labels"][s]))
    return trees


def bucket_of(n):
    for b in BUCKETS:
        if n <= b:
            return b
    raise ValueError(f"train_jax: a tree has {n} nodes, more than the last bucket {BUCKETS[-1]}")


def make_batch(trees, batch_size, width):
    ids = np.zeros((batch_size, width), np.int32)
    children = np.full((batch_size, width, 2), -1, np.int32)
    levels = np.full((batch_size, width), -1, np.int32)
    labels = np.full((batch_size, width), -1, np.int32)
    levels[:, 0] = 0  # filler rows: one unlabelled leaf
    roots = np.zeros((batch_size,), np.int32)
    for i, (tid, ch, lv, lab) in enumerate(trees):
        n = len(tid)
        ids[i, :n], children[i, :n], levels[i, :n], labels[i, :n] = tid, ch, lv, lab
        roots[i] = int(np.argmax(lv))
    return (ids, children, levels), labels, roots


def batches(trees, batch_size, rng=None):
    """Fixed-shape batches of trees grouped by bucket (shuffled when ``rng``)."""
    groups = {}
    for i, t in enumerate(trees):
        groups.setdefault(bucket_of(len(t[0])), []).append(i)
    out = []
    for width, idx in groups.items():
        idx = np.array(idx)
        if rng is not None:
            idx = rng.permutation(idx)
        for s in range(0, len(idx), batch_size):
            out.append((width, idx[s : s + batch_size]))
    if rng is not None:
        out = [out[i] for i in rng.permutation(len(out))]
    return out


def build_model(vocab_size, embed_dim, units, dropout, num_classes=5, cell="treelstm"):
    """``cell="rntn"``: an ``RNTN(units)`` (leaves are their embeddings, so
    ``embed_dim`` must equal ``units``) in place of the Tree-LSTM."""
    import keras

    from keras_seqmodels.layers import RNTN, TreeLSTM

    ids = keras.Input((None,), dtype="int32", name="ids")
    children = keras.Input((None, 2), dtype="int32", name="children")
    levels = keras.Input((None,), dtype="int32", name="levels")
    x = keras.layers.Embedding(vocab_size, embed_dim, name="embedding")(ids)
    x = keras.layers.Dropout(dropout)(x)
    if cell == "rntn":
        nodes, _ = RNTN(units, name="rntn")([x, children, levels])
    else:
        nodes, _ = TreeLSTM(units, name="tree_lstm")([x, children, levels])
    nodes = keras.layers.Dropout(dropout)(nodes)
    logits = keras.layers.Dense(num_classes, name="classifier")(nodes)
    return keras.Model([ids, children, levels], logits, name="sst_treelstm_ids")


def root_scores(model, trees, batch_size):
    """Dev metrics and the root class probabilities ``(len(trees), 5)`` in
    the trees' order."""
    gold = np.zeros(len(trees), np.int64)
    probs = None
    for width, idx in batches(trees, batch_size):
        x, _, roots = make_batch([trees[i] for i in idx], batch_size, width)
        logits = np.asarray(model.predict_on_batch(x), np.float64)[: len(idx)]
        root = logits[np.arange(len(idx)), roots[: len(idx)]]
        p = np.exp(root - root.max(1, keepdims=True))
        if probs is None:
            probs = np.zeros((len(trees), p.shape[1]))
        probs[idx] = p / p.sum(1, keepdims=True)
        gold[idx] = [int(trees[i][3][roots[j]]) for j, i in enumerate(idx)]
    keep = gold != 2
    pos = probs[:, 3:].sum(1) > probs[:, :2].sum(1)
    return {"dev_fine": float(np.mean(probs.argmax(1) == gold)),
            "dev_binary": float(np.mean(pos[keep] == (gold[keep] > 2)))}, probs


def save_weights(model, path):
    arrays = {}
    for i, w in enumerate(model.weights):
        v = np.asarray(w.numpy())
        arrays[f"{i:03d}|{w.path}"] = v.astype(np.float16) if "embedding" in w.path else v
    np.savez(path + ".tmp.npz", **arrays)
    os.replace(path + ".tmp.npz", path)


def load_weights(model, path):
    with np.load(path) as f:
        stored = {k.split("|", 1)[1]: f[k] for k in f.files}
    for w in model.weights:
        w.assign(stored[w.path].astype(w.dtype))


def skipgram(corpus, vocab_size, dim, seconds, seed, say, window=5, negatives=5,
             batch=16384, lr=2e-3):
    """Skip-gram with negative sampling (Mikolov et al. 2013) on ``corpus`` for
    ``seconds`` of wall time, in JAX; returns the input vectors ``(vocab, dim)``
    (row 0, out-of-vocabulary, and row 1, internal nodes, stay random)."""
    import jax
    import jax.numpy as jnp

    corpus = np.asarray(corpus)
    sent = np.cumsum(corpus < 0)  # sentence number of each position
    counts = np.bincount(corpus[corpus >= 0], minlength=vocab_size).astype(np.float64)
    freq = counts / counts.sum()
    # Frequent-word subsampling (t = 1e-4), as word2vec: keep-probabilities per id.
    keep = np.minimum(1.0, np.sqrt(1e-4 / np.maximum(freq, 1e-12)) + 1e-4 / np.maximum(freq, 1e-12))
    noise = counts ** 0.75
    table = np.random.default_rng(seed).choice(vocab_size, 2_000_000, p=noise / noise.sum())
    rng = np.random.default_rng(seed)
    key = jax.random.PRNGKey(seed)
    w_in = jax.random.uniform(key, (vocab_size, dim), minval=-0.5 / dim, maxval=0.5 / dim)
    params = {"in": w_in, "out": jnp.zeros((vocab_size, dim))}
    m = jax.tree_util.tree_map(jnp.zeros_like, params)
    v = jax.tree_util.tree_map(jnp.zeros_like, params)

    def loss_fn(p, c, o, n, w):
        u = p["in"][c]
        pos = jnp.sum(u * p["out"][o], -1)
        neg = jnp.einsum("bd,bkd->bk", u, p["out"][n])
        ll = jax.nn.log_sigmoid(pos) + jnp.sum(jax.nn.log_sigmoid(-neg), -1)
        return -jnp.sum(ll * w) / jnp.maximum(jnp.sum(w), 1.0)

    @jax.jit
    def step(p, m, v, t, c, o, n, w):
        loss, g = jax.value_and_grad(loss_fn)(p, c, o, n, w)
        m = jax.tree_util.tree_map(lambda a, b: 0.9 * a + 0.1 * b, m, g)
        v = jax.tree_util.tree_map(lambda a, b: 0.999 * a + 0.001 * b * b, v, g)
        def update(a, mm, vv):
            return a - lr * (mm / (1 - 0.9**t)) / (jnp.sqrt(vv / (1 - 0.999**t)) + 1e-8)

        p = jax.tree_util.tree_map(update, p, m, v)
        return p, m, v, loss

    start, t, losses = time.time(), 0, []
    valid = np.flatnonzero(corpus >= 0)
    while time.time() - start < seconds:
        t += 1
        c_pos = valid[rng.integers(0, len(valid), batch)]
        off = rng.integers(1, window + 1, batch) * rng.choice([-1, 1], batch)
        o_pos = np.clip(c_pos + off, 0, len(corpus) - 1)
        c, o = corpus[c_pos], corpus[o_pos]
        w = ((o >= 0) & (sent[c_pos] == sent[o_pos])
             & (rng.random(batch) < keep[c]) & (rng.random(batch) < keep[np.maximum(o, 0)]))
        n = table[rng.integers(0, len(table), (batch, negatives))]
        params, m, v, loss = step(params, m, v, t, c, np.maximum(o, 0), n,
                                  w.astype(np.float32))
        if t % 500 == 0:
            losses.append(float(loss))
            say(f"skip-gram step {t} loss {np.mean(losses[-5:]):.4f}")
    say(f"skip-gram: {t} steps of {batch} pairs in {time.time() - start:.0f} s")
    return np.asarray(params["in"])


def main(argv=None):
    parser = argparse.ArgumentParser(prog="sst-treelstm train_jax")
    parser.add_argument("--data", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--cell", default="treelstm", choices=["treelstm", "rntn"])
    parser.add_argument("--optimizer", default="adam", choices=["adam", "adagrad"])
    parser.add_argument("--lr", type=float, default=2e-3)
    parser.add_argument("--weight-decay", type=float, default=0.0)
    parser.add_argument("--embed-dim", type=int, default=100)
    parser.add_argument("--units", type=int, default=120)
    parser.add_argument("--dropout", type=float, default=0.5)
    parser.add_argument("--batch-size", type=int, default=25)
    parser.add_argument("--eval-batch-size", type=int, default=100)
    parser.add_argument("--epochs", type=int, default=100)
    parser.add_argument("--budget-s", type=float, default=480)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--limit", type=int, default=0, help="use the first N train trees")
    parser.add_argument("--init", default=None, help="best.npz to start from")
    parser.add_argument("--snapshots", action="store_true",
                        help="also save every epoch's weights, dev probabilities and "
                        "history in OUT/eN/ (candidates for recipe.py assemble)")
    parser.add_argument("--skipgram-s", type=float, default=0.0,
                        help="pre-train the embeddings by skip-gram for this many s")
    parser.add_argument("--skipgram-lr", type=float, default=2e-3,
                        help="Adam learning rate of the skip-gram pre-training")
    parser.add_argument("--skipgram-scale", type=float, default=1.0,
                        help="multiply the skip-gram vectors by this")
    args = parser.parse_args(argv)
    start = time.time()

    import keras

    keras.utils.set_random_seed(args.seed)
    os.makedirs(args.out, exist_ok=True)
    with np.load(args.data) as f:
        data = {k: f[k] for k in f.files}
    train, dev = load_split(data, "train"), load_split(data, "dev")
    if args.limit:
        train, dev = train[: args.limit], dev[: max(args.limit // 4, 8)]
    vocab_size = int(max(data["train_ids"].max(), data["dev_ids"].max())) + 1
    model = build_model(vocab_size, args.embed_dim, args.units, args.dropout, cell=args.cell)
    if args.init:
        load_weights(model, args.init)
    opt = (keras.optimizers.Adam(args.lr, weight_decay=args.weight_decay or None)
           if args.optimizer == "adam"
           else keras.optimizers.Adagrad(args.lr, weight_decay=args.weight_decay or None))
    model.compile(optimizer=opt, loss=keras.losses.SparseCategoricalCrossentropy(
        from_logits=True, ignore_class=-1))
    rng = np.random.default_rng(args.seed)
    history = {"args": vars(args), "epochs": [], "best_dev_fine": -1.0}
    log = open(os.path.join(args.out, "log.txt"), "a")

    def say(msg):
        line = f"[{time.time() - start:6.1f} s] {msg}"
        print(line, flush=True)
        log.write(line + "\n")
        log.flush()

    say(f"start {vars(args)} vocab {vocab_size} train {len(train)} dev {len(dev)}")
    if args.skipgram_s > 0 and not args.init:
        vectors = skipgram(data["corpus"], vocab_size, args.embed_dim, args.skipgram_s,
                           args.seed, say, lr=args.skipgram_lr)
        emb = model.get_layer("embedding").embeddings
        init = np.asarray(emb.numpy())
        trained = np.bincount(data["corpus"][data["corpus"] >= 0], minlength=vocab_size) > 0
        vectors = vectors * args.skipgram_scale
        say(f"skip-gram vectors: {trained.sum()} words, std {vectors[trained].std():.4f}")
        emb.assign(np.where(trained[:, None], vectors, init).astype("float32"))
    eval_reserve = 25.0
    stop = False
    for epoch in range(1, args.epochs + 1):
        losses, done = [], 0
        plan = batches(train, args.batch_size, rng)
        for b, (width, idx) in enumerate(plan):
            if time.time() - start > args.budget_s - eval_reserve:
                stop = True
                break
            x, y, _ = make_batch([train[i] for i in idx], args.batch_size, width)
            losses.append(float(model.train_on_batch(x, y)))
            done += 1
            if b % 100 == 0:
                say(f"epoch {epoch} batch {b}/{len(plan)} loss {np.mean(losses[-100:]):.4f}")
        if done == 0:
            break
        m, dev_probs = root_scores(model, dev, args.eval_batch_size)
        m.update(epoch=epoch, fraction=done / len(plan), loss=float(np.mean(losses)),
                 time_s=round(time.time() - start, 1))
        history["epochs"].append(m)
        if args.snapshots:
            snap = os.path.join(args.out, f"e{epoch}")
            os.makedirs(snap, exist_ok=True)
            save_weights(model, os.path.join(snap, "best.npz"))
            np.save(os.path.join(snap, "dev_probs.npy"), dev_probs.astype(np.float32))
            with open(os.path.join(snap, "history.json"), "w") as f:
                json.dump({"args": vars(args), "epochs": [m], "best_dev_fine": m["dev_fine"],
                           "best_epoch": epoch}, f, indent=1)
        if m["dev_fine"] > history["best_dev_fine"]:
            history["best_dev_fine"] = m["dev_fine"]
            history["best_epoch"] = epoch
            save_weights(model, os.path.join(args.out, "best.npz"))
            np.save(os.path.join(args.out, "dev_probs.npy"), dev_probs.astype(np.float32))
        with open(os.path.join(args.out, "history.json"), "w") as f:
            json.dump(history, f, indent=1)
        say(f"epoch {epoch} {m}")
        if stop:
            break
    say(f"end best dev fine {history['best_dev_fine']:.4f} epoch {history.get('best_epoch')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
