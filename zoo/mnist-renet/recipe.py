"""mnist-renet: a ReNet-style four-direction RNN digit classifier on MNIST.

Data -> model -> fit -> evaluate. The model takes (batch, 28, 28) pixel
values 0-255, scales them itself and returns 10 class scores (logits).

    python zoo/mnist-renet/recipe.py train [--data-dir DIR] [--epochs N]
        [--batch-size GLOBAL] [--strategy {default,mirrored,multi-worker,tpu}]
        [--tpu ADDRESS] [--precision {float32,mixed_float16,mixed_bfloat16}]
    python zoo/mnist-renet/recipe.py evaluate [--split test|valid] [--model PATH]

(``seqmodels train mnist-renet ...`` / ``seqmodels evaluate mnist-renet ...``
forward to the same.) Model selection uses a validation split of 5,000
images held out from the 60,000 training images (a fixed seeded draw); the
test split is for the card only.
"""

import argparse
import gzip
import json
import os
import sys
import time

import numpy as np

NAME = "mnist-renet"
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
VALID_SIZE = 5000
SPLIT_SEED = 0


def default_data_dir():
    path = os.path.join(ROOT, "..", "shared", "data", "mnist")
    return os.path.normpath(path) if os.path.isdir(path) else None


def read_idx(path):
    """Read an idx .gz file: big-endian header (magic, dims), then uint8 data."""
    with gzip.open(path, "rb") as f:
        raw = f.read()
    ndim = raw[3]
    dims = [int.from_bytes(raw[4 + 4 * i : 8 + 4 * i], "big") for i in range(ndim)]
    return np.frombuffer(raw, np.uint8, offset=4 + 4 * ndim).reshape(dims)


def load_split(data_dir, split):
    """Images (n, 28, 28) uint8 and labels (n,) for train, valid or test."""
    if data_dir is None or not os.path.isdir(data_dir):
        raise FileNotFoundError(
            f"{NAME}: MNIST data directory not found: {data_dir!r}. Pass "
            "--data-dir pointing at the folder with the four idx .gz files."
        )
    prefix = "t10k" if split == "test" else "train"
    images = read_idx(os.path.join(data_dir, f"{prefix}-images-idx3-ubyte.gz"))
    labels = read_idx(os.path.join(data_dir, f"{prefix}-labels-idx1-ubyte.gz"))
    if split == "test":
        return images, labels
    order = np.random.default_rng(SPLIT_SEED).permutation(len(images))
    index = order[:VALID_SIZE] if split == "valid" else order[VALID_SIZE:]
    index = np.sort(index)
    return images[index], labels[index]


def build_model(units=16, units2=32, cell="gru", dropout=0.2):
    import keras

    import keras_seqmodels as ks

    cells = {"gru": ks.cells.GRUCell, "lstm": ks.cells.LSTMCell}
    inputs = keras.Input((28, 28), name="pixels")
    x = keras.layers.Rescaling(1.0 / 255.0)(inputs)
    x = keras.layers.Reshape((28, 28, 1))(x)
    x = ks.layers.FourDirectional2D(cells[cell](units), patch_size=2, name="renet_1")(x)
    x = ks.layers.FourDirectional2D(cells[cell](units2), patch_size=2, name="renet_2")(x)
    x = keras.layers.Flatten()(x)
    x = keras.layers.Dropout(dropout)(x)
    # float32 scores under a mixed-precision policy: the softmax loss needs them.
    outputs = keras.layers.Dense(10, name="scores", dtype="float32")(x)
    return keras.Model(inputs, outputs, name=NAME)


class EpochTimer:
    """Appends each epoch's wall time and metrics to a JSON-lines file."""

    def __new__(cls, path):
        import keras

        class _Timer(keras.callbacks.Callback):
            def on_epoch_begin(self, epoch, logs=None):
                self.start = time.time()

            def on_epoch_end(self, epoch, logs=None):
                record = {"epoch": epoch + 1, "seconds": time.time() - self.start}
                record.update({k: float(v) for k, v in (logs or {}).items()})
                with open(path, "a", encoding="utf-8") as f:
                    f.write(json.dumps(record) + "\n")

        return _Timer()


def train(args):
    import keras
    import tensorflow as tf

    from keras_seqmodels.training import recipe_utils

    os.makedirs(args.output_dir, exist_ok=True)
    x_train, y_train = load_split(args.data_dir, "train")
    x_valid, y_valid = load_split(args.data_dir, "valid")
    x_train, x_valid = x_train.astype("float32"), x_valid.astype("float32")
    keras.utils.set_random_seed(args.seed)
    if keras.backend.backend() != "tensorflow" and args.strategy != "default":
        raise ValueError(f"{NAME}: --strategy {args.strategy} needs KERAS_BACKEND=tensorflow")
    steps = args.epochs * -(-len(x_train) // args.batch_size)
    # Model, optimizer and datasets under the strategy's scope; --batch-size
    # is the global batch, split over the replicas; --precision sets the
    # dtype policy (the scores layer stays float32 for the softmax loss).
    with recipe_utils.strategy_scope(args) as dist:
        if args.init_from:
            # Continue training a saved model (a second, lower-rate schedule).
            model = keras.saving.load_model(args.init_from, compile=False)
        else:
            model = build_model(args.units, args.units2, args.cell, args.dropout)
        schedule = keras.optimizers.schedules.CosineDecay(
            args.learning_rate, decay_steps=steps, alpha=0.05
        )
        dist.compile(
            model,
            optimizer=keras.optimizers.Adam(schedule, clipnorm=1.0),
            loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
            metrics=["accuracy"],
        )
        train_data = dist.batch(
            tf.data.Dataset.from_tensor_slices((x_train, y_train)),
            shuffle_buffer=len(x_train),
            seed=args.seed,
        )
        valid_data = dist.batch(tf.data.Dataset.from_tensor_slices((x_valid, y_valid)))
    best = os.path.join(args.output_dir, "best.keras")
    callbacks = [
        keras.callbacks.BackupAndRestore(os.path.join(args.output_dir, "backup")),
        keras.callbacks.ModelCheckpoint(best, monitor="val_accuracy", save_best_only=True),
        EpochTimer(os.path.join(args.output_dir, "epochs.jsonl")),
    ]
    model.summary()
    model.fit(
        train_data,
        epochs=args.epochs,
        validation_data=valid_data,
        callbacks=callbacks,
        verbose=args.verbose,
    )
    print(f"{NAME}: best model (by validation accuracy) saved to {best}")
    return 0


def evaluate(args):
    import keras

    from keras_seqmodels import zoo

    if args.model:
        model = keras.saving.load_model(args.model, compile=False)
    else:
        model = zoo.load(NAME).model
    images, labels = load_split(args.data_dir, args.split)
    scores = model.predict(images.astype("float32"), batch_size=500, verbose=0)
    accuracy = float(np.mean(np.argmax(scores, axis=-1) == labels))
    result = {
        "split": args.split,
        "examples": int(len(labels)),
        "accuracy": round(accuracy, 4),
        "error_percent": round(100 * (1 - accuracy), 2),
    }
    print(json.dumps(result))
    if args.register:
        register(args, result)
    return 0


def register(args, result):
    """Ship ``--model`` in the zoo with its test metrics (after the test run)."""
    from keras_seqmodels.zoo.registry import register_model

    if not args.model or args.split != "test":
        raise ValueError(f"{NAME}: --register needs --model PATH and --split test")
    timing = {}
    epochs_log = os.path.join(os.path.dirname(args.model), "epochs.jsonl")
    if os.path.isfile(epochs_log):
        with open(epochs_log, encoding="utf-8") as f:
            records = [json.loads(line) for line in f if line.strip()]
        timing = {
            "epochs": len(records),
            "training_minutes": round(sum(r["seconds"] for r in records) / 60, 1),
            "best_val_accuracy": max(r["val_accuracy"] for r in records),
        }
    entry = register_model(
        NAME,
        args.model,
        task="MNIST digit classification from (batch, 28, 28) pixels 0-255 "
        "(10 class scores, logits) with two ReNet four-direction GRU layers",
        metrics={
            "test_accuracy": result["accuracy"],
            "test_error_percent": result["error_percent"],
        },
        data="MNIST (../shared/data/mnist): train 55,000 / valid 5,000 held out "
        "from train (seed 0) / test 10,000",
        command="python zoo/mnist-renet/recipe.py evaluate --split test",
        card="zoo/mnist-renet/card.md",
        extra=timing,
    )
    print(json.dumps({"registered": NAME, **entry}))


def main(argv=None):
    from keras_seqmodels.training import recipe_utils

    argv = sys.argv[1:] if argv is None else list(argv)
    parser = argparse.ArgumentParser(prog=f"recipe {NAME}")
    parser.add_argument("action", choices=["train", "evaluate"])
    # --data-dir (the MNIST folder), --epochs, --batch-size (global),
    # --strategy, --tpu, --precision.
    recipe_utils.add_common_arguments(parser, epochs=5, batch_size=128, data_dir=default_data_dir())
    parser.add_argument("--split", default="test", choices=["train", "valid", "test"])
    parser.add_argument("--model", default=None, help="evaluate this .keras file")
    parser.add_argument("--output-dir", default=os.path.join(ROOT, "runs", NAME))
    parser.add_argument("--units", type=int, default=16)
    parser.add_argument("--units2", type=int, default=32)
    parser.add_argument("--cell", default="gru", choices=["gru", "lstm"])
    parser.add_argument("--dropout", type=float, default=0.2)
    parser.add_argument("--learning-rate", type=float, default=2e-3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--init-from", default=None, help="train: start from this .keras model")
    parser.add_argument(
        "--register", action="store_true", help="with evaluate --model: ship it in the zoo"
    )
    parser.add_argument("--verbose", type=int, default=2, help="keras fit verbosity")
    args = parser.parse_args(argv)
    return train(args) if args.action == "train" else evaluate(args)


if __name__ == "__main__":
    sys.exit(main())
