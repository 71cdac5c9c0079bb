"""ud-ewt-upos: BiLSTM + character-LSTM UPOS tagger with a CRF output layer.

    seqmodels train ud-ewt-upos [--data-dir D] [--epochs N] [--no-crf]
    seqmodels evaluate ud-ewt-upos [--data-dir D] [--split dev|test] [--model PATH]

Data: UD English EWT r2.16 through the local TFDS builder
(``keras_seqmodels.data.tfds_builders.UdEnglishEwt``), bucketed by length.
Model selection (best epoch) on dev; the test split is scored once, for the
card. The saved model maps whitespace-tokenised sentence strings to UPOS tag
strings (the vocabularies live inside it).
"""

import argparse
import collections
import json
import os
import sys
import time

import numpy as np

NAME = "ud-ewt-upos"
HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
DEFAULT_DATA = os.path.join(os.path.dirname(REPO), "shared", "data")
FILES = {"train": "en_ewt-ud-train.conllu", "dev": "en_ewt-ud-dev.conllu",
         "test": "en_ewt-ud-test.conllu"}  # fmt: skip
WORD_DROPOUT_ALPHA = 0.25


def resolve_data_dir(path):
    """Accept the shared data root or the ``ud_english_ewt`` folder itself."""
    if path is None:
        path = DEFAULT_DATA
    if os.path.isfile(os.path.join(path, FILES["train"])):
        return path
    sub = os.path.join(path, "ud_english_ewt")
    if os.path.isfile(os.path.join(sub, FILES["train"])):
        return sub
    raise FileNotFoundError(f"{NAME}: no {FILES['train']} in {path} or {sub}; pass --data-dir")


def load_split(data_dir, split, tfds_dir):
    """(words, tags) sentence lists of a split, read through the TFDS builder."""
    from keras_seqmodels.data.tfds_builders import UPOS_TAGS, load_local

    ds = load_local("ud_english_ewt", data_dir, split, tfds_dir)
    out = []
    for ex in ds.as_numpy_iterator():
        words = [w.decode("utf-8") for w in ex["words"]]
        out.append((words, [UPOS_TAGS[i] for i in ex["upos"]]))
    return out


def build_vocabularies(train):
    words = collections.Counter(w.lower() for ws, _ in train for w in ws)
    chars = collections.Counter(c for ws, _ in train for w in ws for c in w)
    word_vocab = [w for w, _ in sorted(words.items(), key=lambda kv: (-kv[1], kv[0]))]
    char_vocab = [c for c, _ in sorted(chars.items(), key=lambda kv: (-kv[1], kv[0]))]
    return word_vocab, char_vocab, words


def make_dataset(sentences, vectorizer, tags, batch_tokens, shuffle, drop_prob=None, seed=0):
    """tf.data: bucket by length, vectorise, optionally word dropout."""
    import tensorflow as tf

    tag_index = {t: i for i, t in enumerate(tags)}
    texts = [" ".join(ws) for ws, _ in sentences]
    ids = tf.ragged.constant([[tag_index[t] for t in ts] for _, ts in sentences], dtype=tf.int32)
    ds = tf.data.Dataset.from_tensor_slices((texts, ids))
    if shuffle:
        ds = ds.shuffle(len(texts), seed=seed, reshuffle_each_iteration=True)
    boundaries = [8, 12, 16, 20, 25, 30, 40, 50, 70]
    batch_sizes = [max(1, batch_tokens // b) for b in boundaries + [160]]
    ds = ds.map(lambda s, t: (s, t.to_tensor() if hasattr(t, "to_tensor") else t))
    ds = ds.bucket_by_sequence_length(
        lambda s, t: tf.shape(t)[0], boundaries, batch_sizes, padding_values=(None, 0)
    )
    table = None if drop_prob is None else tf.constant(drop_prob, tf.float32)

    def vectorise(s, t):
        word_ids, char_ids = vectorizer(s)
        if table is not None:
            p = tf.gather(table, word_ids)
            drop = tf.random.uniform(tf.shape(word_ids)) < p
            word_ids = tf.where(drop & (word_ids > 1), tf.ones_like(word_ids), word_ids)
        return (word_ids, char_ids, t), t

    return ds.map(vectorise, num_parallel_calls=2).prefetch(2)


def build_models(word_vocab, char_vocab, tags, use_crf=True, word_dim=100,
                 char_dim=32, char_units=64, units=150, dropout=0.33):  # fmt: skip
    """Training model (ids + gold tags → tags, CRF loss) and the ids model."""
    import keras

    from keras_seqmodels.layers import CRF, CharacterEncoder

    word_ids = keras.Input((None,), dtype="int32", name="word_ids")
    char_ids = keras.Input((None, None), dtype="int32", name="char_ids")
    gold = keras.Input((None,), dtype="int32", name="tags")
    words = keras.layers.Embedding(len(word_vocab) + 2, word_dim, mask_zero=True,
                                   name="word_embedding")(word_ids)  # fmt: skip
    chars = CharacterEncoder(len(char_vocab) + 2, char_dim, char_units, name="chars")(char_ids)
    x = keras.layers.Concatenate()([words, chars])
    x = keras.layers.Dropout(dropout)(x)
    for i in range(2):
        x = keras.layers.Bidirectional(
            keras.layers.LSTM(units, return_sequences=True), name=f"bilstm_{i}"
        )(x)
        x = keras.layers.Dropout(dropout)(x)
    potentials = keras.layers.Dense(len(tags), name="potentials")(x)
    if use_crf:
        crf = CRF(len(tags), name="crf")
        train_out = crf(potentials, tags=gold)
        infer_out = crf(potentials)
        train = keras.Model([word_ids, char_ids, gold], train_out)
    else:
        train = keras.Model([word_ids, char_ids, gold], potentials)
        # A frozen CRF with zero transitions decodes to the per-word argmax.
        infer_out = CRF(len(tags), trainable=False, name="argmax")(potentials)
    infer = keras.Model([word_ids, char_ids], infer_out, name="tagger_ids")
    return train, infer


def build_serving_model(infer, vectorizer, tags):
    """strings (batch,) → UPOS strings (batch, words); '' at padding."""
    import keras

    from keras_seqmodels.layers import TagLookup

    sentences = keras.Input((), dtype="string", name="sentences")
    word_ids, char_ids = vectorizer(sentences)
    tag_ids = infer([word_ids, char_ids])
    out = TagLookup(list(tags), name="tag_strings")([tag_ids, word_ids])
    return keras.Model(sentences, out, name="ud_ewt_upos")


def tag_sentences(model, sentences, batch_size=256):
    """Run a serving model over whitespace-tokenised sentence strings."""
    # Sorted by length so each batch pads little; results in input order.
    order = sorted(range(len(sentences)), key=lambda i: len(sentences[i].split()))
    out = [None] * len(sentences)
    for i in range(0, len(order), batch_size):
        idx = order[i : i + batch_size]
        batch = np.array([sentences[j] for j in idx], dtype=object)
        pred = np.asarray(model.predict_on_batch(batch))
        for j, row in zip(idx, pred):
            out[j] = [t.decode("utf-8") for t in row if t]
    return out


def score(model, sentences, train_words):
    """Overall and out-of-vocabulary UPOS accuracy over syntactic words."""
    pred = tag_sentences(model, [" ".join(ws) for ws, _ in sentences])
    correct = total = oov_correct = oov_total = 0
    for (words, gold), tags in zip(sentences, pred):
        if len(tags) != len(gold):
            raise RuntimeError(f"{NAME}: {len(tags)} tags for {len(gold)} words")
        for w, g, p in zip(words, gold, tags):
            correct += g == p
            total += 1
            if w.lower() not in train_words:
                oov_correct += g == p
                oov_total += 1
    return {
        "upos_accuracy": correct / total,
        "oov_upos_accuracy": oov_correct / max(oov_total, 1),
        "tokens": total,
        "oov_tokens": oov_total,
    }


class DevSelection:
    """Keeps the serving model of the best dev epoch (state survives restarts)."""

    def __init__(self, serving, dev, train_words, run_dir):
        import keras

        class _Callback(keras.callbacks.Callback):
            def on_epoch_end(cb, epoch, logs=None):
                self.on_epoch_end(epoch, logs)

        self.callback = _Callback()
        self.serving, self.dev, self.train_words = serving, dev, train_words
        self.state_path = os.path.join(run_dir, "selection.json")
        self.best_path = os.path.join(run_dir, "best.keras")
        self.state = {"best": -1.0, "epoch": -1, "history": []}
        if os.path.isfile(self.state_path):
            with open(self.state_path) as f:
                self.state = json.load(f)

    def on_epoch_end(self, epoch, logs):
        t = time.time()
        metrics = score(self.serving, self.dev, self.train_words)
        entry = {"epoch": epoch + 1, "loss": float((logs or {}).get("loss", np.nan)),
                 "dev": metrics, "eval_s": round(time.time() - t, 1),
                 "time": time.strftime("%H:%M:%S")}  # fmt: skip
        self.state["history"].append(entry)
        if metrics["upos_accuracy"] > self.state["best"]:
            self.state.update(best=metrics["upos_accuracy"], epoch=epoch + 1)
            self.serving.save(self.best_path)
        with open(self.state_path, "w") as f:
            json.dump(self.state, f, indent=1)
        print(json.dumps(entry), flush=True)


def TimeBudget(minutes):
    """Stop after the epoch that ends past ``minutes`` of training (0: never)."""
    import keras

    class _TimeBudget(keras.callbacks.Callback):
        def on_train_begin(self, logs=None):
            self.start = time.time()

        def on_epoch_end(self, epoch, logs=None):
            if minutes and time.time() - self.start > 60 * minutes:
                print(f"{NAME}: time budget of {minutes} min reached", flush=True)
                self.model.stop_training = True

    return _TimeBudget()


def train(args):
    import keras
    import tensorflow as tf

    from keras_seqmodels.data.tfds_builders import UPOS_TAGS
    from keras_seqmodels.layers import SentenceVectorizer
    from keras_seqmodels.training import recipe_utils

    keras.utils.set_random_seed(args.seed)
    data_dir = resolve_data_dir(args.data_dir)
    os.makedirs(args.run_dir, exist_ok=True)
    tfds_dir = os.path.join(args.run_dir, "tfds")
    train_s = load_split(data_dir, "train", tfds_dir)
    dev_s = load_split(data_dir, "dev", tfds_dir)
    if args.limit:
        train_s, dev_s = train_s[: args.limit], dev_s[: args.limit // 4 + 1]
    word_vocab, char_vocab, counts = build_vocabularies(train_s)
    vectorizer = SentenceVectorizer(word_vocab, char_vocab, max_chars=20, name="vectorizer")
    drop = np.zeros(len(word_vocab) + 2, "float32")
    drop[2:] = [WORD_DROPOUT_ALPHA / (WORD_DROPOUT_ALPHA + counts[w]) for w in word_vocab]
    train_ds = make_dataset(
        train_s, vectorizer, UPOS_TAGS, args.batch_tokens, True, drop, args.seed
    )
    # --strategy / --precision through recipe_utils; batches here hold
    # --batch-tokens words each (bucketed by length), --batch-size is unused.
    with recipe_utils.strategy_scope(args) as dist:
        train_model, infer = build_models(
            word_vocab, char_vocab, UPOS_TAGS, **core_config(args)
        )
        optimizer = keras.optimizers.Adam(args.lr, beta_2=0.9, clipnorm=5.0)
        if args.no_crf:
            dist.compile(
                train_model, optimizer,
                loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
            )  # fmt: skip
        else:
            dist.compile(train_model, optimizer, loss=None)
    serving = build_serving_model(infer, vectorizer, UPOS_TAGS)
    selection = DevSelection(serving, dev_s, set(counts), args.run_dir)
    print(f"{NAME}: {len(train_s)} train / {len(dev_s)} dev sentences, "
          f"{len(word_vocab)} words, {len(char_vocab)} chars, "
          f"{train_model.count_params()} parameters", flush=True)  # fmt: skip
    start = time.time()
    train_model.fit(
        train_ds,
        epochs=args.epochs,
        verbose=2,
        callbacks=[
            keras.callbacks.BackupAndRestore(
                os.path.join(args.run_dir, "backup"), delete_checkpoint=False
            ),
            selection.callback,
            keras.callbacks.LearningRateScheduler(
                lambda epoch, lr: args.lr * (args.lr_decay**epoch)
            ),
            TimeBudget(args.max_minutes),
        ],
    )
    elapsed = time.time() - start
    info = {"train_seconds": round(elapsed, 1), "epochs": args.epochs,
            "best_epoch": selection.state["epoch"], "best_dev": selection.state["best"],
            "parameters": int(train_model.count_params()),
            "tf": tf.__version__, "keras": keras.__version__}  # fmt: skip
    with open(os.path.join(args.run_dir, "train_info.json"), "w") as f:
        json.dump(info, f, indent=1)
    print(json.dumps(info))


def evaluate(args):
    import keras

    import keras_seqmodels  # noqa: F401  (registers the layers)

    data_dir = resolve_data_dir(args.data_dir)
    tfds_dir = os.path.join(args.run_dir, "tfds")
    if args.model:
        model = keras.saving.load_model(args.model, compile=False, safe_mode=True)
    else:
        from keras_seqmodels import zoo

        model = zoo.load(NAME).model
    train_words = {w.lower() for ws, _ in load_split(data_dir, "train", tfds_dir) for w in ws}
    sentences = load_split(data_dir, args.split, tfds_dir)
    metrics = score(model, sentences, train_words)
    for key, value in metrics.items():
        print(
            f"{args.split}_{key}: {value:.4f}"
            if isinstance(value, float)
            else f"{args.split}_{key}: {value}"
        )
    print(f"{metrics['upos_accuracy']:.4f}")
    return metrics


# prepare / fit / assemble: the integer core trained on any backend (JAX GPU)

WIDTHS = (16, 32, 64, 160)  # padded sentence lengths: a few shapes for XLA
CORE_KEYS = ("word_dim", "char_dim", "char_units", "units", "dropout", "use_crf")


def prepare(args):
    """Vectorise train/dev with the string model's own layer into arrays.npz.

    Rows are flattened: ``{split}_words`` (tokens,), ``{split}_chars``
    (tokens, max_chars), ``{split}_tags`` and ``{split}_offsets``
    (sentences + 1,). ``drop`` holds the word-dropout probability of each id.
    """
    from keras_seqmodels.data.tfds_builders import UPOS_TAGS
    from keras_seqmodels.layers import SentenceVectorizer

    data_dir = resolve_data_dir(args.data_dir)
    os.makedirs(args.work_dir, exist_ok=True)
    tfds_dir = os.path.join(args.run_dir, "tfds")
    splits = {s: load_split(data_dir, s, tfds_dir) for s in ("train", "dev")}
    word_vocab, char_vocab, counts = build_vocabularies(splits["train"])
    vectorizer = SentenceVectorizer(word_vocab, char_vocab, max_chars=20, name="vectorizer")
    tag_index = {t: i for i, t in enumerate(UPOS_TAGS)}
    arrays = {}
    for split, sentences in splits.items():
        words, chars = [], []
        for i in range(0, len(sentences), 500):
            chunk = sentences[i : i + 500]
            w, c = vectorizer(np.array([" ".join(ws) for ws, _ in chunk], dtype=object))
            w, c = np.asarray(w), np.asarray(c)
            for row, (ws, _) in enumerate(chunk):
                n = len(ws)
                words.append(w[row, :n])
                part = np.zeros((n, 20), np.uint8)
                part[:, : c.shape[2]] = c[row, :n, :20]
                chars.append(part)
        lengths = [len(ws) for ws, _ in sentences]
        arrays[f"{split}_words"] = np.concatenate(words).astype(np.int32)
        arrays[f"{split}_chars"] = np.concatenate(chars)
        arrays[f"{split}_tags"] = np.array(
            [tag_index[t] for _, ts in sentences for t in ts], np.uint8
        )
        arrays[f"{split}_offsets"] = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    drop = np.zeros(len(word_vocab) + 2, "float32")
    drop[2:] = [WORD_DROPOUT_ALPHA / (WORD_DROPOUT_ALPHA + counts[w]) for w in word_vocab]
    arrays["drop"] = drop
    np.savez_compressed(os.path.join(args.work_dir, "arrays.npz"), **arrays)
    with open(os.path.join(args.work_dir, "vocab.json"), "w", encoding="utf-8") as f:
        json.dump({"words": word_vocab, "chars": char_vocab, "tags": list(UPOS_TAGS)}, f,
                  ensure_ascii=False)  # fmt: skip
    print(f"{NAME}: arrays for {', '.join(f'{s} {len(v)}' for s, v in splits.items())} "
          f"sentences in {args.work_dir}", flush=True)  # fmt: skip


def pad_batches(data, split, batch_size, rng=None, drop=None):
    """Fixed-shape batches ``(words, chars, tags)`` of ``batch_size`` rows
    (fewer for sentences over 64 words).

    Sentences are sorted by length (with random tie-breaking when ``rng``
    is given) and padded to the next width of ``WIDTHS``; a short last batch
    of a width is topped up with repeats of its own rows (``rows`` says
    which sentence each row holds, so scoring counts each once). ``drop``
    replaces word ids by the unknown id 1 with that per-id probability.
    """
    words, chars, tags = (data[f"{split}_{k}"] for k in ("words", "chars", "tags"))
    offsets = data[f"{split}_offsets"]
    lengths = np.diff(offsets)
    if drop is not None:
        hit = rng.random(len(words)) < drop[words]
        words = np.where(hit & (words > 1), 1, words).astype(np.int32)
    noise = rng.random(len(lengths)) if rng is not None else np.zeros(len(lengths))
    width_of = np.array([next(w for w in WIDTHS if w >= n) for n in lengths])
    batches = []
    for width in WIDTHS:
        members = np.flatnonzero(width_of == width)
        members = members[np.argsort(lengths[members] + noise[members], kind="stable")]
        # Beyond 64 words, fewer rows: no batch holds more than 64 * batch_size words.
        size = max(1, batch_size * 64 // width) if width > 64 else batch_size
        for i in range(0, len(members), size):
            rows = members[i : i + size]
            real = len(rows)
            if real < size:
                rows = np.concatenate([rows, np.resize(rows, size - real)])
            w = np.zeros((size, width), np.int32)
            c = np.zeros((size, width, chars.shape[1]), np.int32)
            t = np.zeros((size, width), np.int32)
            for r, s in enumerate(rows):
                a, b = offsets[s], offsets[s + 1]
                w[r, : b - a], c[r, : b - a], t[r, : b - a] = words[a:b], chars[a:b], tags[a:b]
            batches.append(((w, c, t), t, rows[:real]))
    if rng is not None:
        rng.shuffle(batches)
    return batches


def score_ids(infer, batches):
    """Accuracy overall and on unknown-word tokens (id 1) of id batches."""
    correct = total = oov_correct = oov_total = 0
    for (w, c, t), _, rows in batches:
        pred = np.asarray(infer.predict_on_batch([w, c]))[: len(rows)]
        w, t = w[: len(rows)], t[: len(rows)]
        real = w > 0
        hit = (pred == t) & real
        correct += int(hit.sum())
        total += int(real.sum())
        oov_correct += int((hit & (w == 1)).sum())
        oov_total += int((w == 1).sum())
    return {"upos_accuracy": correct / total, "oov_upos_accuracy": oov_correct / max(oov_total, 1),
            "tokens": total, "oov_tokens": oov_total}  # fmt: skip


def save_weights(path, model, float16=False, **info):
    """``model.get_weights()`` as ``arr_0..`` (float16 if asked: half the
    upload) plus scalar ``info`` entries (dev accuracy, epoch), atomically."""
    dtype = np.float16 if float16 else None
    arrays = {f"arr_{i}": np.asarray(w).astype(dtype or np.asarray(w).dtype)
              for i, w in enumerate(model.get_weights())}  # fmt: skip
    tmp = path[: -len(".npz")] + ".tmp.npz"
    np.savez(tmp, **arrays, **{k: np.asarray(v) for k, v in info.items()})
    os.replace(tmp, path)


def load_weights(path):
    """The float32 weight list written by ``save_weights``."""
    stored = np.load(path)
    count = sum(k.startswith("arr_") for k in stored.files)
    return [stored[f"arr_{i}"].astype("float32") for i in range(count)]


def core_config(args):
    return {"word_dim": args.word_dim, "char_dim": args.char_dim, "char_units": args.char_units,
            "units": args.units, "dropout": args.dropout, "use_crf": not args.no_crf}  # fmt: skip


def fit(args):
    """Train the id core on arrays.npz (any backend), keep the best dev epoch.

    Writes to ``--out``: ``best_weights.npz`` (the training model's weights,
    saved whenever dev accuracy improves), ``history.json`` and the config.
    Stops cleanly before ``--max-seconds`` of wall time.
    """
    import keras

    start = time.time()
    data = np.load(os.path.join(args.work_dir, "arrays.npz"))
    with open(os.path.join(args.work_dir, "vocab.json"), encoding="utf-8") as f:
        vocab = json.load(f)
    out = args.out or args.work_dir
    os.makedirs(out, exist_ok=True)
    keras.utils.set_random_seed(args.seed)
    rng = np.random.default_rng([args.seed, args.start_epoch])
    if args.strategy != "default":
        raise SystemExit(f"{NAME} fit: --strategy {args.strategy} needs `train` (TensorFlow)")
    keras.config.set_dtype_policy(args.precision)
    config = core_config(args)
    init = None
    if args.init_weights and args.init_weights.endswith(".keras"):
        # warm start from a saved string model (same vocabularies; the
        # architecture options must match it): its id core, layer by layer
        import keras_seqmodels  # noqa: F401  (registers the layers)

        serving = keras.saving.load_model(args.init_weights, compile=False, safe_mode=True)
        init = serving.get_layer("tagger_ids")
    elif args.init_weights:  # warm start from an earlier fit (same config)
        with open(os.path.join(os.path.dirname(args.init_weights), "history.json")) as f:
            config = json.load(f)["config"]
        init = load_weights(args.init_weights)
    train_model, infer = build_models(vocab["words"], vocab["chars"], vocab["tags"], **config)
    if isinstance(init, list):
        train_model.set_weights(init)
    elif init is not None:
        for layer in ("word_embedding", "chars", "bilstm_0", "bilstm_1", "potentials", "crf"):
            if config["use_crf"] or layer != "crf":
                train_model.get_layer(layer).set_weights(init.get_layer(layer).get_weights())
    optimizer = keras.optimizers.Adam(args.lr, beta_2=0.9, clipnorm=5.0)
    if config["use_crf"]:
        train_model.compile(optimizer, loss=None)
    else:
        train_model.compile(
            optimizer, loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True)
        )
    dev = pad_batches(data, "dev", args.batch_size)
    if args.limit:
        dev = dev[: max(1, args.limit // args.batch_size)]
    drop = data["drop"] * args.word_dropout / WORD_DROPOUT_ALPHA
    history, best = [], {"upos_accuracy": -1.0, "epoch": 0}
    meta = {"config": config, "args": vars(args), "backend": keras.backend.backend(),
            "keras": keras.__version__}  # fmt: skip
    epoch_seconds = 0.0
    for epoch in range(args.start_epoch, args.start_epoch + args.epochs):
        left = args.max_seconds - (time.time() - start)
        if args.max_seconds and left < 1.1 * epoch_seconds:
            print(f"{NAME}: stopping, {left:.0f} s left < one epoch", flush=True)
            break
        t0 = time.time()
        lr = args.lr * args.lr_decay ** (epoch - 1)
        train_model.optimizer.learning_rate.assign(lr)
        batches = pad_batches(data, "train", args.batch_size, rng, drop)
        if args.limit:
            batches = batches[: max(1, args.limit // args.batch_size)]
        losses = []
        for step, (x, y, _) in enumerate(batches):
            if args.cosine_seconds and step % 25 == 0:
                # Cosine decay over wall-clock time: anneals fully within a
                # time budget whatever the device's speed turns out to be.
                done = min(1.0, (time.time() - start) / args.cosine_seconds)
                lr = args.lr * (0.02 + 0.98 * 0.5 * (1 + np.cos(np.pi * done)))
                train_model.optimizer.learning_rate.assign(lr)
            logs = train_model.train_on_batch(list(x), y, return_dict=True)
            losses.append(logs["loss"])  # no float(): keeps the device queue full
        metrics = score_ids(infer, dev)
        epoch_seconds = time.time() - t0
        entry = {"epoch": epoch, "loss": float(np.mean([float(v) for v in losses])), "dev": metrics,
                 "seconds": round(epoch_seconds, 1),
                 "lr": float(lr)}  # fmt: skip
        history.append(entry)
        if metrics["upos_accuracy"] > best["upos_accuracy"]:
            best = {**metrics, "epoch": epoch}
            save_weights(os.path.join(out, "best_weights.npz"), train_model, args.save_float16,
                         dev_upos_accuracy=metrics["upos_accuracy"], epoch=epoch)  # fmt: skip
        with open(os.path.join(out, "history.json"), "w") as f:
            json.dump({**meta, "best": best, "history": history,
                       "seconds": round(time.time() - start, 1)}, f, indent=1)  # fmt: skip
        print(json.dumps(entry), flush=True)
    print(f"{NAME}: best dev {best['upos_accuracy']:.4f} at epoch {best['epoch']}", flush=True)
    return best


def load_core(vocab, weights, fallback_config):
    """(model, infer, config) of one member: a fit's ``best_weights.npz``
    (its ``history.json`` beside it gives the config) or a saved ``.keras``
    tagger (its id core; only ``use_crf`` matters for an ensemble)."""
    if weights.endswith(".keras"):
        import keras

        import keras_seqmodels  # noqa: F401  (registers the layers)

        serving = keras.saving.load_model(weights, compile=False, safe_mode=True)
        infer = serving.get_layer("tagger_ids")
        names = {layer.name for layer in infer.layers}
        if "potentials" not in names:
            raise SystemExit(f"{NAME} assemble: {weights} has no 'potentials' layer "
                             "(an ensemble cannot be a member)")  # fmt: skip
        return infer, infer, {"use_crf": "crf" in names}
    config = fallback_config
    hist = os.path.join(os.path.dirname(weights), "history.json")
    if os.path.isfile(hist):
        with open(hist) as f:
            config = json.load(f)["config"]
    train_model, infer = build_models(vocab["words"], vocab["chars"], vocab["tags"], **config)
    train_model.set_weights(load_weights(weights))
    return train_model, infer, config


def build_ensemble(members, tags):
    """One id model averaging the sequence scores of several trained cores.

    A CRF member scores a tag sequence by its emission scores plus its
    transition scores; a softmax member by the sum of its per-word
    log-probabilities (emissions ``log_softmax``, no transitions). The mean
    of the members' emissions, with the CRF members' transitions summed and
    divided by the number of members, decoded by Viterbi, is the argmax of
    the members' mean sequence score (all-softmax: the per-word argmax of
    the mean log-probabilities).
    """
    import keras

    from keras_seqmodels.layers import CRF

    word_ids = keras.Input((None,), dtype="int32", name="word_ids")
    char_ids = keras.Input((None, None), dtype="int32", name="char_ids")
    scores = []
    for i, (model, _, config) in enumerate(members):
        emitter = keras.Model(model.inputs[:2], model.get_layer("potentials").output,
                              name=f"member_{i}")  # fmt: skip
        x = emitter([word_ids, char_ids])
        if not config["use_crf"]:
            x = keras.layers.Activation("log_softmax", name=f"log_probs_{i}")(x)
        scores.append(x)
    mean = keras.layers.Average(name="mean_scores")(scores)
    crf_members = [m for m, _, config in members if config["use_crf"]]
    use_crf = bool(crf_members)
    crf = CRF(len(tags), trainable=use_crf, name="crf" if use_crf else "argmax")
    out = crf(mean)
    if use_crf:
        crf.set_weights([np.sum([m.get_layer("crf").get_weights()[k] for m in crf_members], 0)
                         / len(members) for k in range(3)])  # fmt: skip
    return keras.Model([word_ids, char_ids], out, name="tagger_ids")


def assemble(args):
    """String model from ``--weights`` (a fit's best_weights.npz or a saved
    ``.keras`` tagger, or several comma-separated for an ensemble of CRF
    and/or softmax cores), on TensorFlow."""
    import keras

    from keras_seqmodels.layers import SentenceVectorizer

    with open(os.path.join(args.work_dir, "vocab.json"), encoding="utf-8") as f:
        vocab = json.load(f)
    paths = (args.weights or os.path.join(args.work_dir, "best_weights.npz")).split(",")
    members = [load_core(vocab, p, core_config(args)) for p in paths]
    infer = members[0][1] if len(members) == 1 else build_ensemble(members, vocab["tags"])
    vectorizer = SentenceVectorizer(vocab["words"], vocab["chars"], max_chars=20,
                                    name="vectorizer")  # fmt: skip
    serving = build_serving_model(infer, vectorizer, vocab["tags"])
    path = args.output or os.path.join(args.work_dir, f"{NAME}.keras")
    serving.save(path)
    keras.saving.load_model(path, compile=False, safe_mode=True)
    print(f"{NAME}: saved {path} ({os.path.getsize(path) / 1e6:.1f} MB), "
          f"configs {[m[2] for m in members]}")  # fmt: skip
    return path


def register(args):
    """Copy ``--model`` into the zoo with its test metrics (``--metrics`` JSON).

    ``--extra`` (JSON) adds card fields: dev metrics, machine, training time.
    """
    import keras

    from keras_seqmodels import zoo

    if not args.model or not args.metrics:
        raise SystemExit(f"{NAME} register: --model PATH and --metrics JSON are required")
    model = keras.saving.load_model(args.model, compile=False, safe_mode=True)
    entry = zoo.register_model(
        NAME,
        args.model,
        task="UPOS tagging of whitespace-tokenised English sentences "
        "(BiLSTM + char-LSTM taggers: CRF and softmax cores, mean sequence score)",
        metrics=json.loads(args.metrics),
        data="UD English EWT r2.16; train 12,544 sentences, model selected on dev, "
        "scored once on test (25,094 syntactic words)",
        command=f"seqmodels evaluate {NAME} --data-dir ../shared/data --split test",
        card=f"zoo/{NAME}/card.md",
        extra={"parameters": int(model.count_params()),
               "inputs": "string (batch,) of whitespace-tokenised sentences",
               "outputs": "string (batch, max_tokens) of UPOS tags, '' at padding",
               **json.loads(args.extra or "{}")},  # fmt: skip
    )
    print(json.dumps(entry, indent=1))


def parse(argv):
    from keras_seqmodels.training import recipe_utils

    parser = argparse.ArgumentParser(prog=f"seqmodels train|evaluate {NAME}")
    parser.add_argument(
        "action", choices=["train", "evaluate", "prepare", "fit", "assemble", "register"]
    )
    recipe_utils.add_common_arguments(parser, epochs=12, batch_size=32)
    parser.add_argument("--run-dir", default=os.path.join(REPO, "runs", NAME))
    parser.add_argument("--work-dir", default=os.path.join(REPO, "runs", NAME, "ids"),
                        help="prepare/fit/assemble: arrays.npz and vocab.json")  # fmt: skip
    parser.add_argument("--out", default=None, help="fit: where weights and history go")
    parser.add_argument("--weights", default=None,
                        help="assemble: a fit's best_weights.npz or a saved .keras tagger; "
                        "several, comma-separated, make an ensemble")  # fmt: skip
    parser.add_argument("--init-weights", default=None,
                        help="fit: start from this best_weights.npz (its history.json "
                        "beside it gives the config) or from a saved .keras tagger "
                        "(give its architecture options)")  # fmt: skip
    parser.add_argument("--start-epoch", type=int, default=1,
                        help="fit: first epoch number (lr = lr * lr_decay ** (epoch - 1))")
    parser.add_argument("--metrics", default=None, help="register: JSON of test metrics")
    parser.add_argument("--extra", default=None, help="register: JSON of card fields")
    parser.add_argument("--output", default=None, help="assemble: the .keras file to write")
    parser.add_argument("--batch-tokens", type=int, default=500)
    parser.add_argument("--units", type=int, default=150)
    parser.add_argument("--word-dim", type=int, default=100)
    parser.add_argument("--char-dim", type=int, default=32)
    parser.add_argument("--char-units", type=int, default=64)
    parser.add_argument("--dropout", type=float, default=0.33)
    parser.add_argument("--word-dropout", type=float, default=WORD_DROPOUT_ALPHA,
                        help="alpha of the word dropout alpha / (alpha + count)")  # fmt: skip
    parser.add_argument("--lr", type=float, default=2e-3)
    parser.add_argument("--lr-decay", type=float, default=0.9)
    parser.add_argument("--no-crf", action="store_true", help="softmax output instead of a CRF")
    parser.add_argument(
        "--max-minutes", type=float, default=0, help="stop after this much training"
    )
    parser.add_argument("--max-seconds", type=float, default=0, help="fit: wall-clock budget")
    parser.add_argument("--save-float16", action="store_true",
                        help="fit: save the best weights in float16 (half the size)")
    parser.add_argument("--cosine-seconds", type=float, default=0,
                        help="fit: cosine learning-rate decay over this many seconds of wall "
                        "time (to 2%% of --lr) instead of --lr-decay per epoch")  # fmt: skip
    parser.add_argument("--split", default="dev", choices=["dev", "test"])
    parser.add_argument("--model", default=None, help="a .keras file (default: the zoo's)")
    parser.add_argument(
        "--limit", type=int, default=0, help="first N training sentences (smoke runs)"
    )
    parser.add_argument("--seed", type=int, default=1)
    return parser.parse_args(argv)


def main(argv=None):
    args = parse(sys.argv[1:] if argv is None else argv)
    actions = {"train": train, "evaluate": evaluate, "prepare": prepare, "fit": fit,
               "assemble": assemble, "register": register}  # fmt: skip
    actions[args.action](args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
