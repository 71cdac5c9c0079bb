"""sst-treelstm: binary constituency Tree-LSTM for SST fine-grained sentiment.

    seqmodels train sst-treelstm [--data-dir D] [--epochs N] [--units U]
    seqmodels evaluate sst-treelstm [--data-dir D] [--split dev|test]
        [--model PATH] [--register]

Data: the Stanford Sentiment Treebank PTB trees (``sst/{train,dev,test}.txt``).
Every node of a training tree is a labelled example (Tai et al. 2015); the
metrics are on the roots: fine-grained accuracy (5 classes) and binary
accuracy on the trees whose root is not neutral (2), predicting positive when
P(3)+P(4) > P(0)+P(1). Word embeddings are trained here from scratch (no
GloVe). Model selection (best epoch) on dev; the test split is scored once.

The saved model takes lower-cased token strings per node (``""`` on internal
nodes), ``children`` and ``levels`` (``keras_seqmodels.trees.encode``) and
returns per-node class logits; ``keras_seqmodels.trees.serving`` wraps it for
bracketed strings.
"""

import argparse
import json
import os
import sys
import time

import numpy as np

NAME = "sst-treelstm"
CELL = "treelstm"  # zoo/sst-rntn/recipe.py reuses this recipe with "rntn"
HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
DEFAULT_DATA = os.path.join(os.path.dirname(REPO), "shared", "data")
RUN_DIR = os.path.join(REPO, "runs", NAME)


def resolve_data_dir(path):
    if path is None:
        path = DEFAULT_DATA
    for cand in (path, os.path.join(path, "sst")):
        if os.path.isfile(os.path.join(cand, "train.txt")):
            return cand
    raise FileNotFoundError(f"{NAME}: no train.txt in {path} or {path}/sst; pass --data-dir")


def load_split(data_dir, split):
    from keras_seqmodels.trees import lower_tokens, read_ptb_file

    return [lower_tokens(t) for t in read_ptb_file(os.path.join(data_dir, f"{split}.txt"))]


def build_vocabulary(trees, min_count=2):
    import collections

    counts = collections.Counter(t for tree in trees for t in tree.tokens if t is not None)
    # "" (internal nodes) gets its own id; rare words train the OOV id 0.
    return [""] + sorted(w for w, c in counts.items() if c >= min_count)


def build_model(words, embed_dim=100, units=120, dropout=0.5, num_classes=5, cell="treelstm"):
    import keras

    from keras_seqmodels.layers import RNTN, TreeLSTM

    tokens = keras.Input((None,), dtype="string", name="tokens")
    children = keras.Input((None, 2), dtype="int32", name="children")
    levels = keras.Input((None,), dtype="int32", name="levels")
    ids = keras.layers.StringLookup(vocabulary=words, mask_token=None,
                                    num_oov_indices=1, name="vocabulary")(tokens)
    x = keras.layers.Embedding(len(words) + 1, embed_dim, name="embedding")(ids)
    x = keras.layers.Dropout(dropout)(x)
    if cell == "rntn":
        nodes, _ = RNTN(units, name="rntn")([x, children, levels])
    else:
        nodes, _ = TreeLSTM(units, name="tree_lstm")([x, children, levels])
    nodes = keras.layers.Dropout(dropout)(nodes)
    logits = keras.layers.Dense(num_classes, name="classifier")(nodes)
    return keras.Model([tokens, children, levels], logits, name="sst_treelstm")


def build_ensemble(words, members, num_classes=5):
    """Several trained networks behind one ``StringLookup``: per-node logits
    ``mean_m log_softmax(logits_m)``, whose softmax is the members'
    normalised geometric-mean probability. ``members``: list of
    ``(embed_dim, units)``; member ``i``'s layers are ``embedding_i``,
    ``tree_lstm_i``, ``classifier_i``."""
    import keras

    from keras_seqmodels.layers import RNTN, TreeLSTM

    tokens = keras.Input((None,), dtype="string", name="tokens")
    children = keras.Input((None, 2), dtype="int32", name="children")
    levels = keras.Input((None,), dtype="int32", name="levels")
    ids = keras.layers.StringLookup(vocabulary=words, mask_token=None,
                                    num_oov_indices=1, name="vocabulary")(tokens)
    probs = []  # log-probabilities
    for i, (embed_dim, units, *cell) in enumerate(members):
        x = keras.layers.Embedding(len(words) + 1, embed_dim, name=f"embedding_{i}")(ids)
        if cell and cell[0] == "rntn":
            nodes, _ = RNTN(units, name=f"rntn_{i}")([x, children, levels])
        else:
            nodes, _ = TreeLSTM(units, name=f"tree_lstm_{i}")([x, children, levels])
        logits = keras.layers.Dense(num_classes, name=f"classifier_{i}")(nodes)
        probs.append(keras.layers.Activation("log_softmax", name=f"log_probs_{i}")(logits))
    mean = keras.layers.Average(name="mean_log_probs")(probs)
    return keras.Model([tokens, children, levels], mean, name="sst_treelstm_ensemble")


def _load_members(folders):
    """``(shape, weights)`` per ``train_jax.py`` output folder; shape is
    ``(embed_dim, units, cell)``."""
    out = []
    for folder in folders:
        with open(os.path.join(folder, "history.json")) as f:
            hist = json.load(f)["args"]
        with np.load(os.path.join(folder, "best.npz")) as f:
            weights = {k.split("|", 1)[1]: f[k] for k in f.files}
        out.append(((hist["embed_dim"], hist["units"], hist.get("cell", "treelstm")), weights))
    return out


def _model_from_members(words, members):
    if len(members) == 1:
        model = build_model(words, *members[0][0][:2], cell=members[0][0][2])
        rename = [lambda path: path]
    else:
        model = build_ensemble(words, [m[0] for m in members])
        rename = [lambda path, i=i: path.replace("/", f"_{i}/", 1) for i in range(len(members))]
    by_path = {w.path: w for w in model.weights}
    for (_, weights), name in zip(members, rename):
        for path, value in weights.items():
            target = by_path[name(path)]
            if tuple(target.shape) != value.shape:
                raise ValueError(f"{NAME} assemble: {path} has shape {value.shape}, "
                                 f"the model's {name(path)} {tuple(target.shape)}")
            target.assign(value.astype("float32"))
    assigned = sum(len(m[1]) for m in members)
    if assigned != len(model.trainable_weights):
        raise ValueError(f"{NAME} assemble: {assigned} stored arrays for "
                         f"{len(model.trainable_weights)} weights")
    return model


def select_on_dev(words, members, folders, dev_trees, max_size):
    """Greedy forward selection (Caruana et al. 2004) of ensemble members by
    dev root fine-grained accuracy of the mean log-probabilities, or the first
    ``max_size`` members together when that scores higher on dev; returns the
    chosen indices and prints every member's and step's dev accuracy. A
    member's dev probabilities are read from ``FOLDER/dev_probs.npy`` when
    there (else computed and stored there)."""
    from keras_seqmodels.trees.serving import root_probabilities

    gold = np.array([t.labels[t.root] for t in dev_trees])
    logp = []
    for i, member in enumerate(members):
        cached = os.path.join(folders[i], "dev_probs.npy")
        if os.path.exists(cached):  # written by train_jax.py at the best epoch
            probs = np.load(cached).astype(np.float64)
        else:
            probs = root_probabilities(_model_from_members(words, [member]), dev_trees)
            np.save(cached, probs.astype(np.float32))
        logp.append(np.log(probs + 1e-12))
        print(f"member {i}: dev fine {np.mean(probs.argmax(1) == gold):.4f}", flush=True)
    chosen, best = [], -1.0
    while len(chosen) < max_size:
        scores = {i: np.mean(np.mean([logp[j] for j in chosen + [i]], 0).argmax(1) == gold)
                  for i in range(len(members)) if i not in chosen}
        if not scores:
            break
        i = max(scores, key=scores.get)
        if scores[i] <= best:
            break
        chosen.append(i)
        best = scores[i]
        print(f"ensemble {chosen}: dev fine {best:.4f}", flush=True)
    every = list(range(min(len(members), max_size)))
    score = np.mean(np.mean([logp[j] for j in every], 0).argmax(1) == gold)
    print(f"ensemble of the first {len(every)}: dev fine {score:.4f}", flush=True)
    return every if score > best else chosen


def assemble(args):
    """Copy ``train_jax.py`` weights (JAX, integer ids) into the string-input
    model: one member gives ``build_model``'s network, several an ensemble;
    with ``--select N`` the members are chosen on dev (at most N)."""
    import keras

    if not args.members or not args.out:
        raise ValueError(f"{NAME} assemble: give --members DIR [DIR ...] and --out PATH.keras")
    data_dir = resolve_data_dir(args.data_dir)
    words = build_vocabulary(load_split(data_dir, "train"))
    members = _load_members(args.members)
    if args.select:
        chosen = select_on_dev(words, members, args.members, load_split(data_dir, "dev"),
                               args.select)
        print("chosen members:", [args.members[i] for i in chosen])
        members = [members[i] for i in chosen]
    model = _model_from_members(words, members)
    model.save(args.out)
    keras.saving.load_model(args.out)  # loads back
    print(f"wrote {args.out} ({os.path.getsize(args.out) / 1e6:.1f} MB), "
          f"members {[m[0] for m in members]}")
    return 0


def root_metrics(model, trees, batch_size=64):
    """Root fine-grained and binary accuracy of ``model`` on ``trees``."""
    from keras_seqmodels.trees.serving import root_probabilities

    probs = root_probabilities(model, trees, batch_size=batch_size)
    gold = np.array([t.labels[t.root] for t in trees])
    fine = float(np.mean(probs.argmax(1) == gold))
    keep = gold != 2
    pos = probs[:, 3:].sum(1) > probs[:, :2].sum(1)
    binary = float(np.mean(pos[keep] == (gold[keep] > 2)))
    return {"fine_grained_accuracy": fine, "binary_accuracy": binary,
            "trees": len(trees), "binary_trees": int(keep.sum())}


def _sibling(name):
    """This folder's ``name.py``, loaded by path under a name of its own
    (``sst_treelstm_<name>``), not by a bare import that could return another
    zoo folder's module of the same name."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(f"sst_treelstm_{name}",
                                                  os.path.join(HERE, f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def init_skipgram_embeddings(model, words, train_trees, data_dir, args):
    """Start the embedding from skip-gram vectors trained for
    ``--skipgram-s`` seconds on the SST train sentences and the PTB train text
    (``train_jax.skipgram``, in JAX; cached in ``RUN_DIR/skipgram.npy``)."""
    gpu_data = _sibling("gpu_data")
    train_jax = _sibling("train_jax")
    path = os.path.join(args.run_dir, "skipgram.npy")
    corpus = gpu_data.corpus(train_trees, words, os.path.join(
        os.path.dirname(data_dir.rstrip("/")), "ptb", "ptb.train.txt"))
    if os.path.exists(path):
        vectors = np.load(path)
    else:
        vectors = train_jax.skipgram(corpus, len(words) + 1, args.embed_dim,
                                     args.skipgram_s, args.seed, print)
        np.save(path, vectors)
    emb = model.get_layer("embedding").embeddings
    trained = np.bincount(corpus[corpus >= 0], minlength=len(words) + 1) > 0
    emb.assign(np.where(trained[:, None], vectors, emb.numpy()).astype("float32"))


def train(args):
    import keras

    from keras_seqmodels.training import recipe_utils
    from keras_seqmodels.trees import tree_dataset

    keras.utils.set_random_seed(args.seed)
    data_dir = resolve_data_dir(args.data_dir)
    os.makedirs(args.run_dir, exist_ok=True)
    train_trees = load_split(data_dir, "train")
    dev_trees = load_split(data_dir, "dev")
    if args.limit:
        train_trees = train_trees[: args.limit]
        dev_trees = dev_trees[: args.limit // 4 + 1]
    words = build_vocabulary(train_trees)
    ds = tree_dataset(train_trees, args.batch_size, arity=2, shuffle=True, seed=args.seed)
    with recipe_utils.strategy_scope(args) as dist:
        model = build_model(words, args.embed_dim, args.units, args.dropout, cell=args.cell)
        if args.skipgram_s > 0:
            init_skipgram_embeddings(model, words, train_trees, data_dir, args)
        dist.compile(
            model, optimizer=keras.optimizers.Adam(args.lr),
            loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True,
                                                            ignore_class=-1),
        )
    best_path = os.path.join(args.run_dir, "best.keras")
    state_path = os.path.join(args.run_dir, "selection.json")

    class DevSelection(keras.callbacks.Callback):
        def on_epoch_end(self, epoch, logs=None):
            state = {"best": -1.0, "history": []}
            if os.path.exists(state_path):
                with open(state_path) as f:
                    state = json.load(f)
            m = root_metrics(self.model, dev_trees)
            m.update(epoch=epoch + 1, loss=float((logs or {}).get("loss", np.nan)),
                     time_s=time.time() - start)
            state["history"].append(m)
            if m["fine_grained_accuracy"] > state["best"]:
                state["best"] = m["fine_grained_accuracy"]
                state["best_epoch"] = epoch + 1
                self.model.save(best_path)
            with open(state_path, "w") as f:
                json.dump(state, f, indent=1)
            print(f"epoch {epoch + 1}: dev {m}", flush=True)

    class Progress(keras.callbacks.Callback):
        def on_train_batch_end(self, batch, logs=None):
            if batch % 50 == 0:
                print(f"  batch {batch} loss {float((logs or {}).get('loss', np.nan)):.4f}"
                      f" {time.time() - start:.0f} s", flush=True)

    start = time.time()
    model.fit(
        ds, epochs=args.epochs, verbose=2,
        callbacks=[
            keras.callbacks.BackupAndRestore(os.path.join(args.run_dir, "backup"),
                                             save_freq=50),
            DevSelection(),
            Progress(),
        ],
    )
    print(f"trained in {time.time() - start:.0f} s; best model {best_path}")
    return 0


def evaluate(args):
    import keras

    import keras_seqmodels  # noqa: F401  (registers the layers)

    if args.register and not args.model:
        raise FileNotFoundError(f"{NAME}: --register needs --model PATH (the .keras file)")
    data_dir = resolve_data_dir(args.data_dir)
    trees = load_split(data_dir, args.split)
    if args.model:
        model = keras.saving.load_model(args.model)
    else:
        from keras_seqmodels import zoo

        model = zoo.load(NAME).model
    start = time.time()
    metrics = root_metrics(model, trees)
    metrics["eval_time_s"] = round(time.time() - start, 1)
    print(json.dumps({"split": args.split, **metrics}, indent=1))
    if args.register:
        from keras_seqmodels.zoo.registry import register_model

        command = f"seqmodels evaluate {NAME} " + " ".join(args.argv)
        register_model(
            NAME, args.model, task="SST fine-grained sentiment (root, 5 classes)",
            metrics={f"{args.split}_{k}": v for k, v in metrics.items()
                     if k.endswith("accuracy")},
            data=f"Stanford Sentiment Treebank PTB trees, {args.split} split",
            command=command, card=f"zoo/{NAME}/card.md",
            extra=json.loads(args.extra) if args.extra else None,
        )
    return 0


def main(argv=None):
    from keras_seqmodels.training import recipe_utils

    argv = list(sys.argv[1:] if argv is None else argv)
    parser = argparse.ArgumentParser(prog=f"recipe {NAME}")
    parser.add_argument("action", choices=["train", "evaluate", "assemble"])
    recipe_utils.add_common_arguments(parser, epochs=12, batch_size=25)
    parser.add_argument("--split", default="test", choices=["train", "dev", "test"])
    parser.add_argument("--embed-dim", type=int, default=100)
    parser.add_argument("--units", type=int, default=120)
    parser.add_argument("--cell", default=CELL, choices=["treelstm", "rntn"],
                        help="composition: Tree-LSTM, or RNTN (then --embed-dim = --units)")
    parser.add_argument("--dropout", type=float, default=0.5)
    parser.add_argument("--lr", type=float, default=2e-3)
    parser.add_argument("--skipgram-s", type=float, default=0.0,
                        help="train: start the embeddings from skip-gram vectors trained "
                        "this many seconds (the shipped model: 90 s on the GPU)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--limit", type=int, default=0, help="train on the first N trees")
    parser.add_argument("--run-dir", default=RUN_DIR)
    parser.add_argument("--model", default=None, help=".keras file (default: the zoo's)")
    parser.add_argument("--register", action="store_true")
    parser.add_argument("--extra", default=None, help="JSON of extra index fields")
    parser.add_argument("--members", nargs="+", default=None,
                        help="assemble: train_jax.py output folders (best.npz, history.json)")
    parser.add_argument("--out", default=None, help="assemble: the .keras file to write")
    parser.add_argument("--select", type=int, default=0,
                        help="assemble: choose at most N members on dev (greedy)")
    args = parser.parse_args(argv)
    args.argv = argv[1:]
    if args.action == "assemble":
        return assemble(args)
    return train(args) if args.action == "train" else evaluate(args)


if __name__ == "__main__":
    sys.exit(main())
