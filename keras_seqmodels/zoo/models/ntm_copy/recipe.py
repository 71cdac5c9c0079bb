"""ntm-copy: a Neural Turing Machine on the copy task (Graves et al. 2014).

Training lengths 1..20, mixed in every batch and padded after the recall
phase to 41 steps (one shape, one XLA compile), with a curriculum on the
maximum length (from 4, +2 whenever the validation bit errors up to the
current maximum fall below 0.5 per sequence; a fifth of the sequences always
use the full range). Loss: binary cross-entropy of the output steps.
Selection: mean validation bit errors over lengths 1..20 plus those at
length 40 over 10, once the curriculum has reached 20.

    seqmodels train ntm-copy --time-budget 3600
    seqmodels train ntm-copy --network lstm      # the baseline
    # the shipped NTM: no curriculum, then Adam 1e-4 from the best checkpoint
    seqmodels train ntm-copy --seeds 4 --curriculum-start 0 --work-dir W1
    seqmodels train ntm-copy --seeds 4 --curriculum-start 0 --work-dir W2 \\
        --learning-rate 1e-4 --init-from W1/seed=4/best.keras
    seqmodels evaluate ntm-copy --split test
"""

import json
import os

import numpy as np

from keras_seqmodels.zoo.models.ntm_copy import data
from keras_seqmodels.zoo.models.ntm_copy.config import (
    CONFIG,  # noqa: F401 (the recipe's)
    SMOKE,
    TEST_LENGTHS,
    VALIDATION_LENGTHS,
)

TASK = "copy task, random 8-bit vectors, trained on lengths 1-20"
DATA = "generated (numpy seed 20140 + L: 256 test sequences per length L)"
MONITOR = ("val_score", "min")


def _max_length(config):
    return SMOKE["max_length"] if config["smoke"] else config["max_length"]


def _validation_sets(config):
    n = _max_length(config)
    if config["smoke"]:
        return data.validation_set(n, per_length=2, long_length=2 * n, long_count=2)
    return data.validation_set(n, long_length=2 * n)


def load_data(data_dir, split, smoke, config):
    """Generated: ``train`` a ``PyDataset`` (curriculum in ``.length``),
    ``validation`` the fixed sequences ``(x, y, weights)``, ``test`` none."""
    import keras

    if split == "validation":
        return _validation_sets(config)[0][:3]
    if split == "test":
        return None
    steps = 2 * _max_length(config) + 1

    class RandomCopies(keras.utils.PyDataset):
        length = config["curriculum_start"] or _max_length(config)
        epoch = 0

        def __len__(self):
            return SMOKE["steps_per_epoch"] if smoke else config["steps_per_epoch"]

        def __getitem__(self, i):
            # Seeded by (seed, epoch, batch) so a resumed run sees fresh batches.
            rng = np.random.default_rng([config["seed"], self.epoch, i])
            x, y, w, _ = data.padded_batch(
                rng,
                config["batch_size"],
                _max_length(config),
                steps,
                min(self.length, _max_length(config)),
                config["mix"],
            )
            return x, y, w

    return RandomCopies()


def callbacks(config, work_dir, train):
    """Validation bit errors into the logs (``val_score`` selects) and the
    curriculum, whose stage is kept in ``curriculum.json`` across restarts."""
    import keras

    (vx, vy, vw, vlen), (lx, ly, lw) = _validation_sets(config)
    top = _max_length(config)
    path = os.path.join(work_dir, "curriculum.json")
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            train.length = json.load(f)["length"]

    class Curriculum(keras.callbacks.Callback):
        def on_epoch_begin(self, epoch, logs=None):
            train.epoch = epoch

        def on_epoch_end(self, epoch, logs=None):
            short = data.errors_per_sequence(self.model.predict(vx, verbose=0), vy, vw)
            long = data.errors_per_sequence(self.model.predict(lx, verbose=0), ly, lw)
            score = float(short.mean() + long.mean() / 10.0)
            logs.update(
                val_bits_short=float(short.mean()),
                val_bits_long=float(long.mean()),
                curriculum=train.length,
                val_score=score if train.length >= top else float("inf"),
            )
            if (
                train.length < top
                and short[vlen <= train.length].mean() < config["curriculum_threshold"]
            ):
                train.length = min(top, train.length + config["curriculum_step"])
            with open(path, "w", encoding="utf-8") as f:
                json.dump({"length": int(train.length)}, f)

    return [Curriculum()]


def build_model(config):
    import keras

    from keras_seqmodels.cells import LSTMCell
    from keras_seqmodels.layers import Recurrent
    from keras_seqmodels.memory import NTM

    inputs = keras.Input((None, data.BITS + 1), name="bits")
    if config["network"] == "ntm":
        hidden = NTM(
            100,
            memory_size=config["memory_size"],
            memory_width=20,
            shift_range=1,
            return_sequences=True,
            name="ntm",
        )(inputs)
    else:
        hidden = Recurrent(LSTMCell(config["lstm_units"]), return_sequences=True, name="lstm")(
            inputs
        )
    logits = keras.layers.Dense(data.BITS, name="logits")(hidden)
    return keras.Model(inputs, logits, name=f"ntm-copy-{config['network']}")


def compile_options(config):
    import keras

    return dict(
        optimizer=keras.optimizers.Adam(
            config["learning_rate"], global_clipnorm=config["clipnorm"]
        ),
        loss=keras.losses.BinaryCrossentropy(from_logits=True),
        weighted_metrics=[],
    )


def evaluate(model, split_data, config):
    """Mean wrong bits per sequence at each length: validation 128 sequences
    (seed 1410 + L), test 256 (seed 20140 + L)."""
    if config["split"] == "test":
        lengths, count, seed = TEST_LENGTHS, 256, data.TEST_SEED
    else:
        lengths, count, seed = VALIDATION_LENGTHS, 128, data.VALID_SEED
    if config["smoke"]:
        lengths, count = SMOKE["lengths"], SMOKE["count"]
    return {
        f"bit_errors_per_sequence_L{n}": round(data.bit_errors(model, n, count, seed), 4)
        for n in lengths
    }
