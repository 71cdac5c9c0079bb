"""ptb-lstm: 2-layer word-level LSTM language model on the Penn Treebank.

    seqmodels train ptb-lstm [--data-dir D] [--config small|medium] [--epochs N] ...
    seqmodels evaluate ptb-lstm [--data-dir D] [--split valid|test] [--model PATH]
    python zoo/ptb-lstm/recipe.py assemble --weights W.npz --streams S.npz ...

Truncated back-propagation through time over one continuous token stream:
the stream is cut into ``batch`` rows and read ``bptt`` tokens at a time by
stateful LSTMs (the package's ``Recurrent(LSTMCell)``), so each batch
continues the previous one. Zaremba et al. (2014)'s recipe: uniform init,
SGD with the gradient's global norm clipped, the learning rate halved (small)
or x0.8 (medium) every epoch after the first few, dropout on the
non-recurrent connections only. Model selection on valid; the test split is
scored once, for the card.

Two training paths: ``train`` (TensorFlow, ``model.fit``, one device,
``BackupAndRestore``) and ``jax_train.py`` (JAX, a jitted TBPTT loop over
``model.stateless_call`` for an accelerator; its weights become a ``.keras``
with ``assemble``). The data goes through the local TFDS builder
(``keras_seqmodels.data.tfds_builders.PtbText``, file order kept) and
``tf.data``. The vocabulary is saved beside the model (``ptb-lstm.vocab.txt``).
"""

import argparse
import json
import math
import os
import sys
import time

import numpy as np

NAME = "ptb-lstm"
HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
DEFAULT_DATA = os.path.join(os.path.dirname(REPO), "shared", "data")
EOS = "<eos>"


def resolve_data_dir(path):
    """Accept the shared data root or the ``ptb`` folder itself."""
    if path is None:
        path = DEFAULT_DATA
    for candidate in (path, os.path.join(path, "ptb")):
        if os.path.isfile(os.path.join(candidate, "ptb.train.txt")):
            return candidate
    raise FileNotFoundError(f"{NAME}: no ptb.train.txt in {path} or {path}/ptb; pass --data-dir")


def load_lines(data_dir, split, tfds_dir):
    from keras_seqmodels.data.tfds_builders import load_local

    ds = load_local("ptb_text", data_dir, split, tfds_dir)
    return [ex["text"].decode("utf-8") for ex in ds.as_numpy_iterator()]


def tokens(lines):
    """The continuous stream: each line's words followed by <eos>."""
    out = []
    for line in lines:
        out.extend(line.split())
        out.append(EOS)
    return out


def build_vocabulary(train_tokens):
    counts = {}
    for w in train_tokens:
        counts[w] = counts.get(w, 0) + 1
    return sorted(counts, key=lambda w: (-counts[w], w))


def to_ids(words, vocab):
    index = {w: i for i, w in enumerate(vocab)}
    unk = index.get("<unk>")
    return np.array([index.get(w, unk) for w in words], dtype="int32")


def stream_batches(ids, batch, bptt):
    """(inputs, targets) arrays of shape (steps, batch, bptt) for TBPTT."""
    rows = (len(ids) - 1) // batch
    x = ids[: rows * batch].reshape(batch, rows)
    y = ids[1 : rows * batch + 1].reshape(batch, rows)
    steps = rows // bptt
    x = x[:, : steps * bptt].reshape(batch, steps, bptt).transpose(1, 0, 2)
    y = y[:, : steps * bptt].reshape(batch, steps, bptt).transpose(1, 0, 2)
    return x, y


def build_model(vocab_size, units=200, layers=2, dropout=0.0, batch=None, bptt=None,
                stateful=False, unroll=False, init_scale=0.1, precompute_inputs=False,
                seed=1):  # fmt: skip
    """Embedding → (Dropout → LSTM) × layers → Dropout → Dense(vocab) logits.

    The LSTMs are the package's ``Recurrent(LSTMCell)``. Every weight starts
    uniform in ``[-init_scale, init_scale]`` and the forget bias at 0, as in
    Zaremba et al. (2014); dropout acts on the non-recurrent connections only.
    """
    import keras

    from keras_seqmodels import cells
    from keras_seqmodels import layers as ks_layers

    def init(i):
        return keras.initializers.RandomUniform(-init_scale, init_scale, seed=seed * 100 + i)

    ids = keras.Input(batch_shape=(batch, bptt), dtype="int32", name="ids")
    x = keras.layers.Embedding(vocab_size, units, embeddings_initializer=init(0),
                               name="embedding")(ids)  # fmt: skip
    for i in range(layers):
        x = keras.layers.Dropout(dropout, seed=seed * 100 + 50 + i, name=f"dropout_{i}")(x)
        cell = cells.LSTMCell(units, kernel_initializer=init(3 * i + 1),
                              recurrent_initializer=init(3 * i + 2),
                              bias_initializer=init(3 * i + 3), unit_forget_bias=False,
                              name=f"lstm_cell_{i}")  # fmt: skip
        x = ks_layers.Recurrent(
            cell,
            return_sequences=True,
            stateful=stateful,
            unroll=unroll,
            precompute_inputs=precompute_inputs,
            name=f"lstm_{i}",
        )(x)
    x = keras.layers.Dropout(dropout, seed=seed * 100 + 99, name="dropout_out")(x)
    # float32 logits also under a mixed precision policy (a stable softmax).
    logits = keras.layers.Dense(vocab_size, kernel_initializer=init(90), bias_initializer=init(91),
                                dtype="float32", name="logits")(x)  # fmt: skip
    return keras.Model(ids, logits, name="ptb_lstm")


def model_shape(model):
    """(units, layers) of a model made by ``build_model``."""
    lstms = [layer for layer in model.layers if layer.name.startswith("lstm_")]
    return lstms[0].cell.units, len(lstms)


def save_streams(data_dir, path, tfds_dir):
    """Write the train/valid/test id streams and the vocabulary to ``path`` (npz).

    This is what the GPU job (``jax_train.py``) reads: the device has no
    TensorFlow, so the streams are made here with the recipe's vocabulary.
    """
    streams = {s: tokens(load_lines(data_dir, s, tfds_dir)) for s in ("train", "valid", "test")}
    vocab = build_vocabulary(streams["train"])
    arrays = {s: to_ids(w, vocab).astype("int16") for s, w in streams.items()}
    np.savez_compressed(path, vocab=np.array(vocab), **arrays)
    return {s: len(a) for s, a in arrays.items()}


def copy_weights(source, target):
    """Copy the trainable weights (not the carried LSTM states) between models."""
    import keras

    for src, dst in zip(source.trainable_variables, target.trainable_variables):
        # A copy, not the same buffer: on JAX, predict donates the model's
        # buffers, which would delete the source model's weights.
        dst.assign(keras.ops.convert_to_numpy(src))


def reset_states(model):
    for layer in model.layers:
        if getattr(layer, "stateful", False):
            layer.reset_state()


def perplexity(model, ids, units, layers, batch=10, bptt=100):
    """Exact stream perplexity with a stateful copy of ``model``.

    Every token of the stream is predicted from all tokens before it in its
    row (``batch`` rows), except the first token of each row.
    """
    evaluator = build_model(model.get_layer("logits").units, units, layers, 0.0,
                            batch=batch, stateful=True)  # fmt: skip
    copy_weights(model, evaluator)
    reset_states(evaluator)
    rows = (len(ids) - 1) // batch
    x = ids[: rows * batch].reshape(batch, rows)
    y = ids[1 : rows * batch + 1].reshape(batch, rows)

    total, count = 0.0, 0
    for start in range(0, rows, bptt):
        logits = np.asarray(evaluator.predict_on_batch(x[:, start : start + bptt]), "float64")
        target = y[:, start : start + bptt]
        logits -= logits.max(-1, keepdims=True)
        log_z = np.log(np.exp(logits).sum(-1))
        picked = np.take_along_axis(logits, target[..., None], -1)[..., 0]
        total += float((log_z - picked).sum())
        count += target.size
    return math.exp(total / count), count


def learning_rate(args, epoch):
    """Zaremba's schedule: ``lr * decay ** max(epoch - decay_after, 0)``, epochs from 1."""
    return args.lr * args.decay ** max(epoch - args.decay_after, 0)


def train(args):
    """CPU/TensorFlow path: ``model.fit`` over stateful TBPTT windows.

    One Keras epoch is one pass over the train stream (the LSTM states are
    reset at its start; row i of window t+1 continues row i of window t).
    SGD at ``lr * bptt`` with the global gradient norm clipped at
    ``clip / bptt`` on the token-mean loss is exactly Zaremba's update (SGD at
    ``lr``, clip at ``clip``, on the loss summed over the window and averaged
    over the batch). ``BackupAndRestore`` resumes an interrupted run at the
    last finished epoch; the best-valid model is ``run_dir/best.keras``.
    """
    import keras
    import tensorflow as tf

    from keras_seqmodels.training import recipe_utils

    keras.utils.set_random_seed(args.seed)
    data_dir = resolve_data_dir(args.data_dir)
    os.makedirs(args.run_dir, exist_ok=True)
    tfds_dir = os.path.join(args.run_dir, "tfds")
    train_tokens = tokens(load_lines(data_dir, "train", tfds_dir))
    valid_tokens = tokens(load_lines(data_dir, "valid", tfds_dir))
    vocab = build_vocabulary(train_tokens)
    with open(os.path.join(args.run_dir, "vocab.txt"), "w", encoding="utf-8") as f:
        f.write("\n".join(vocab) + "\n")
    train_ids, valid_ids = to_ids(train_tokens, vocab), to_ids(valid_tokens, vocab)
    if args.limit:
        train_ids, valid_ids = train_ids[: args.limit], valid_ids[: args.limit // 10]
    x, y = stream_batches(train_ids, args.batch_size, args.bptt)
    steps = len(x)
    with recipe_utils.strategy_scope(args) as dist:
        if dist.num_replicas != 1:
            raise ValueError(
                f"{NAME}: stateful TBPTT carries each row's LSTM state from one batch "
                f"to the next on one replica; --strategy {args.strategy} gave "
                f"{dist.num_replicas} replicas. Use one device (or the JAX trainer "
                "zoo/ptb-lstm/jax_train.py on an accelerator)."
            )
        model = build_model(len(vocab), args.units, args.layers, args.dropout,
                            batch=args.batch_size, bptt=args.bptt, stateful=True,
                            unroll=args.unroll, init_scale=args.init_scale,
                            seed=args.seed)  # fmt: skip
        optimizer = keras.optimizers.SGD(args.lr * args.bptt, global_clipnorm=args.clip / args.bptt)
        dist.compile(model, optimizer,
                     loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))  # fmt: skip
        ds = dist.shard_options(tf.data.Dataset.from_tensor_slices((x, y))).prefetch(4)

    state_path = os.path.join(args.run_dir, "selection.json")
    state = {"best": float("inf"), "epoch": 0, "history": []}
    if os.path.isfile(state_path):
        with open(state_path) as f:
            state = json.load(f)
    words = steps * args.batch_size * args.bptt
    print(f"{NAME}: {len(train_ids)} train / {len(valid_ids)} valid tokens, vocab "
          f"{len(vocab)}, {steps} TBPTT windows per epoch, "
          f"{model.count_params()} parameters", flush=True)  # fmt: skip

    class Select(keras.callbacks.Callback):
        def on_epoch_begin(cb, epoch, logs=None):
            cb.t0 = time.time()
            reset_states(model)
            model.optimizer.learning_rate.assign(learning_rate(args, epoch + 1) * args.bptt)

        def on_epoch_end(cb, epoch, logs=None):
            seconds = time.time() - cb.t0
            ppl, _ = perplexity(model, valid_ids, args.units, args.layers)
            entry = {"epoch": epoch + 1, "train_ppl": math.exp(logs["loss"]),
                     "valid_ppl": ppl, "lr": learning_rate(args, epoch + 1),
                     "train_s": round(seconds, 1), "words_per_s": round(words / seconds, 1),
                     "eval_s": round(time.time() - cb.t0 - seconds, 1),
                     "time": time.strftime("%H:%M:%S")}  # fmt: skip
            state["history"].append(entry)
            if ppl < state["best"]:
                state.update(best=ppl, epoch=epoch + 1)
                export = build_model(len(vocab), args.units, args.layers, args.dropout)
                copy_weights(model, export)
                export.save(os.path.join(args.run_dir, "best.keras"))
            with open(state_path, "w") as f:
                json.dump(state, f, indent=1)
            print(json.dumps(entry), flush=True)
            if args.max_minutes and time.time() - start > 60 * args.max_minutes:
                print(f"{NAME}: time budget of {args.max_minutes} min reached", flush=True)
                model.stop_training = True

    start = time.time()
    model.fit(
        ds,
        epochs=args.epochs,
        steps_per_epoch=steps,
        verbose=2,
        callbacks=[
            keras.callbacks.BackupAndRestore(
                os.path.join(args.run_dir, "backup"), delete_checkpoint=False
            ),
            Select(),
        ],
    )
    info = {"train_seconds": round(time.time() - start, 1), "best_epoch": state["epoch"],
            "best_valid_ppl": state["best"], "parameters": int(model.count_params()),
            "tf": tf.__version__, "keras": keras.__version__}  # fmt: skip
    with open(os.path.join(args.run_dir, "train_info.json"), "w") as f:
        json.dump(info, f, indent=1)
    print(json.dumps(info))


def assemble(args):
    """Turn the JAX trainer's best weights (npz) into a ``.keras`` model.

    Builds the recipe's model (the config's sizes), assigns every weight by its
    variable path, saves ``run_dir/gpu_<config>.keras`` with the vocabulary of
    the streams file beside it, and prints the valid perplexity (TensorFlow).
    """
    import keras  # noqa: F401

    weights = np.load(args.weights)
    vocab = [str(w) for w in np.load(args.streams)["vocab"]]
    model = build_model(len(vocab), args.units, args.layers, args.dropout,
                        init_scale=args.init_scale)  # fmt: skip
    variables = {v.path: v for v in model.trainable_variables}
    names = {k.replace("|", "/") for k in weights.files}
    if names != set(variables):
        raise ValueError(
            f"{NAME} assemble: the weights in {args.weights} do not match the "
            f"{args.config} model: missing {sorted(set(variables) - names)}, "
            f"unexpected {sorted(names - set(variables))}"
        )
    for key in weights.files:
        variables[key.replace("|", "/")].assign(weights[key].astype("float32"))
    os.makedirs(args.run_dir, exist_ok=True)
    path = os.path.join(args.run_dir, f"gpu_{args.config}.keras")
    model.save(path)
    with open(os.path.join(args.run_dir, "vocab.txt"), "w", encoding="utf-8") as f:
        f.write("\n".join(vocab) + "\n")
    data_dir = resolve_data_dir(args.data_dir)
    ids = to_ids(tokens(load_lines(data_dir, "valid", os.path.join(args.run_dir, "tfds"))), vocab)
    ppl, _ = perplexity(model, ids, args.units, args.layers)
    print(f"{NAME}: wrote {path} ({os.path.getsize(path)} bytes)")
    print(f"valid_perplexity: {ppl:.2f}")
    return path


def load_vocabulary(path):
    with open(path, encoding="utf-8") as f:
        return [line.rstrip("\n") for line in f if line.rstrip("\n")]


def evaluate(args):
    import keras

    import keras_seqmodels  # noqa: F401

    data_dir = resolve_data_dir(args.data_dir)
    tfds_dir = os.path.join(args.run_dir, "tfds")
    if args.model:
        model = keras.saving.load_model(args.model, compile=False, safe_mode=True)
        vocab_path = args.vocab or os.path.join(os.path.dirname(args.model), "vocab.txt")
        vocab = load_vocabulary(vocab_path)
    else:
        from keras_seqmodels import zoo

        model = zoo.load(NAME).model
        vocab_path = zoo.asset_path(NAME, "vocabulary")
        vocab = load_vocabulary(vocab_path)
    units, layers = model_shape(model)
    ids = to_ids(tokens(load_lines(data_dir, args.split, tfds_dir)), vocab)
    ppl, count = perplexity(model, ids, units, layers)
    print(f"{args.split}_tokens_scored: {count}")
    print(f"{args.split}_perplexity: {ppl:.2f}")
    if args.register:
        register(args, ppl, vocab_path)
    print(f"{ppl:.2f}")
    return ppl


def register(args, test_ppl, vocab_path):
    """Ship ``--model`` (and its vocabulary) in the zoo with its test perplexity."""
    from keras_seqmodels.zoo.registry import register_model

    if not args.model or args.split != "test":
        raise ValueError(f"{NAME}: --register needs --model PATH and --split test")
    extra = {}
    if args.train_info:
        with open(args.train_info, encoding="utf-8") as f:
            extra = json.load(f)
    entry = register_model(
        NAME,
        args.model,
        task="word-level language model (next-word logits over a 10,000-word vocabulary)",
        metrics={"test_perplexity": round(test_ppl, 2), **extra.pop("metrics", {})},
        data="Penn Treebank, Mikolov's preprocessing (../shared/data/ptb): train 929,589 / "
        "valid 73,760 / test 82,430 tokens; selection on valid",
        command="seqmodels evaluate ptb-lstm --data-dir ../shared/data --split test",
        card="zoo/ptb-lstm/card.md",
        extra=extra,
        assets={"vocabulary": vocab_path},
    )
    print(json.dumps({"registered": NAME, **entry}))


# Zaremba, Sutskever & Vinyals (2014), "small" and "medium" (the JAX trainer's too).
CONFIGS = {
    "small": dict(
        units=200,
        layers=2,
        dropout=0.0,
        bptt=20,
        batch_size=20,
        lr=1.0,
        decay=0.5,
        decay_after=4,
        epochs=13,
        init_scale=0.1,
        clip=5.0,
    ),  # fmt: skip
    "medium": dict(
        units=650,
        layers=2,
        dropout=0.5,
        bptt=35,
        batch_size=20,
        lr=1.0,
        decay=0.8,
        decay_after=6,
        epochs=39,
        init_scale=0.05,
        clip=5.0,
    ),  # fmt: skip
}


def parse(argv):
    from keras_seqmodels.training import recipe_utils

    parser = argparse.ArgumentParser(prog=f"seqmodels train|evaluate {NAME}")
    parser.add_argument("action", choices=["train", "evaluate", "assemble"])
    recipe_utils.add_common_arguments(parser, epochs=None, batch_size=None)
    parser.add_argument("--config", choices=sorted(CONFIGS), default="small",
                        help="Zaremba et al.'s setting; the options below override it")  # fmt: skip
    parser.add_argument("--run-dir", default=os.path.join(REPO, "runs", NAME))
    parser.add_argument("--units", type=int, default=None)
    parser.add_argument("--layers", type=int, default=None)
    parser.add_argument("--dropout", type=float, default=None)
    parser.add_argument("--bptt", type=int, default=None)
    parser.add_argument("--lr", type=float, default=None, help="SGD rate on the window sum")
    parser.add_argument("--decay", type=float, default=None)
    parser.add_argument("--decay-after", type=int, default=None,
                        help="decay the rate every epoch after this one")  # fmt: skip
    parser.add_argument("--clip", type=float, default=None, help="global gradient-norm clip")
    parser.add_argument("--init-scale", type=float, default=None)
    parser.add_argument("--unroll", action="store_true", help="unroll the bptt loop")
    parser.add_argument("--max-minutes", type=float, default=0)
    parser.add_argument("--split", default="valid", choices=["valid", "test"])
    parser.add_argument("--model", default=None, help="a .keras file (default: the zoo's)")
    parser.add_argument("--vocab", default=None, help="vocabulary of --model")
    parser.add_argument("--register", action="store_true",
                        help="evaluate --model on test and ship it in the zoo")  # fmt: skip
    parser.add_argument("--train-info", default=None,
                        help="--register: JSON of index fields (training time, ...)")  # fmt: skip
    parser.add_argument("--limit", type=int, default=0, help="first N train tokens (smoke runs)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--weights", default=None, help="assemble: the JAX trainer's npz")
    parser.add_argument("--streams", default=None, help="assemble: save_streams's npz")
    args = parser.parse_args(argv)
    for key, value in CONFIGS[args.config].items():
        if getattr(args, key) is None:
            setattr(args, key, value)
    return args


def main(argv=None):
    args = parse(sys.argv[1:] if argv is None else argv)
    if args.action == "train":
        train(args)
    elif args.action == "assemble":
        assemble(args)
    else:
        evaluate(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
