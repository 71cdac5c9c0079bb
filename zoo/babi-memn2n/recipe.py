"""bAbI (en, 1k) jointly trained on the 20 tasks with a 3-hop MemN2N.

    python zoo/babi-memn2n/recipe.py train [--epochs 100] [--register]
    python zoo/babi-memn2n/recipe.py evaluate [--split test]
    python zoo/babi-memn2n/recipe.py register --model runs/babi-memn2n/best.keras
    seqmodels evaluate babi-memn2n --data-dir D

On an accelerator, many seeds at once (JAX, vectorised over seeds; the
validation split picks the seed, the test split is read once at register):

    python zoo/babi-memn2n/recipe.py export-arrays --out-dir runs/gpu/babi-memn2n
    KERAS_BACKEND=jax python zoo/babi-memn2n/seeds_jax.py \
        --data runs/gpu/babi-memn2n/babi.npz --out OUT --seeds 32
    python zoo/babi-memn2n/recipe.py assemble --result OUT --out-dir runs/babi-memn2n-gpu
    python zoo/babi-memn2n/recipe.py register --model runs/babi-memn2n-gpu/best.keras

The shipped model is an ensemble: ``assemble --ensemble 15 --result OUT1 OUT2
...`` picks members by greedy forward selection on the validation split and
saves one Keras model whose MemoryNetworks' answer probabilities are averaged
(``keras_seqmodels.layers.ProbabilityAverage``); see card.md.

Model (Sukhbaatar et al. 2015, the "PE LS RN joint" setting): d = 50, 3 hops,
adjacent weight tying, position and temporal encoding, the last 50
statements in memory; linear start (hop softmax removed until the validation
loss stops improving), random noise (10% empty memories inserted at training
time), SGD with batch 32 on the summed loss, learning rate 0.005 halved every
25 epochs (``--anneal-every``), gradients clipped to global norm 40 per 32
examples. The validation split (10% of
each task's training questions) selects the epoch; the test split is read
once for the card. `evaluate` prints the per-task table and, as its last
line, the mean test error (%).
"""

import argparse
import json
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
NAME = "babi-memn2n"
VOCAB_PATH = os.path.join(HERE, "vocab.json")
MEMORY_SIZE, SENTENCE_LENGTH, QUERY_LENGTH = 50, 11, 11


def default_data_dir():
    path = os.path.join(ROOT, "..", "shared", "data")
    return os.path.normpath(path) if os.path.isdir(path) else None


def resolve_data_dir(path):
    """Accept the shared data root, its ``babi`` folder or the ``en`` folder."""
    if path is None:
        raise FileNotFoundError(f"{NAME}: no --data-dir given and ../shared/data does not exist")
    for candidate in (path, os.path.join(path, "en"), os.path.join(path, "babi", "en")):
        if os.path.isdir(candidate) and any(
            f.startswith("qa") and f.endswith(".txt") for f in os.listdir(candidate)
        ):
            return candidate
    raise FileNotFoundError(f"{NAME}: no bAbI qa*_*.txt files under {path}")


def load_split(data_dir, split):
    """Per-task example lists of the ``train`` or ``test`` files."""
    from keras_seqmodels.data import babi

    return [babi.read_babi(f) for f in babi.task_files(data_dir, split)]


def split_train_valid(per_task, fraction=0.1, seed=0):
    """Hold out ``fraction`` of each task's training questions, by story."""
    rng = np.random.default_rng(seed)
    train, valid = [], []
    for examples in per_task:
        order = rng.permutation(len(examples))
        cut = int(round(fraction * len(examples)))
        held = set(order[:cut].tolist())
        valid.append([e for i, e in enumerate(examples) if i in held])
        train.append([e for i, e in enumerate(examples) if i not in held])
    return train, valid


def arrays(per_task, vocabulary):
    from keras_seqmodels.data import babi

    flat = [e for examples in per_task for e in examples]
    tasks = np.concatenate([np.full(len(ex), t + 1) for t, ex in enumerate(per_task)])
    stories, queries, answers = babi.vectorize(
        flat, vocabulary, MEMORY_SIZE, SENTENCE_LENGTH, QUERY_LENGTH
    )
    return stories, queries, answers, tasks


def build_model(vocab_size, linear_start=True, hops=3, embed_dim=50):
    import keras

    from keras_seqmodels.memory import MemoryNetwork

    # Any number of slots up to MEMORY_SIZE (batches of short stories are cut).
    stories = keras.Input((None, SENTENCE_LENGTH), dtype="int32", name="stories")
    queries = keras.Input((QUERY_LENGTH,), dtype="int32", name="queries")
    logits = MemoryNetwork(
        vocab_size,
        embed_dim,
        MEMORY_SIZE,
        hops=hops,
        linear_start=linear_start,
        name="memn2n",
    )([stories, queries])
    return keras.Model([stories, queries], logits, name=NAME)


def per_task_errors(model, stories, queries, answers, tasks, batch_size=256):
    logits = model.predict([stories, queries], batch_size=batch_size, verbose=0)
    correct = np.argmax(logits, axis=-1) == answers
    return {int(t): 100.0 * (1.0 - correct[tasks == t].mean()) for t in np.unique(tasks)}


def train(args):
    import keras

    from keras_seqmodels.data import babi

    keras.utils.set_random_seed(args.seed)
    data_dir = resolve_data_dir(args.data_dir)
    train_tasks, valid_tasks = split_train_valid(load_split(data_dir, "train"))
    vocabulary = babi.build_vocabulary([e for t in train_tasks + valid_tasks for e in t])
    x_train = arrays(train_tasks, vocabulary)
    x_valid = arrays(valid_tasks, vocabulary)
    os.makedirs(args.out_dir, exist_ok=True)
    with open(os.path.join(args.out_dir, "vocab.json"), "w") as f:
        json.dump({"vocabulary": vocabulary}, f)

    class NoisyStories(keras.utils.PyDataset):
        """Training batches with fresh random empty memories every epoch.

        Batches group stories of similar length and are cut to the slots in
        use (rounded up to a multiple of 8): the same result as 50 slots
        (empty slots get no attention) at a quarter of the compute.
        """

        def __init__(self, data, batch_size, rate, seed):
            super().__init__()
            self.stories, self.queries, self.answers = data[:3]
            self.batch_size, self.rate = batch_size, rate
            self.rng = np.random.default_rng(seed)
            lengths = (self.stories[:, :, 0] != 0).sum(axis=1)
            self.groups = [
                np.flatnonzero((lengths > lo) & (lengths <= hi))
                for lo, hi in ((-1, 8), (8, 16), (16, 32), (32, MEMORY_SIZE))
            ]
            self.batch_count = sum(int(np.ceil(len(g) / batch_size)) for g in self.groups)
            self.on_epoch_end()

        def __len__(self):
            return self.batch_count

        def on_epoch_end(self):
            batches = []
            for group in self.groups:
                order = self.rng.permutation(group)
                batches += [
                    order[i : i + self.batch_size] for i in range(0, len(order), self.batch_size)
                ]
            self.batches = [batches[i] for i in self.rng.permutation(len(batches))]
            self.noisy = babi.insert_empty_memories(self.stories, self.rate, self.rng)
            self.used = (self.noisy[:, :, 0] != 0).sum(axis=1)

        def __getitem__(self, i):
            idx = self.batches[i]
            width = min(MEMORY_SIZE, 8 * int(np.ceil(max(self.used[idx].max(), 1) / 8)))
            return (self.noisy[idx, :width], self.queries[idx]), self.answers[idx]

    class LinearStart(keras.callbacks.Callback):
        """Re-insert the hop softmax when the validation loss stops improving."""

        def __init__(self, layer, patience, max_epochs):
            super().__init__()
            self.layer, self.patience, self.max_epochs = layer, patience, max_epochs
            self.best, self.wait = np.inf, 0

        def on_epoch_end(self, epoch, logs=None):
            if float(keras.ops.convert_to_numpy(self.layer.attention_softmax)) == 1.0:
                return
            loss = logs["val_loss"]
            self.wait = 0 if loss < self.best else self.wait + 1
            self.best = min(self.best, loss)
            if self.wait >= self.patience or epoch + 1 >= self.max_epochs:
                self.layer.enable_softmax()
                print(f"\nlinear start ended after epoch {epoch + 1}", flush=True)

    class BestOnValid(keras.callbacks.Callback):
        """Save the model of best validation accuracy once the softmax is in."""

        def __init__(self, layer, path):
            super().__init__()
            self.layer, self.path, self.best = layer, path, -1.0

        def on_epoch_end(self, epoch, logs=None):
            softmax = float(keras.ops.convert_to_numpy(self.layer.attention_softmax))
            if softmax == 1.0 and logs["val_accuracy"] > self.best:
                self.best = logs["val_accuracy"]
                self.model.save(self.path)
                print(f"\nsaved best valid accuracy {self.best:.4f}", flush=True)

    from keras_seqmodels.training import recipe_utils

    with recipe_utils.strategy_scope(args) as dist:
        model = build_model(len(vocabulary), linear_start=not args.no_linear_start)
        layer = model.get_layer("memn2n")
        if args.init_from:
            # Continue from a saved model (its hop softmax state included).
            model.set_weights(keras.saving.load_model(args.init_from).get_weights())
        steps = int(np.ceil(len(x_train[2]) / args.batch_size))
        every = args.anneal_every
        boundaries = [steps * e for e in range(every, args.epochs, every)]
        schedule = args.learning_rate
        if boundaries:
            schedule = keras.optimizers.schedules.PiecewiseConstantDecay(
                boundaries,
                [args.learning_rate * 0.5**k for k in range(len(boundaries) + 1)],
            )
        dist.compile(
            model,
            # The paper clips the summed gradient of 32 examples at norm 40.
            optimizer=(keras.optimizers.SGD if args.optimizer == "sgd" else keras.optimizers.Adam)(
                schedule, global_clipnorm=40.0 * args.batch_size / 32
            ),
            loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True, reduction="sum"),
            metrics=["accuracy"],
            jit_compile=args.jit_compile,
        )
    best_path = os.path.join(args.out_dir, "best.keras")
    start = time.time()
    import tensorflow as tf

    noisy = NoisyStories(x_train, args.batch_size, args.noise, args.seed)

    def epoch_batches():
        # A new shuffle and new empty memories at every pass over the data.
        noisy.on_epoch_end()
        for i in range(len(noisy)):
            yield noisy[i]

    # tf.data with an explicit signature: batch widths vary (Keras's own
    # PyDataset adapter infers a fixed width from the first batches).
    train_data = tf.data.Dataset.from_generator(
        epoch_batches,
        output_signature=(
            (
                tf.TensorSpec((None, None, SENTENCE_LENGTH), tf.int32),
                tf.TensorSpec((None, QUERY_LENGTH), tf.int32),
            ),
            tf.TensorSpec((None,), tf.int32),
        ),
    ).prefetch(2)
    model.fit(
        train_data,
        validation_data=((x_valid[0], x_valid[1]), x_valid[2]),
        epochs=args.epochs,
        verbose=2,
        callbacks=[
            keras.callbacks.BackupAndRestore(os.path.join(args.out_dir, "backup")),
            LinearStart(layer, patience=args.ls_patience, max_epochs=args.ls_max_epochs),
            BestOnValid(layer, best_path),
        ],
    )
    elapsed = time.time() - start
    print(f"training time {elapsed:.0f} s", flush=True)
    with open(os.path.join(args.out_dir, "train_time.txt"), "w") as f:
        f.write(f"{elapsed:.0f}\n")
    best = keras.saving.load_model(best_path)
    valid_errors = per_task_errors(best, *x_valid)
    print("valid mean error (%):", f"{np.mean(list(valid_errors.values())):.2f}")
    if args.register:
        register(best_path, vocabulary, data_dir, args, elapsed)


def register(best_path, vocabulary, data_dir, args, elapsed):
    """Evaluate the selected model on the test split once and ship it."""
    import keras

    from keras_seqmodels.zoo.registry import register_model

    with open(VOCAB_PATH, "w") as f:
        json.dump({"vocabulary": vocabulary}, f, indent=0)
    model = keras.saving.load_model(best_path)
    errors = per_task_errors(model, *arrays(load_split(data_dir, "test"), vocabulary))
    mean = float(np.mean(list(errors.values())))
    register_model(
        NAME,
        best_path,
        task="bAbI QA (en, 1k), 20 tasks jointly trained",
        metrics={
            "test_mean_error_percent": round(mean, 2),
            "failed_tasks_over_5_percent": int(sum(e > 5.0 for e in errors.values())),
            "test_error_percent_per_task": {str(k): round(v, 2) for k, v in errors.items()},
        },
        data="bAbI v1.2 en 1k (../shared/data/babi/en); valid = 10% of each task's train",
        command="seqmodels evaluate babi-memn2n --data-dir ../shared/data",
        card="zoo/babi-memn2n/card.md",
        extra={
            "training_time_s": None if elapsed is None else round(elapsed),
            "sample_error_percent": round(sample_error(model, vocabulary), 2),
        },
        assets={"vocab": VOCAB_PATH},
    )


def train_valid_arrays(data_dir):
    """Vocabulary and the train/valid arrays, exactly as ``train`` makes them."""
    from keras_seqmodels.data import babi

    train_tasks, valid_tasks = split_train_valid(load_split(data_dir, "train"))
    vocabulary = babi.build_vocabulary([e for t in train_tasks + valid_tasks for e in t])
    return vocabulary, arrays(train_tasks, vocabulary), arrays(valid_tasks, vocabulary)


def export_arrays(args):
    """Write ``OUT_DIR/babi.npz`` (train and valid only) for ``seeds_jax.py``."""
    vocabulary, x_train, x_valid = train_valid_arrays(resolve_data_dir(args.data_dir))
    os.makedirs(args.out_dir, exist_ok=True)
    fields = ("stories", "queries", "answers", "tasks")
    np.savez_compressed(
        os.path.join(args.out_dir, "babi.npz"),
        vocab_size=np.int32(len(vocabulary)),
        **{f"train_{k}": v.astype("uint8") for k, v in zip(fields, x_train)},
        **{f"valid_{k}": v.astype("uint8") for k, v in zip(fields, x_valid)},
    )
    with open(os.path.join(args.out_dir, "vocab.json"), "w") as f:
        json.dump({"vocabulary": vocabulary}, f)
    print(f"wrote {os.path.join(args.out_dir, 'babi.npz')}")
    return 0


def seed_candidates(folders):
    """``(valid mean error, folder, index, seed)`` of every finished seed, best first."""
    candidates = []
    for folder in folders:
        run = np.load(os.path.join(folder, "seeds_best.npz"))
        for i, seed in enumerate(run["seeds"]):
            task_error = run["best_val_task_error"][i]
            if np.isfinite(task_error).all():
                candidates.append((float(task_error.mean()), folder, i, int(seed)))
    if not candidates:
        raise ValueError(f"recipe {NAME}: no finished seed in {folders}")
    return sorted(candidates)


def member_weights(folder, index):
    """The ``MemoryNetwork`` weights of seed ``index`` of a ``seeds_jax.py`` run."""
    run = np.load(os.path.join(folder, "seeds_best.npz"))
    return [
        run["embeddings"][index],
        run["temporal_embeddings"][index],
        np.asarray(1.0, "float32"),
    ]


def build_ensemble(vocab_size, members):
    """``[stories, queries]`` -> logits of the mean answer probability of the members.

    ``members``: a list of ``MemoryNetwork`` weight lists (``member_weights``);
    each member is its own ``MemoryNetwork`` layer (``memn2n_0``, ...), and
    ``ProbabilityAverage`` averages their softmax outputs. One member gives
    the recipe's single model.
    """
    import keras

    from keras_seqmodels.layers import ProbabilityAverage
    from keras_seqmodels.memory import MemoryNetwork

    if len(members) == 1:
        model = build_model(vocab_size, linear_start=False, embed_dim=members[0][0].shape[-1])
        model.get_layer("memn2n").set_weights(members[0])
        return model
    stories = keras.Input((None, SENTENCE_LENGTH), dtype="int32", name="stories")
    queries = keras.Input((QUERY_LENGTH,), dtype="int32", name="queries")
    logits = []
    for k, weights in enumerate(members):
        layer = MemoryNetwork(
            vocab_size, int(weights[0].shape[-1]), MEMORY_SIZE, hops=3, name=f"memn2n_{k}"
        )
        logits.append(layer([stories, queries]))
        layer.set_weights(weights)
    average = ProbabilityAverage(name="average")(logits)
    return keras.Model([stories, queries], average, name=NAME)


def task_mean_error(predictions, answers, tasks):
    """Mean over the tasks of the error (%) of ``predictions`` ``(..., questions)``."""
    wrong = predictions != answers
    return np.mean([100.0 * wrong[..., tasks == t].mean(axis=-1) for t in np.unique(tasks)], axis=0)


def greedy_selection(probabilities, answers, tasks, max_members):
    """Forward selection of ensemble members on the validation split.

    ``probabilities``: ``(candidates, questions, vocabulary)``, each
    candidate's answer probabilities. Starting from nothing, every step adds
    (without replacement) the candidate whose addition gives the mean
    probability of lowest mean task error, ties broken by the lower
    negative log-likelihood. Runs ``max_members`` steps and keeps the
    prefix of lowest error (ties: the lower NLL).

    Returns:
        ``(chosen indices, history)``: ``history[k]`` is ``(error, nll)`` of
        the first k + 1 members.
    """
    count, n, _ = probabilities.shape
    rows = np.arange(n)
    total = np.zeros(probabilities.shape[1:], "float64")
    chosen, history = [], []
    for step in range(min(max_members, count)):
        mean = (total[None] + probabilities) / (step + 1)
        error = task_mean_error(mean.argmax(-1), answers[None], tasks)
        nll = -np.log(np.maximum(mean[:, rows, answers], 1e-30)).mean(axis=1)
        error[chosen] = np.inf
        best = min(range(count), key=lambda c: (round(error[c], 6), nll[c]))
        chosen.append(best)
        total += probabilities[best]
        history.append((float(error[best]), float(nll[best])))
    keep = min(range(len(history)), key=lambda k: (round(history[k][0], 6), history[k][1]))
    return chosen[: keep + 1], history


def assemble(args):
    """Pick, on the validation split only, the best seed of ``seeds_jax.py`` runs.

    Reads ``seeds_best.npz`` of every ``--result`` folder, takes the seed of
    lowest mean validation error over the 20 tasks, loads its weights into
    the recipe's model (on any backend), re-measures the validation error
    (it must match the run's own record) and saves ``OUT_DIR/best.keras``.
    With ``--ensemble K`` it selects up to K seeds instead (``ensemble``).
    """
    if not args.result:
        raise ValueError(f"recipe {NAME} assemble: give --result FOLDER [FOLDER ...]")
    if args.ensemble > 1:
        return ensemble(args)
    vocabulary, _, x_valid = train_valid_arrays(resolve_data_dir(args.data_dir))
    candidates = seed_candidates(args.result)
    if args.export_top:
        # The best seeds' weights, to continue them (seeds_jax.py --init).
        top = candidates[: args.export_top]
        runs = {folder: np.load(os.path.join(folder, "seeds_best.npz")) for _, folder, _, _ in top}
        os.makedirs(args.out_dir, exist_ok=True)
        np.savez(
            os.path.join(args.out_dir, f"init_top{len(top)}.npz"),
            **{
                key: np.stack([runs[f][key][i] for _, f, i, _ in top])
                for key in ("embeddings", "temporal_embeddings")
            },
            source=np.array([f"{f}:{s}" for _, f, _, s in top]),
            valid_error=np.array([e for e, _, _, _ in top]),
        )
    error, folder, index, seed = candidates[0]
    model = build_ensemble(len(vocabulary), [member_weights(folder, index)])
    mean, errors = check_and_save(
        model,
        x_valid,
        error,
        0.3,
        args.out_dir,
        vocabulary,
        f"selected {folder} seed {seed}",
        "the run's record (assemble): the weights did not load as trained",
    )
    write_selection(
        args.out_dir,
        {
            "selected": {"folder": folder, "seed": seed, "valid_mean_error": mean},
            "valid_error_per_task": errors,
            "candidates": [
                {"valid_mean_error": round(e, 3), "folder": fo, "seed": s}
                for e, fo, _, s in candidates
            ],
        },
    )
    print(f"valid errors of all seeds: {[round(c[0], 2) for c in candidates]}")
    return 0


def ensemble(args):
    """An ensemble of up to ``--ensemble`` seeds, selected on the validation split.

    Every finished seed of the ``--result`` runs is loaded into the recipe's
    model on the current backend; its validation error must match the run's
    own record (within 0.3 points, float round-off of another device).
    ``greedy_selection`` then picks the members from their validation
    answer probabilities; the ensemble model (``build_ensemble``) is
    re-measured on the validation split and must give the selection's error.
    Saves ``OUT_DIR/best.keras``, ``vocab.json`` and ``selection.json``.
    """
    vocabulary, _, x_valid = train_valid_arrays(resolve_data_dir(args.data_dir))
    stories, queries, answers, tasks = x_valid
    candidates = seed_candidates(args.result)
    probabilities, models = [], {}
    for error, folder, index, seed in candidates:
        weights = member_weights(folder, index)
        dim = int(weights[0].shape[-1])
        if dim not in models:
            # One model per embedding size; its compiled predict serves every seed.
            models[dim] = build_model(len(vocabulary), linear_start=False, embed_dim=dim)
        model = models[dim]
        model.get_layer("memn2n").set_weights(weights)
        logits = model.predict([stories, queries], batch_size=500, verbose=0)
        logits = logits - logits.max(axis=-1, keepdims=True)
        probs = np.exp(logits) / np.exp(logits).sum(axis=-1, keepdims=True)
        mean = float(task_mean_error(probs.argmax(-1), answers, tasks))
        if abs(mean - error) > 0.3:
            raise RuntimeError(
                f"recipe {NAME} ensemble: {folder} seed {seed}: valid error {mean:.2f}% "
                f"differs from the run's record {error:.2f}%"
            )
        probabilities.append(probs)
    probabilities = np.stack(probabilities)
    chosen, history = greedy_selection(probabilities, answers, tasks, args.ensemble)
    selected_error, selected_nll = history[len(chosen) - 1]
    for k, (e, nll) in enumerate(history):
        print(f"greedy {k + 1} members: valid mean error {e:.2f}% nll {nll:.4f}")
    singles = task_mean_error(probabilities.argmax(-1), answers[None], tasks)
    print(f"best single seed: valid mean error {singles.min():.2f}%")
    for k in (3, 5, 10):
        # Top-k by each seed's own valid error, for comparison only.
        top = np.argsort(singles, kind="stable")[:k]
        e = task_mean_error(probabilities[top].mean(0).argmax(-1), answers, tasks)
        print(f"top-{k} by single valid error: valid mean error {float(e):.2f}%")
    members = [member_weights(candidates[c][1], candidates[c][2]) for c in chosen]
    model = build_ensemble(len(vocabulary), members)
    mean, errors = check_and_save(
        model,
        x_valid,
        selected_error,
        0.1,
        args.out_dir,
        vocabulary,
        f"ensemble of {len(chosen)}",
        "the selection's (ensemble)",
    )
    write_selection(
        args.out_dir,
        {
            "procedure": "greedy forward selection on valid, without replacement, "
            f"at most {args.ensemble} members",
            "members": [
                {
                    "folder": candidates[c][1],
                    "seed": candidates[c][3],
                    "single_valid_mean_error": round(float(singles[c]), 3),
                }
                for c in chosen
            ],
            "valid_mean_error": mean,
            "valid_nll": selected_nll,
            "valid_error_per_task": errors,
            "greedy_history": [{"error": e, "nll": n} for e, n in history],
            "best_single_valid_mean_error": float(singles.min()),
        },
    )
    return 0


def check_and_save(model, x_valid, expected, tolerance, out_dir, vocabulary, what, against):
    """Valid errors of an assembled ``model``; saves it (with the vocabulary)
    only if its mean matches ``expected`` within ``tolerance`` points."""
    errors = per_task_errors(model, *x_valid)
    mean = float(np.mean(list(errors.values())))
    print(f"{what}: valid mean error {mean:.2f}% (expected: {expected:.2f}%)")
    if abs(mean - expected) > tolerance:
        raise RuntimeError(
            f"recipe {NAME}: the assembled model's valid error {mean:.2f}% differs from "
            f"{against} {expected:.2f}%"
        )
    os.makedirs(out_dir, exist_ok=True)
    model.save(os.path.join(out_dir, "best.keras"))
    with open(os.path.join(out_dir, "vocab.json"), "w") as f:
        json.dump({"vocabulary": vocabulary}, f)
    return mean, errors


def write_selection(out_dir, record):
    with open(os.path.join(out_dir, "selection.json"), "w") as f:
        json.dump(record, f, indent=1)


def sample_error(model, vocabulary, sample_dir=None):
    """Mean error (%) over the 20 tasks of the committed test sample."""
    sample_dir = sample_dir or os.path.join(ROOT, "tests", "fixtures", "babi")
    errors = per_task_errors(model, *arrays(load_split(sample_dir, "test"), vocabulary))
    return float(np.mean(list(errors.values())))


def evaluate(args):
    import keras

    from keras_seqmodels import zoo

    if args.model:
        model = keras.saving.load_model(args.model, safe_mode=True)
        vocab_path = os.path.join(os.path.dirname(args.model), "vocab.json")
    else:
        model = zoo.load(NAME).model
        vocab_path = zoo.asset_path(NAME, "vocab")
    with open(vocab_path) as f:
        vocabulary = json.load(f)["vocabulary"]
    data_dir = resolve_data_dir(args.data_dir)
    if args.split == "test":
        per_task = load_split(data_dir, "test")
    else:
        train_tasks, valid_tasks = split_train_valid(load_split(data_dir, "train"))
        per_task = valid_tasks if args.split == "valid" else train_tasks
    errors = per_task_errors(model, *arrays(per_task, vocabulary))
    print(f"{'task':>4}  error (%)  [{args.split}]")
    for task, error in errors.items():
        print(f"{task:>4}  {error:8.1f}")
    print(f"failed tasks (error > 5%): {sum(e > 5.0 for e in errors.values())}")
    print(f"{np.mean(list(errors.values())):.2f}")
    return 0


def main(argv=None):
    parser = argparse.ArgumentParser(prog=f"recipe {NAME}")
    from keras_seqmodels.training import recipe_utils

    parser.add_argument(
        "action", choices=["train", "evaluate", "register", "export-arrays", "assemble"]
    )
    # --data-dir, --epochs, --batch-size, --strategy, --tpu, --precision.
    recipe_utils.add_common_arguments(parser, epochs=100, batch_size=32)
    parser.add_argument("--learning-rate", type=float, default=0.005)
    parser.add_argument(
        "--optimizer",
        default="sgd",
        choices=["sgd", "adam"],
        help="sgd as in the paper; adam converges in fewer epochs (used on a shared CPU)",
    )
    parser.add_argument("--noise", type=float, default=0.1)
    parser.add_argument("--anneal-every", type=int, default=25)
    parser.add_argument("--ls-patience", type=int, default=3)
    parser.add_argument("--ls-max-epochs", type=int, default=30)
    parser.add_argument("--no-linear-start", action="store_true")
    parser.add_argument("--init-from", default=None, help="continue from this .keras model")
    parser.add_argument(
        "--jit-compile",
        type=lambda v: v.lower() in ("1", "true", "yes"),
        default=True,
        help="XLA-compile the train step (3x less CPU time on TensorFlow)",
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--result",
        nargs="+",
        default=[],
        help="assemble: folders of seeds_jax.py runs (each with seeds_best.npz)",
    )
    parser.add_argument(
        "--export-top",
        type=int,
        default=0,
        help="assemble: also write OUT_DIR/init_topN.npz, the N best seeds (by valid)",
    )
    parser.add_argument(
        "--ensemble",
        type=int,
        default=1,
        help="assemble: an ensemble of up to K seeds, chosen by greedy selection on valid",
    )
    parser.add_argument("--split", default="test", choices=["train", "valid", "test"])
    parser.add_argument("--model", default=None, help="evaluate this .keras file")
    parser.add_argument("--out-dir", default=os.path.join(ROOT, "runs", NAME))
    parser.add_argument("--register", action="store_true")
    parser.add_argument("--training-time", type=float, default=None, help="seconds, for register")
    args = parser.parse_args(argv)
    if args.action == "export-arrays":
        return export_arrays(args)
    if args.action == "assemble":
        return assemble(args)
    if args.action == "register":
        # Ship a model trained earlier (e.g. the best checkpoint of a stopped run).
        with open(os.path.join(os.path.dirname(args.model), "vocab.json")) as f:
            vocabulary = json.load(f)["vocabulary"]
        register(args.model, vocabulary, resolve_data_dir(args.data_dir), args, args.training_time)
        return 0
    return train(args) if args.action == "train" else evaluate(args)


if __name__ == "__main__":
    sys.path.insert(0, ROOT)
    sys.exit(main(sys.argv[1:]))
