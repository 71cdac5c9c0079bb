"""The copy task (Graves et al. 2014) with a Neural Turing Machine.

    python zoo/ntm-copy/recipe.py train [--steps 4000] [--model ntm|lstm] [--register]
    python zoo/ntm-copy/recipe.py evaluate --length 40
    seqmodels evaluate ntm-copy --length L

A sequence of L random 8-bit vectors (L uniform in 1..20 in training) is
followed by a delimiter flag on a 9th input channel; the network must then
output the L vectors. The loss is the binary cross-entropy of the output
steps; the metric is the number of wrong bits per sequence (outputs
thresholded at 0.5). Model: NTM with an LSTM controller of 100 units, one
read and one write head, 64 slots of width 20, shifts -1..1, Adam 1e-3
(gradients clipped to global norm 10), batch 32. The LSTM baseline
(``--model lstm``: one 256-unit LSTM) is trained the same way. Validation
sequences (a fixed seed, lengths 10 and 20) select the checkpoint; the test
sequences use another seed. `evaluate` prints, as its last line, the mean
bit errors per sequence at ``--length``.
"""

import argparse
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
NAME = "ntm-copy"
BITS = 8
TEST_SEED, VALID_SEED = 20140, 1410


def copy_batch(rng, batch_size, length):
    """Inputs ``(batch, 2L + 1, 9)``, targets ``(batch, 2L + 1, 8)`` and
    sample weights ``(batch, 2L + 1)`` (1 on the L output steps)."""
    bits = rng.integers(0, 2, (batch_size, length, BITS)).astype("float32")
    steps = 2 * length + 1
    inputs = np.zeros((batch_size, steps, BITS + 1), "float32")
    inputs[:, :length, :BITS] = bits
    inputs[:, length, BITS] = 1.0
    targets = np.zeros((batch_size, steps, BITS), "float32")
    targets[:, length + 1 :] = bits
    weights = np.zeros((batch_size, steps), "float32")
    weights[:, length + 1 :] = 1.0
    return inputs, targets, weights


def bit_errors(model, length, count=256, seed=TEST_SEED, batch_size=64):
    """Mean number of wrong output bits per sequence at one length."""
    rng = np.random.default_rng(seed + length)
    errors = []
    for start in range(0, count, batch_size):
        x, y, w = copy_batch(rng, min(batch_size, count - start), length)
        logits = np.asarray(model.predict_on_batch(x))
        wrong = (logits > 0).astype("float32") != y
        errors.append((wrong * w[:, :, None]).sum(axis=(1, 2)))
    return float(np.concatenate(errors).mean())


def build_model(kind, memory_size=64):
    import keras

    from keras_seqmodels.cells import LSTMCell
    from keras_seqmodels.layers import Recurrent
    from keras_seqmodels.memory import NTM

    inputs = keras.Input((None, BITS + 1), name="bits")
    if kind == "ntm":
        hidden = NTM(
            100,
            memory_size=memory_size,
            memory_width=20,
            shift_range=1,
            return_sequences=True,
            name="ntm",
        )(inputs)
    else:
        hidden = Recurrent(LSTMCell(256), return_sequences=True, name="lstm")(inputs)
    logits = keras.layers.Dense(BITS, name="logits")(hidden)
    return keras.Model(inputs, logits, name=f"{NAME}-{kind}")


def train(args):
    import keras

    from keras_seqmodels.training import get_strategy

    keras.utils.set_random_seed(args.seed)
    out_dir = os.path.join(args.out_dir, args.model)
    os.makedirs(out_dir, exist_ok=True)

    class RandomCopies(keras.utils.PyDataset):
        def __init__(self, batches, batch_size, max_length, seed):
            super().__init__()
            self.batches, self.batch_size = batches, batch_size
            self.max_length, self.seed = max_length, seed

        def __len__(self):
            return self.batches

        def __getitem__(self, i):
            # Seeded by the batch index so a resumed run sees fresh batches.
            rng = np.random.default_rng([self.seed, self.epoch, i])
            length = int(rng.integers(1, self.max_length + 1))
            x, y, w = copy_batch(rng, self.batch_size, length)
            return x, y, w

        def on_epoch_end(self):
            self.epoch += 1

        epoch = 0

    data = RandomCopies(args.steps_per_epoch, args.batch_size, args.max_length, args.seed)

    class Track(keras.callbacks.Callback):
        """Validation bit errors at lengths 10 and 20; keep the best model."""

        def __init__(self, path):
            super().__init__()
            self.path, self.best = path, np.inf

        def on_epoch_begin(self, epoch, logs=None):
            data.epoch = epoch

        def on_epoch_end(self, epoch, logs=None):
            errs = [bit_errors(self.model, n, 64, VALID_SEED) for n in (10, 20)]
            logs["val_bits_10"], logs["val_bits_20"] = errs
            score = float(np.mean(errs))
            if score < self.best:
                self.best = score
                self.model.save(self.path)
            print(
                f"\nepoch {epoch + 1}: valid bit errors/seq L=10 {errs[0]:.3f} "
                f"L=20 {errs[1]:.3f} (best mean {self.best:.3f})",
                flush=True,
            )

    strategy = get_strategy(args.strategy)
    with strategy.scope():
        model = build_model(args.model, args.memory_size)
        model.compile(
            optimizer=keras.optimizers.Adam(args.learning_rate, global_clipnorm=10.0),
            loss=keras.losses.BinaryCrossentropy(from_logits=True),
            weighted_metrics=[],
        )
    best_path = os.path.join(out_dir, "best.keras")
    start = time.time()
    model.fit(
        data,
        epochs=args.epochs,
        verbose=2,
        callbacks=[
            keras.callbacks.BackupAndRestore(os.path.join(out_dir, "backup")),
            Track(best_path),
            keras.callbacks.CSVLogger(os.path.join(out_dir, "history.csv"), append=True),
        ],
    )
    elapsed = time.time() - start
    print(f"training time {elapsed:.0f} s", flush=True)
    with open(os.path.join(out_dir, "train_time.txt"), "a") as f:
        f.write(f"{elapsed:.0f}\n")


def evaluate(args):
    import keras

    from keras_seqmodels import zoo

    if args.model_path:
        model = keras.saving.load_model(args.model_path, safe_mode=True)
    else:
        model = zoo.load(NAME)
    seed = VALID_SEED if args.split == "valid" else TEST_SEED
    value = bit_errors(model, args.length, args.count, seed)
    print(f"length {args.length}, {args.count} sequences [{args.split}]: bit errors/sequence")
    print(f"{value:.4f}")
    return 0


def register(args):
    """Ship a trained NTM (``--model-path``) with its measured metrics."""
    import keras

    from keras_seqmodels.zoo.registry import register_model

    model = keras.saving.load_model(args.model_path, safe_mode=True)
    metrics = {
        f"test_bit_errors_per_sequence_L{n}": round(bit_errors(model, n, args.count), 4)
        for n in (10, 20, 30, 40)
    }
    register_model(
        NAME,
        args.model_path,
        task="copy task, random 8-bit vectors, trained on lengths 1-20",
        metrics=metrics,
        data="generated on the fly (numpy seed 20140 + L for test sequences)",
        command="seqmodels evaluate ntm-copy --length L",
        card="zoo/ntm-copy/card.md",
    )
    print(metrics)


def main(argv=None):
    parser = argparse.ArgumentParser(prog=f"recipe {NAME}")
    parser.add_argument("action", choices=["train", "evaluate", "register"])
    parser.add_argument("--data-dir", default=None, help="unused: data are generated")
    parser.add_argument("--model", default="ntm", choices=["ntm", "lstm"])
    parser.add_argument("--memory-size", type=int, default=64)
    parser.add_argument("--epochs", type=int, default=40)
    parser.add_argument("--steps-per-epoch", type=int, default=100)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--max-length", type=int, default=20)
    parser.add_argument("--learning-rate", type=float, default=1e-3)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--strategy", default="default")
    parser.add_argument("--split", default="test", choices=["valid", "test"])
    parser.add_argument("--length", type=int, default=20)
    parser.add_argument("--count", type=int, default=256)
    parser.add_argument("--model-path", default=None, help="a .keras file instead of the zoo's")
    parser.add_argument("--out-dir", default=os.path.join(ROOT, "runs", NAME))
    args = parser.parse_args(argv)
    if args.action == "train":
        return train(args)
    if args.action == "register":
        return register(args)
    return evaluate(args)


if __name__ == "__main__":
    sys.path.insert(0, ROOT)
    sys.exit(main(sys.argv[1:]))
