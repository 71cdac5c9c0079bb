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
    from keras_seqmodels.training.distribute import get_strategy

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
    strategy = get_strategy(args.strategy)
    with strategy.scope():
        train_model, infer = build_models(
            word_vocab, char_vocab, UPOS_TAGS, use_crf=not args.no_crf, units=args.units
        )
        optimizer = keras.optimizers.Adam(args.lr, beta_2=0.9, clipnorm=5.0)
        if args.no_crf:
            train_model.compile(
                optimizer, loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True)
            )
        else:
            train_model.compile(optimizer, loss=None)
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

        model = zoo.load(NAME)
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


def parse(argv):
    parser = argparse.ArgumentParser(prog=f"seqmodels train|evaluate {NAME}")
    parser.add_argument("action", choices=["train", "evaluate"])
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--run-dir", default=os.path.join(REPO, "runs", NAME))
    parser.add_argument("--epochs", type=int, default=12)
    parser.add_argument("--batch-tokens", type=int, default=500)
    parser.add_argument("--units", type=int, default=150)
    parser.add_argument("--lr", type=float, default=2e-3)
    parser.add_argument("--lr-decay", type=float, default=0.9)
    parser.add_argument("--no-crf", action="store_true", help="softmax output instead of a CRF")
    parser.add_argument(
        "--max-minutes", type=float, default=0, help="stop after this much training"
    )
    parser.add_argument("--strategy", default="default")
    parser.add_argument("--split", default="dev", choices=["dev", "test"])
    parser.add_argument("--model", default=None, help="a .keras file (default: the zoo's)")
    parser.add_argument(
        "--limit", type=int, default=0, help="first N training sentences (smoke runs)"
    )
    parser.add_argument("--seed", type=int, default=1)
    return parser.parse_args(argv)


def main(argv=None):
    args = parse(sys.argv[1:] if argv is None else argv)
    if args.action == "train":
        train(args)
    else:
        evaluate(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
