"""multi30k-en-de: English->German translation on Multi30k (task 1).

Steps (each an action of ``main``; ``train`` runs the first three):

- ``prepare``: read the splits through the TFDS builder
  (``keras_seqmodels.seq2seq.multi30k``), build the word+character
  vocabularies on train, tokenize with the same TensorFlow tokenizer the
  shipped model uses, and write ``arrays.npz`` and ``vocab.json``.
- ``fit``: train the integer-id ``EncoderDecoder`` on the arrays by teacher
  forcing (any Keras backend: it was run with JAX on a GPU), keeping the
  weights of the epoch with the lowest validation loss (model selection on
  val).
- ``assemble``: put the vocabularies and the weights into a string-to-string
  ``Translator`` and save it as ``multi30k-en-de.keras``.
- ``evaluate``: translate a split and score it with sacrebleu (default
  settings, cased, detokenized output vs the raw references).
- ``register``: copy the artifact into the zoo with its test metrics.

    python zoo/multi30k-en-de/recipe.py train --epochs 20
    seqmodels evaluate multi30k-en-de --split test2016 --beam 5
"""

import argparse
import contextlib
import json
import os
import sys
import time

import numpy as np

NAME = "multi30k-en-de"
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
DEFAULT_WORK = os.path.join(ROOT, "runs", NAME)

MODEL_CONFIG = dict(
    embedding_dim=256,
    encoder_units=256,
    decoder_units=512,
    encoder_layers=2,
    decoder_layers=1,
    bidirectional=True,
    cell_type="lstm",
    attention="multiplicative",
    # The summary already sets the decoder's initial state; feeding it at
    # every step too would add 1M weights (4 MB) to a 38 MB artifact.
    context_input=False,
    tie_embeddings=True,
    dropout=0.3,
)


def default_data_dir():
    shared = os.path.join(os.path.dirname(ROOT), "shared", "data", "multi30k")
    return shared if os.path.isdir(shared) else None


def _parser():
    p = argparse.ArgumentParser(prog=f"seqmodels train|evaluate {NAME}")
    p.add_argument("action", choices=["prepare", "fit", "assemble", "train",
                                      "evaluate", "register"])
    p.add_argument("--data-dir", default=default_data_dir(),
                   help="the multi30k folder (with raw/); default ../shared/data/multi30k")
    p.add_argument("--work-dir", default=DEFAULT_WORK,
                   help="arrays, checkpoints and the assembled model")
    p.add_argument("--epochs", type=int, default=20)
    p.add_argument("--batch-size", type=int, default=128)
    p.add_argument("--learning-rate", type=float, default=2e-3)
    p.add_argument("--label-smoothing", type=float, default=0.1)
    p.add_argument("--dropout", type=float, default=MODEL_CONFIG["dropout"])
    p.add_argument("--min-count", type=int, default=2)
    p.add_argument("--input-feeding", action="store_true",
                   help="feed the previous attentional vector (Luong); fit and assemble")
    p.add_argument("--scheduled-sampling", default="none",
                   choices=["none", "linear", "exponential", "inverse_sigmoid"],
                   help="schedule of the teacher-forcing probability (Bengio et al. 2015)")
    p.add_argument("--ss-k", type=float, default=None,
                   help="the schedule's k (default: ScheduledSampling's)")
    p.add_argument("--ss-c", type=float, default=0.01, help="the linear schedule's slope")
    p.add_argument("--ss-per", default="epoch", choices=["epoch", "batch"])
    p.add_argument("--strategy", default="default",
                   choices=["default", "mirrored", "multi-worker", "tpu"],
                   help="tf.distribute strategy (TensorFlow only)")
    p.add_argument("--tpu", default=None, help="TPU name or address (with --strategy tpu)")
    p.add_argument("--precision", default="float32",
                   choices=["float32", "mixed_float16", "mixed_bfloat16"],
                   help="Keras dtype policy for fit")
    p.add_argument("--weights", default=None, help="weights for assemble")
    p.add_argument("--model", default=None,
                   help="a .keras Translator to evaluate (default: the zoo's)")
    p.add_argument("--split", default="test2016", choices=["val", "test2016"])
    p.add_argument("--beam", type=int, default=5, help="beam size (1 = greedy)")
    p.add_argument("--alpha", type=float, default=None,
                   help="length-normalisation exponent (default: the model's)")
    p.add_argument("--limit", type=int, default=None, help="first N sentences only")
    p.add_argument("--batch", type=int, default=64, help="sentences per decode call")
    p.add_argument("--output", default=None, help="write the translations here")
    p.add_argument("--metrics", default=None,
                   help="register: JSON of the test metrics")
    p.add_argument("--extra", default=None, help="register: JSON of card fields")
    return p


# prepare -----------------------------------------------------------------


def prepare(args):
    from keras_seqmodels.seq2seq import EncoderDecoder, text
    from keras_seqmodels.seq2seq.multi30k import read_split
    from keras_seqmodels.seq2seq.translator import Translator

    if not args.data_dir:
        raise SystemExit("recipe: --data-dir is required (the multi30k folder)")
    os.makedirs(args.work_dir, exist_ok=True)
    raw = os.path.join(args.data_dir, "raw")
    tfds_dir = os.path.join(args.work_dir, "tfds")
    splits = {s: read_split(raw, s, tfds_dir) for s in ("train", "val", "test2016")}
    en, de = splits["train"]
    src_vocab = text.build_vocabulary(en, min_count=args.min_count)
    tgt_vocab = text.build_vocabulary(de, min_count=args.min_count)
    core = EncoderDecoder(len(src_vocab) + 2, len(tgt_vocab) + 2, 8, 8, 8,
                          start_id=2, end_id=3)
    tok = Translator(core, src_vocab, tgt_vocab)
    arrays = {}
    for split, (en, de) in splits.items():
        src = tok.encode_source(en).numpy()
        tgt = tok.encode_target(de).to_list()
        arrays[f"{split}_source"] = src
        arrays[f"{split}_target"] = text.encode_numpy(
            tgt, max(len(t) for t in tgt) + 2, start_id=2, end_id=3
        )
    np.savez_compressed(os.path.join(args.work_dir, "arrays.npz"), **arrays)
    with open(os.path.join(args.work_dir, "vocab.json"), "w", encoding="utf-8") as f:
        json.dump({"source": src_vocab, "target": tgt_vocab}, f, ensure_ascii=False)
    for k, v in arrays.items():
        print(k, v.shape, "mean length", float((v > 0).sum(1).mean()))
    print("vocabulary sizes", len(src_vocab) + 2, len(tgt_vocab) + 2)


# fit ---------------------------------------------------------------------


WIDTHS = (16, 24, 32, 48, 64, 96, 128)


def _batches(source, target, batch_size, shuffle, seed=0):
    """Length-bucketed batches of a few fixed shapes.

    Each batch holds sentences of similar length, padded (source and target
    alike) to the next width in ``WIDTHS`` and, if short, with empty rows up
    to ``batch_size``: a handful of shapes, so a compiled backend (JAX, XLA)
    traces the training step a handful of times instead of once per batch.
    Empty rows have no target tokens and add nothing to the loss.
    """
    rng = np.random.default_rng(seed)
    length = np.maximum((source > 0).sum(1), (target > 0).sum(1) - 1)
    order = np.argsort(length + rng.random(len(source)), kind="stable")
    batches = [order[i : i + batch_size] for i in range(0, len(order), batch_size)]
    if shuffle:
        rng.shuffle(batches)
    out = []
    for rows in batches:
        need = int(length[rows].max())
        width = next((w for w in WIDTHS if w >= need), need)
        src = np.zeros((batch_size, width), np.int32)
        tgt = np.zeros((batch_size, width + 1), np.int32)
        s, t = source[rows, :width], target[rows, : width + 1]
        src[: len(rows), : s.shape[1]] = s
        tgt[: len(rows), : t.shape[1]] = t
        # Decoder input: the target behind <s>; label: the target itself
        # (the arrays hold <s> y </s>).
        out.append(((src, tgt[:, :-1]), tgt[:, 1:]))
    return out


def _options(args):
    """Model options given on the command line (the same for fit and assemble)."""
    return dict(dropout=args.dropout, input_feeding=args.input_feeding,
                scheduled_sampling=args.scheduled_sampling != "none")


def build_core(vocab, **overrides):
    from keras_seqmodels.seq2seq import EncoderDecoder

    return EncoderDecoder(
        len(vocab["source"]) + 2, len(vocab["target"]) + 2,
        start_id=2, end_id=3, **{**MODEL_CONFIG, **overrides},
    )


def fit(args):
    import keras

    from keras_seqmodels.seq2seq import MaskedAccuracy, MaskedSparseCrossentropy

    data = np.load(os.path.join(args.work_dir, "arrays.npz"))
    with open(os.path.join(args.work_dir, "vocab.json"), encoding="utf-8") as f:
        vocab = json.load(f)
    keras.utils.set_random_seed(1)
    if args.precision != "float32":
        keras.config.set_dtype_policy(args.precision)
    scope = contextlib.nullcontext()
    if args.strategy != "default":  # tf.distribute: TensorFlow backend only
        from keras_seqmodels.training import get_strategy

        scope = get_strategy(args.strategy, tpu_address=args.tpu).scope()
    with scope:
        model = build_core(vocab, **_options(args))
        model.build(((None, None), (None, None)))  # BackupAndRestore needs it
        steps = -(-len(data["train_source"]) // args.batch_size)
        schedule = keras.optimizers.schedules.CosineDecay(
            args.learning_rate, decay_steps=steps * args.epochs, alpha=0.05,
        )
        model.compile(
            optimizer=keras.optimizers.Adam(schedule, clipnorm=1.0),
            loss=MaskedSparseCrossentropy(label_smoothing=args.label_smoothing),
            metrics=[MaskedAccuracy()],
        )
    val = _batches(data["val_source"], data["val_target"], args.batch_size,
                   shuffle=False)

    class Epochs(keras.utils.PyDataset):
        def __init__(self):
            super().__init__()
            self.epoch = 0
            self.items = self._make()

        def _make(self):
            return _batches(data["train_source"], data["train_target"],
                            args.batch_size, shuffle=True, seed=self.epoch)

        def __len__(self):
            return len(self.items)

        def __getitem__(self, i):
            return self.items[i]

        def on_epoch_end(self):
            self.epoch += 1
            self.items = self._make()

    class Val(keras.utils.PyDataset):
        def __len__(self):
            return len(val)

        def __getitem__(self, i):
            return val[i]

    extra_callbacks = []
    if args.scheduled_sampling != "none":
        from keras_seqmodels.training import ScheduledSampling

        extra_callbacks.append(ScheduledSampling(
            args.scheduled_sampling, k=args.ss_k, c=args.ss_c, per=args.ss_per))
    ckpt = os.path.join(args.work_dir, "checkpoints")
    os.makedirs(ckpt, exist_ok=True)
    best = os.path.join(args.work_dir, "best.weights.h5")
    start = time.time()
    history = model.fit(
        Epochs(),
        validation_data=Val(),
        epochs=args.epochs,
        verbose=2,
        callbacks=[
            keras.callbacks.BackupAndRestore(ckpt),
            keras.callbacks.ModelCheckpoint(
                best, monitor="val_loss", save_best_only=True, save_weights_only=True
            ),
        ] + extra_callbacks,
    )
    elapsed = time.time() - start
    # The .h5 checkpoint also holds the optimizer's slots; keep the model's
    # weights alone (float32, in ``model.weights`` order) for assembling.
    model.load_weights(best)
    np.savez(os.path.join(args.work_dir, "best_weights.npz"),
             *[np.asarray(w) for w in model.get_weights()])
    hist = {k: [float(x) for x in v] for k, v in history.history.items()}
    with open(os.path.join(args.work_dir, "history.json"), "w") as f:
        json.dump({"history": hist, "seconds": elapsed,
                   "backend": keras.backend.backend(),
                   "config": {**MODEL_CONFIG, **_options(args)},
                   "args": vars(args)}, f, indent=1)
    print(f"trained {args.epochs} epochs in {elapsed:.0f} s; best val_loss "
          f"{min(hist['val_loss']):.4f} at epoch {int(np.argmin(hist['val_loss'])) + 1}")


# assemble ----------------------------------------------------------------


def assemble(args):
    import keras

    from keras_seqmodels.seq2seq.translator import Translator

    with open(os.path.join(args.work_dir, "vocab.json"), encoding="utf-8") as f:
        vocab = json.load(f)
    core = build_core(vocab, **_options(args))
    core.build(((None, None), (None, None)))
    weights = args.weights or os.path.join(args.work_dir, "best_weights.npz")
    if weights.endswith(".npz"):
        stored = np.load(weights)
        core.set_weights([stored[f"arr_{i}"] for i in range(len(stored.files))])
    else:
        core.load_weights(weights)
    # alpha=1.0 was selected on val (beam 5: 38.56 BLEU vs 38.20 at 0.6).
    model = Translator(core, vocab["source"], vocab["target"], beam_size=5,
                       alpha=1.0, name="translator")
    model.build()
    path = os.path.join(args.work_dir, f"{NAME}.keras")
    model.save(path)
    print("saved", path, f"{os.path.getsize(path) / 1e6:.1f} MB")
    keras.saving.load_model(path)  # check it loads
    return path


# evaluate ----------------------------------------------------------------


def translate_lines(model, lines, beam, batch=64, progress=None):
    import tensorflow as tf

    fn = tf.function(lambda s: model(s, beam_size=beam), reduce_retracing=True)
    out = []
    for i in range(0, len(lines), batch):
        chunk = lines[i : i + batch]
        out += [t.decode("utf-8") for t in fn(tf.constant(chunk)).numpy()]
        if progress is not None:
            progress(len(chunk))
    return out


def evaluate(args):
    import sacrebleu

    import keras_seqmodels  # noqa: F401
    from keras_seqmodels.seq2seq.multi30k import read_split

    if args.model:
        import keras

        model = keras.saving.load_model(args.model, safe_mode=True)
    else:
        from keras_seqmodels import zoo

        model = zoo.load(NAME).model
    if args.alpha is not None:
        model.alpha = args.alpha
    raw = os.path.join(args.data_dir, "raw")
    en, de = read_split(raw, args.split, os.path.join(args.work_dir, "tfds"))
    if args.limit:
        en, de = en[: args.limit], de[: args.limit]
    start = time.time()
    hyp = translate_lines(model, en, args.beam, args.batch)
    seconds = time.time() - start
    bleu = sacrebleu.corpus_bleu(hyp, [de])
    if args.output:
        with open(args.output, "w", encoding="utf-8") as f:
            f.write("\n".join(hyp) + "\n")
    result = {"split": args.split, "beam": args.beam, "alpha": model.alpha,
              "sentences": len(en),
              "bleu": round(bleu.score, 2), "signature": str(bleu),
              "decode_seconds": round(seconds, 1)}
    print(json.dumps(result))
    return 0


def register(args):
    from keras_seqmodels import zoo

    metrics = json.loads(args.metrics)
    extra = json.loads(args.extra) if args.extra else None
    entry = zoo.register_model(
        NAME,
        os.path.join(args.work_dir, f"{NAME}.keras"),
        task="English->German translation (strings in, strings out)",
        metrics=metrics,
        data="Multi30k task 1: train 29,000 / val 1,014 (selection) / test2016 1,000",
        command=f"seqmodels evaluate {NAME} --split test2016 --beam 5",
        card=f"zoo/{NAME}/card.md",
        extra=extra,
    )
    print(json.dumps(entry, indent=1))


def main(argv=None):
    args = _parser().parse_args(sys.argv[1:] if argv is None else argv)
    if args.action in ("prepare", "train"):
        prepare(args)
    if args.action in ("fit", "train"):
        fit(args)
    if args.action in ("assemble", "train"):
        assemble(args)
    if args.action == "evaluate":
        return evaluate(args)
    if args.action == "register":
        register(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
