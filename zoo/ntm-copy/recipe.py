"""The copy task (Graves et al. 2014) with a Neural Turing Machine.

    python zoo/ntm-copy/recipe.py train [--model ntm|lstm] [--time-budget S] [--init-from F]
    python zoo/ntm-copy/recipe.py evaluate --length 40 [--model-path F] [--split valid]
    python zoo/ntm-copy/recipe.py register --model-path F
    seqmodels evaluate ntm-copy --length L

A sequence of L random 8-bit vectors is followed by a delimiter flag on a
9th input channel; the network must then output the L vectors. Training
lengths are 1..20: every batch mixes lengths, padded after the recall phase
to 41 steps (one shape, so XLA compiles once), with a curriculum on the
maximum length (from 4, +2 whenever the validation bit errors up to the
current maximum fall below 0.5 per sequence; a fifth of the sequences always
use the full range). The loss is the binary cross-entropy of the output
steps; the metric is the number of wrong bits per sequence (outputs
thresholded at 0.5). Model: NTM with an LSTM controller of 100 units, one
read and one write head, 128 slots of width 20, shifts -1..1, Adam 1e-3
(gradients clipped to global norm 10). The LSTM baseline (``--model lstm``:
one LSTM of 128 units, a parameter count like the NTM's) is trained the same
way. Generated validation sequences (NumPy seed 1410: 32 of each length
1..20 and 64 of length 40) select the checkpoint; the test sequences use
seed 20140 + L. ``evaluate`` prints, as its last line, the mean bit errors
per sequence at ``--length``. ``--strategy`` and ``--precision`` come from
``keras_seqmodels.training.recipe_utils`` (TensorFlow; on JAX only the
default strategy). Training resumes from ``BackupAndRestore``.
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


def padded_batch(rng, batch_size, max_length, steps, curriculum_length=None, mix=0.2):
    """Copy sequences of mixed lengths, all padded to ``steps`` time steps.

    Each sequence's length is uniform in ``1..curriculum_length`` (default
    ``max_length``), except a fraction ``mix`` uniform in ``1..max_length``
    (the "mixed" curriculum of Zaremba & Sutskever 2014). Padding comes
    after the recall phase, so a causal model's outputs on the weighted steps
    are those of the unpadded sequence; one shape means one XLA compile.
    Returns ``(inputs, targets, weights, lengths)``.
    """
    if steps < 2 * max_length + 1:
        raise ValueError(
            f"padded_batch: `steps` must be at least 2 * max_length + 1 = "
            f"{2 * max_length + 1}. Received: steps={steps}"
        )
    top = curriculum_length or max_length
    lengths = rng.integers(1, top + 1, batch_size)
    wide = rng.random(batch_size) < mix
    lengths = np.where(wide, rng.integers(1, max_length + 1, batch_size), lengths)
    bits = rng.integers(0, 2, (batch_size, max_length, BITS)).astype("float32")
    t = np.arange(steps)[None, :]
    n = lengths[:, None]
    inputs = np.zeros((batch_size, steps, BITS + 1), "float32")
    inputs[:, :max_length, :BITS] = bits * (t[:, :max_length] < n)[:, :, None]
    inputs[np.arange(batch_size), lengths, BITS] = 1.0
    recall = (t > n) & (t <= 2 * n)
    source = np.clip(t - n - 1, 0, max_length - 1)
    targets = np.take_along_axis(bits, source[:, :, None], axis=1) * recall[:, :, None]
    return inputs, targets.astype("float32"), recall.astype("float32"), lengths


def validation_set(max_length=20, per_length=32, long_length=40, long_count=64):
    """The fixed validation sequences (NumPy seed ``VALID_SEED``): lengths
    1..max_length (``per_length`` each) padded to 2 max_length + 1 steps, and
    ``long_count`` sequences of ``long_length``."""
    rng = np.random.default_rng(VALID_SEED)
    parts = [copy_batch(rng, per_length, n) for n in range(1, max_length + 1)]
    steps = 2 * max_length + 1
    x = np.zeros((len(parts) * per_length, steps, BITS + 1), "float32")
    y = np.zeros((len(parts) * per_length, steps, BITS), "float32")
    w = np.zeros((len(parts) * per_length, steps), "float32")
    for i, (xi, yi, wi) in enumerate(parts):
        rows = slice(i * per_length, (i + 1) * per_length)
        x[rows, : xi.shape[1]], y[rows, : xi.shape[1]], w[rows, : xi.shape[1]] = xi, yi, wi
    lengths = np.repeat(np.arange(1, max_length + 1), per_length)
    long = copy_batch(np.random.default_rng(VALID_SEED + long_length), long_count, long_length)
    return (x, y, w, lengths), long


def errors_per_sequence(logits, y, w):
    """Wrong bits of each sequence (logits thresholded at 0)."""
    wrong = (np.asarray(logits) > 0).astype("float32") != y
    return (wrong * w[:, :, None]).sum(axis=(1, 2))


def build_model(kind, memory_size=128, lstm_units=128):
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
        hidden = Recurrent(LSTMCell(lstm_units), return_sequences=True, name="lstm")(inputs)
    logits = keras.layers.Dense(BITS, name="logits")(hidden)
    return keras.Model(inputs, logits, name=f"{NAME}-{kind}")


def _scope(args):
    """``recipe_utils.strategy_scope`` on TensorFlow; on JAX (the GPU runs)
    only the default strategy exists and the precision policy is set."""
    import contextlib

    import keras

    if keras.backend.backend() == "tensorflow":
        from keras_seqmodels.training import recipe_utils

        return recipe_utils.strategy_scope(args)
    if args.strategy != "default":
        raise ValueError(
            f"recipe {NAME}: `--strategy {args.strategy}` needs the TensorFlow "
            f"backend (tf.distribute); on {keras.backend.backend()} use "
            "`--strategy default`."
        )
    keras.config.set_dtype_policy(args.precision)
    return contextlib.nullcontext(None)


def train(args):
    import json

    import keras

    keras.utils.set_random_seed(args.seed)
    out_dir = os.path.join(args.out_dir, args.run_name or args.model)
    os.makedirs(out_dir, exist_ok=True)
    steps = 2 * args.max_length + 1
    state_path = os.path.join(out_dir, "curriculum.json")
    state = {"length": args.curriculum_start or args.max_length}
    if os.path.exists(state_path):  # resumed run: keep the curriculum's stage
        with open(state_path) as f:
            state = json.load(f)

    class RandomCopies(keras.utils.PyDataset):
        def __init__(self):
            super().__init__()
            self.epoch = 0

        def __len__(self):
            return args.steps_per_epoch

        def __getitem__(self, i):
            # Seeded by (seed, epoch, batch) so a resumed run sees fresh batches.
            rng = np.random.default_rng([args.seed, self.epoch, i])
            x, y, w, _ = padded_batch(
                rng, args.batch_size, args.max_length, steps, state["length"], args.mix
            )
            return x, y, w

    data = RandomCopies()
    (vx, vy, vw, vlen), (lx, ly, lw) = validation_set(args.max_length)
    start = time.time()

    class Track(keras.callbacks.Callback):
        """Validation bit errors (lengths 1..20 and 40); keep the best model;
        grow the curriculum; stop at the time budget."""

        def __init__(self):
            super().__init__()
            self.best = np.inf
            best_file = os.path.join(out_dir, "best_score.txt")
            if os.path.exists(best_file):
                with open(best_file) as f:
                    self.best = float(f.read())

        def on_epoch_begin(self, epoch, logs=None):
            data.epoch = epoch

        def on_train_batch_end(self, batch, logs=None):
            if args.time_budget and time.time() - start > args.time_budget:
                self.model.stop_training = True

        def on_epoch_end(self, epoch, logs=None):
            per_seq = errors_per_sequence(self.model.predict(vx, batch_size=64, verbose=0), vy, vw)
            long = errors_per_sequence(self.model.predict(lx, batch_size=64, verbose=0), ly, lw)
            short = float(per_seq.mean())
            at = {n: float(per_seq[vlen == n].mean()) for n in (10, 20)}
            logs.update(
                val_bits_1_20=short,
                val_bits_10=at[10],
                val_bits_20=at[20],
                val_bits_40=float(long.mean()),
                curriculum=state["length"],
            )
            # Selection: the two targets, equally weighted.
            score = short + float(long.mean()) / 10.0
            if state["length"] >= args.max_length and score < self.best:
                self.best = score
                self.model.save(os.path.join(out_dir, "best.keras"))
                with open(os.path.join(out_dir, "best_score.txt"), "w") as f:
                    f.write(f"{score}\n")
            self.model.save(os.path.join(out_dir, "last.keras"))
            stage = float(per_seq[vlen <= state["length"]].mean())
            if state["length"] < args.max_length and stage < args.curriculum_threshold:
                state["length"] = min(args.max_length, state["length"] + args.curriculum_step)
            with open(state_path, "w") as f:
                json.dump(state, f)
            print(
                f"epoch {epoch + 1} ({time.time() - start:.0f} s): valid bit errors/seq "
                f"L=1..20 {short:.3f} L=10 {at[10]:.3f} L=20 {at[20]:.3f} "
                f"L=40 {long.mean():.3f}; curriculum max length {state['length']} "
                f"(best score {self.best:.3f})",
                flush=True,
            )

    with _scope(args) as dist:
        model = build_model(args.model, args.memory_size, args.lstm_units)
        optimizer = keras.optimizers.Adam(args.learning_rate, global_clipnorm=args.clipnorm)
        loss = keras.losses.BinaryCrossentropy(from_logits=True)
        if dist is not None:
            dist.compile(model, optimizer=optimizer, loss=loss, weighted_metrics=[])
        else:
            model.compile(optimizer=optimizer, loss=loss, weighted_metrics=[])
    if args.init_from:
        source = keras.saving.load_model(args.init_from, safe_mode=True)
        model.set_weights(source.get_weights())
        print(f"initialised from {args.init_from}", flush=True)
    model.fit(
        data,
        epochs=args.epochs,
        verbose=2 if args.verbose else 0,
        callbacks=[
            keras.callbacks.BackupAndRestore(args.backup_dir or os.path.join(out_dir, "backup")),
            Track(),
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
        model = zoo.load(NAME).model
    seed = VALID_SEED if args.split == "valid" else TEST_SEED
    value = bit_errors(model, args.length, args.count, seed)
    print(f"length {args.length}, {args.count} sequences [{args.split}]: bit errors/sequence")
    print(f"{value:.4f}")
    return 0


TEST_LENGTHS = (10, 20, 30, 40, 60, 80)


def test_metrics(model, count=256, lengths=TEST_LENGTHS):
    """Test bit errors per sequence at each length (seed ``TEST_SEED + L``)."""
    return {
        f"test_bit_errors_per_sequence_L{n}": round(bit_errors(model, n, count), 4) for n in lengths
    }


def register(args):
    """Ship a trained NTM (``--model-path``) with its measured test metrics;
    ``--baseline-path`` (the LSTM trained the same way) is measured too and
    recorded beside them."""
    import keras

    from keras_seqmodels.zoo.registry import register_model

    model = keras.saving.load_model(args.model_path, safe_mode=True)
    metrics = test_metrics(model, args.count)
    extra = {"parameters": int(model.count_params())}
    if args.baseline_path:
        baseline = keras.saving.load_model(args.baseline_path, safe_mode=True)
        extra["lstm_baseline_metrics"] = test_metrics(baseline, args.count)
        extra["lstm_baseline_parameters"] = int(baseline.count_params())
    if args.trained_with:
        extra["trained_with"] = args.trained_with
    register_model(
        NAME,
        args.model_path,
        task="copy task, random 8-bit vectors, trained on lengths 1-20",
        metrics=metrics,
        data="generated (numpy seed 20140 + L: 256 test sequences per length L)",
        command="seqmodels evaluate ntm-copy --length L",
        card="zoo/ntm-copy/card.md",
        extra=extra,
    )
    print(metrics)
    print(extra)


def main(argv=None):
    from keras_seqmodels.training import recipe_utils

    parser = argparse.ArgumentParser(prog=f"recipe {NAME}")
    parser.add_argument("action", choices=["train", "evaluate", "register"])
    recipe_utils.add_common_arguments(parser, epochs=400, batch_size=32)
    parser.add_argument("--model", default="ntm", choices=["ntm", "lstm"])
    parser.add_argument("--memory-size", type=int, default=128)
    parser.add_argument("--lstm-units", type=int, default=128)
    parser.add_argument("--steps-per-epoch", type=int, default=100)
    parser.add_argument("--max-length", type=int, default=20)
    parser.add_argument(
        "--curriculum-start",
        type=int,
        default=4,
        help="first maximum training length (0: no curriculum)",
    )
    parser.add_argument("--curriculum-step", type=int, default=2)
    parser.add_argument(
        "--curriculum-threshold",
        type=float,
        default=0.5,
        help="valid bit errors/seq below which the curriculum grows",
    )
    parser.add_argument(
        "--mix",
        type=float,
        default=0.2,
        help="fraction of sequences with lengths over the full range",
    )
    parser.add_argument("--learning-rate", type=float, default=1e-3)
    parser.add_argument("--clipnorm", type=float, default=10.0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--time-budget",
        type=float,
        default=0.0,
        help="stop training after this many seconds (0: no limit)",
    )
    parser.add_argument("--init-from", default=None, help="a .keras file to start from")
    parser.add_argument("--run-name", default=None, help="subfolder of --out-dir")
    parser.add_argument("--backup-dir", default=None, help="default: <run folder>/backup")
    parser.add_argument("--verbose", action="store_true")
    parser.add_argument("--split", default="test", choices=["valid", "test"])
    parser.add_argument("--length", type=int, default=20)
    parser.add_argument("--count", type=int, default=256)
    parser.add_argument("--model-path", default=None, help="a .keras file instead of the zoo's")
    parser.add_argument("--baseline-path", default=None, help="register: the LSTM baseline")
    parser.add_argument("--trained-with", default=None, help="register: how the weights were made")
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
