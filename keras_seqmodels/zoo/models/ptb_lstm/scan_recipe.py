"""ptb-mingru: a MinGRU (or Hawk, LRU, minLSTM) language model on the Penn
Treebank at ptb-lstm's parameter count, for the comparison with its LSTM.

The same data, vocabulary, TBPTT windows (stateful: each window continues the
previous one, states reset at each epoch), stream perplexity and packaging
as ``keras_seqmodels.zoo.models.ptb_lstm.recipe``; the network is
``scan_network``'s residual stack, trained with AdamW (weight decay on the
matrices), the rate warmed up over ``--warmup-epochs`` and cosine-decayed to
2% over ``--epochs`` or ``--schedule-seconds`` of training (set it to
``--time-budget``). ``--layer`` picks the recurrent layer (``mingru``,
``minlstm``, ``hawk``, ``lru``, or ``lstm`` for a check of the stack).

    seqmodels train ptb-mingru --epochs 40 --work-dir runs/ptb-mingru
    seqmodels evaluate ptb-mingru --split test --model runs/ptb-mingru/ptb-mingru.keras

The zoo ships no trained ptb-mingru (its spec is ``shipped=False``): evaluate
a file of one's own with ``--model``.
"""

import math
import os

from keras_seqmodels.language_model import network as lm_network
from keras_seqmodels.zoo.models.ptb_lstm import network, recipe, scan_network
from keras_seqmodels.zoo.models.ptb_lstm.recipe import (  # noqa: F401 (the recipe's hooks)
    DATA,
    DATA_SUBDIR,
    MONITOR,
    load_data,
)

CONFIG = {
    "epochs": 40,
    "batch_size": 32,  # rows of the stream
    "seed": 20,
    "layer": "mingru",
    "units": 650,
    "blocks": 2,
    "mlp_ratio": 2.0,  # the GLU MLP's hidden width over units
    "dropout": 0.5,  # on the embedding and before the logits
    "block_dropout": 0.3,  # after each recurrent layer and MLP
    "bptt": 70,  # window length
    "learning_rate": 2e-3,  # AdamW's peak rate
    "weight_decay": 0.1,
    "warmup_epochs": 1,
    "schedule_seconds": 0.0,  # > 0: the cosine decays over these seconds of training
    "clipnorm": 1.0,
    "init_scale": 0.05,  # the embedding's uniform initialisation
}
TASK = (
    "word-level language model (next-word logits over a 10,000-word vocabulary) "
    "with linear-recurrence blocks"
)
MIN_RATE = 0.02
NO_DECAY = ("bias", "gamma", "beta", "nu", "theta", "log", "a_param", "lambda")
_SIZE = ("units", "blocks", "layer", "mlp_ratio")


def build_model(config):
    """The training model: stateful, ``(batch_size, bptt)`` windows."""
    if recipe._replicas() != 1:
        raise ValueError(
            f"ptb-mingru: stateful TBPTT carries each row's state from one batch to the "
            f"next on one replica; the strategy gave {recipe._replicas()} replicas. "
            "Use --strategy default."
        )
    vocab_size = len(recipe.vocabulary(config["data_dir"]))
    return scan_network.build_model(
        vocab_size, **{k: config[k] for k in _SIZE}, dropout=config["dropout"],
        block_dropout=config["block_dropout"], batch=config["batch_size"], bptt=config["bptt"],
        stateful=True, init_scale=config["init_scale"], seed=config["seed"],
    )  # fmt: skip


def compile_options(config):
    import keras

    optimizer = keras.optimizers.AdamW(
        config["learning_rate"], weight_decay=config["weight_decay"], clipnorm=config["clipnorm"]
    )
    optimizer.exclude_from_weight_decay(var_names=list(NO_DECAY))
    return dict(
        optimizer=optimizer, loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    )


def callbacks(config, work_dir, train):
    """States reset and the rate set at each epoch; validation perplexity."""
    import keras

    from keras_seqmodels.training.epoch_rate import epoch_rate_callback

    valid = recipe.ids_of(config, "validation")

    class Stream(keras.callbacks.Callback):
        evaluator = None  # built once: its forward pass compiles once

        def on_epoch_begin(self, epoch, logs=None):
            lm_network.reset_states(self.model)

        def on_epoch_end(self, epoch, logs=None):
            if self.evaluator is None:
                self.evaluator = scan_network.stream_evaluator(self.model)
            logs["val_perplexity"] = lm_network.perplexity(
                self.model, valid, window=100, rows=10, evaluator=self.evaluator
            )[0]
            logs["perplexity"] = math.exp(logs["loss"])

    rate = epoch_rate_callback(config["learning_rate"], config["epochs"], config["warmup_epochs"],
                               MIN_RATE, config["schedule_seconds"])  # fmt: skip
    return [rate, Stream()]


def package(model, config):
    """The stateless model (any batch, any length) with the trained weights;
    the vocabulary is written beside the work folder's artifact."""
    vocab = recipe.vocabulary(config["data_dir"])
    free = scan_network.build_model(
        len(vocab), **scan_network.model_options(model), dropout=config["dropout"],
        block_dropout=config["block_dropout"],
    )  # fmt: skip
    lm_network.copy_weights(model, free)
    with open(os.path.join(config["work_dir"], "vocab.txt"), "w", encoding="utf-8") as f:
        f.write("\n".join(vocab) + "\n")
    return free


def evaluate(model, data, config):
    """Stream perplexity (10 rows, windows of 100, states carried over)."""
    if config["smoke"]:
        vocab = recipe.vocabulary(None)
    elif config.get("model"):
        vocab = network.load_vocabulary(os.path.join(os.path.dirname(config["model"]), "vocab.txt"))
    else:
        from keras_seqmodels.zoo import api

        vocab = network.load_vocabulary(api.asset_path("ptb-mingru", "vocabulary"))
    ids = recipe.ids_of(config, config["split"], vocab)
    perplexity, count = lm_network.perplexity(
        model, ids, window=100, rows=10, evaluator=scan_network.stream_evaluator(model)
    )
    return {"tokens_scored": count, "perplexity": round(perplexity, 2)}
