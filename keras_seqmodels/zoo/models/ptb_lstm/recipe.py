"""ptb-lstm: a 2-layer word-level LSTM language model on the Penn Treebank.

Truncated back-propagation through time over one continuous token stream
(Zaremba et al. 2014): the stream is cut into ``--batch-size`` rows and read
``--bptt`` tokens at a time by stateful LSTMs, so each window continues the
previous one (states reset at each epoch). SGD at ``lr * bptt`` with the
global norm clipped at ``clip / bptt`` on the token-mean loss is exactly
Zaremba's update on the window sum. Selection: the validation perplexity of a
stateful copy; ``package`` gives the stateless model (batch and length free)
that ships, with its vocabulary beside it (``vocab.txt``, word i on line i).

    seqmodels train ptb-lstm
    seqmodels evaluate ptb-lstm --split test
"""

import functools
import math
import os

import numpy as np

from keras_seqmodels.language_model import network as lm_network
from keras_seqmodels.zoo.models.ptb_lstm import network
from keras_seqmodels.zoo.models.ptb_lstm.config import (
    CONFIG,  # noqa: F401 (the recipe's)
    SMOKE_WORDS,
    SPLITS,
)

TASK = "word-level language model (next-word logits over a 10,000-word vocabulary)"
DATA = (
    "Penn Treebank, Mikolov's preprocessing: train 929,589 / valid 73,760 / "
    "test 82,430 tokens; selection on valid"
)
MONITOR = ("val_perplexity", "min")
DATA_SUBDIR = "ptb"


@functools.lru_cache(maxsize=4)
def stream(data_dir, split):
    """The split's words, each line followed by ``<eos>``."""
    if data_dir is None:  # smoke: a seeded stream of a few words
        rng = np.random.default_rng(list(SPLITS).index(split))
        # Train: two windows at the largest default sizes of the recipes in
        # this folder (32 rows x 70 steps); the framework runs a few of them.
        count = 5000 if split == "train" else 60
        return tuple(f"w{i}" for i in rng.integers(0, SMOKE_WORDS, count))
    from keras_seqmodels.language_model.text import line_words

    return tuple(line_words(_lines(data_dir, split), lowercase=False))  # "N" stands for numbers


def _lines(data_dir, split):
    """The split's lines through the TFDS builder ``ptb_text``; where
    TensorFlow is not installed (a JAX-only GPU machine), the same lines read
    from the builder's file directly (stripped, in file order, as it yields them)."""
    try:
        import tensorflow_datasets  # noqa: F401
    except ImportError:
        path = os.path.join(data_dir, f"ptb.{SPLITS[split]}.txt")
        if not os.path.isfile(path):
            raise FileNotFoundError(
                f"ptb-lstm: no {os.path.basename(path)} in the data folder {data_dir!r}; "
                "it holds Mikolov's ptb.{train,valid,test}.txt."
            ) from None
        with open(path, encoding="utf-8") as f:
            return [line.strip() for line in f]
    from keras_seqmodels.data.tfds_builders import load_local
    from keras_seqmodels.zoo.api import cache_dir

    ds = load_local("ptb_text", data_dir, SPLITS[split], os.path.join(cache_dir(), "tfds"))
    return [ex["text"].decode("utf-8") for ex in ds.as_numpy_iterator()]


def vocabulary(data_dir):
    return network.build_vocabulary(stream(data_dir, "train"))


def ids_of(config, split, vocab=None):
    from keras_seqmodels.language_model.text import to_ids

    words = stream(config["data_dir"], split)
    return to_ids(words, vocab or vocabulary(config["data_dir"]))


def load_data(data_dir, split, smoke, config):
    """Train: the TBPTT windows in stream order (a ``PyDataset``); the
    validation perplexity is computed by the callback, not by ``fit``."""
    import keras

    if split != "train":
        return None
    x, y = network.stream_batches(ids_of(config, "train"), config["batch_size"], config["bptt"])

    class Windows(keras.utils.PyDataset):
        def __len__(self):
            return len(x)

        def __getitem__(self, i):
            return x[i], y[i]

    return Windows()


def _replicas():
    import keras

    if keras.backend.backend() == "tensorflow":
        import tensorflow as tf

        return tf.distribute.get_strategy().num_replicas_in_sync
    distribution = keras.distribution.distribution()
    return 1 if distribution is None else distribution.device_mesh.devices.size


def build_model(config):
    """The training model: stateful, ``(batch_size, bptt)`` windows."""
    if _replicas() != 1:
        raise ValueError(
            f"ptb-lstm: stateful TBPTT carries each row's LSTM state from one batch to "
            f"the next on one replica; the strategy gave {_replicas()} replicas. "
            "Use --strategy default."
        )
    vocab_size = len(vocabulary(config["data_dir"]))
    return network.build_model(
        vocab_size, config["units"], config["layers"], config["dropout"],
        batch=config["batch_size"], bptt=config["bptt"], stateful=True,
        init_scale=config["init_scale"], seed=config["seed"], **_variant(config),
    )  # fmt: skip


def _variant(config):
    """The ``build_model`` options of the variants."""
    return {k: config[k] for k in ("recurrent_dropout", "variational", "tie_weights")}


def compile_options(config):
    import keras

    return dict(
        optimizer=keras.optimizers.SGD(
            config["lr"] * config["bptt"], global_clipnorm=config["clip"] / config["bptt"]
        ),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
    )


def learning_rate(config, epoch):
    """``lr * decay ** max(epoch - decay_after, 0)``, epochs from 1."""
    return config["lr"] * config["decay"] ** max(epoch - config["decay_after"], 0)


def callbacks(config, work_dir, train):
    """States reset and the rate set at each epoch; validation perplexity."""
    import keras

    valid = ids_of(config, "validation")

    class Zaremba(keras.callbacks.Callback):
        evaluator = None  # built once: its forward pass compiles once

        def on_epoch_begin(self, epoch, logs=None):
            lm_network.reset_states(self.model)
            rate = learning_rate(config, epoch + 1) * config["bptt"]
            self.model.optimizer.learning_rate.assign(rate)

        def on_epoch_end(self, epoch, logs=None):
            if self.evaluator is None:
                self.evaluator = network.stream_evaluator(self.model)
            logs["val_perplexity"] = lm_network.perplexity(
                self.model, valid, window=100, rows=10, evaluator=self.evaluator
            )[0]
            logs["perplexity"] = math.exp(logs["loss"])

    return [Zaremba()]


def package(model, config):
    """The stateless model (any batch, any length) with the trained weights;
    the vocabulary is written beside the work folder's artifact."""
    vocab = vocabulary(config["data_dir"])
    free = network.build_model(len(vocab), config["units"], config["layers"], config["dropout"],
                               **_variant(config))  # fmt: skip
    lm_network.copy_weights(model, free)
    with open(os.path.join(config["work_dir"], "vocab.txt"), "w", encoding="utf-8") as f:
        f.write("\n".join(vocab) + "\n")
    return free


def evaluate(model, data, config):
    """Stream perplexity (10 rows, windows of 100, states carried over)."""
    if config["smoke"]:
        vocab = vocabulary(None)
    elif config.get("model"):
        vocab = network.load_vocabulary(os.path.join(os.path.dirname(config["model"]), "vocab.txt"))
    else:
        from keras_seqmodels.zoo import api

        vocab = network.load_vocabulary(api.asset_path("ptb-lstm", "vocabulary"))
    ids = ids_of(config, config["split"], vocab)
    perplexity, count = lm_network.perplexity(
        model, ids, window=100, rows=10, evaluator=network.stream_evaluator(model)
    )
    return {"tokens_scored": count, "perplexity": round(perplexity, 2)}
