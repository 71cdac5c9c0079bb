"""ud-ewt-upos: BiLSTM + character-LSTM UPOS taggers (CRF or softmax output).

Data: UD English EWT r2.16 through the local TFDS builder
(``keras_seqmodels.data.tfds_builders.UdEnglishEwt``). ``fit`` trains the id
core on fixed-shape batches of sentences padded to 16/32/64/160 words, with
word dropout to the unknown id (probability ``alpha / (alpha + count)``,
drawn again each epoch); the dev UPOS accuracy of each epoch selects the
checkpoint. ``package`` puts the vectorizer (the vocabularies) and the tag
strings around it; ``combine`` averages several taggers' sequence scores
(``--seeds ... --ensemble K``). The shipped model maps whitespace-tokenised
sentence strings to UPOS tag strings.

    seqmodels train ud-ewt-upos --units 128
    seqmodels evaluate ud-ewt-upos --split test
"""

import functools
import os

import numpy as np

from keras_seqmodels.zoo.models.ud_ewt_upos import network

CONFIG = {
    "epochs": 12,
    "batch_size": 32,  # sentences (fewer rows for sentences over 64 words)
    "seed": 1,
    "units": 128,
    "word_dim": 100,
    "char_dim": 32,
    "char_units": 64,
    "dropout": 0.33,
    "crf": True,  # false: softmax cross-entropy
    "word_dropout": 0.25,  # alpha
    "lr": 2e-3,
    "lr_decay": 0.9,  # per epoch
}
TASK = (
    "UPOS tagging of English text (UD-style tokenizer: punctuation and clitics split) "
    "(BiLSTM + char-LSTM taggers: CRF and softmax cores, mean sequence score)"
)
DATA = (
    "UD English EWT r2.16; train 12,544 sentences, selection on dev "
    "(25,147 words), test 25,094 syntactic words"
)
MONITOR = ("val_upos_accuracy", "max")
DATA_SUBDIR = "ud_english_ewt"
SPLITS = {"train": "train", "validation": "dev", "test": "test"}
SMOKE_SIZES = {"train": 24, "validation": 8, "test": 8}


@functools.lru_cache(maxsize=4)
def sentences(data_dir, split):
    """``(words, tags)`` pairs of a split (a few generated ones for smoke)."""
    from keras_seqmodels.data.tfds_builders import UPOS_TAGS

    if data_dir is None:
        rng = np.random.default_rng(list(SMOKE_SIZES).index(split))
        lengths = rng.integers(1, 20, SMOKE_SIZES[split])
        words = [[f"w{i}" for i in rng.integers(0, 12, n)] for n in lengths]
        return tuple((ws, [UPOS_TAGS[i] for i in rng.integers(0, 5, len(ws))]) for ws in words)
    from keras_seqmodels.data.tfds_builders import load_local
    from keras_seqmodels.zoo.api import cache_dir

    tfds_dir = os.path.join(cache_dir(), "tfds")
    ds = load_local("ud_english_ewt", data_dir, SPLITS[split], tfds_dir)
    return tuple(
        ([w.decode("utf-8") for w in ex["words"]], [UPOS_TAGS[i] for i in ex["upos"]])
        for ex in ds.as_numpy_iterator()
    )


@functools.lru_cache(maxsize=2)
def vocabularies(data_dir):
    """``(words, chars, counts)`` of the training split (lower-cased words)."""
    from keras_seqmodels.tagging.data import vocabularies as of_sentences

    return of_sentences(sentences(data_dir, "train"))


def vectorizer(data_dir):
    from keras_seqmodels.tagging.sentence_vectorizer import SentenceVectorizer

    words, chars, _ = vocabularies(data_dir)
    return SentenceVectorizer(words, chars, max_chars=network.MAX_CHARS, name="vectorizer")


def id_arrays(config, split):
    import keras

    from keras_seqmodels.data.tfds_builders import UPOS_TAGS
    from keras_seqmodels.tagging.data import to_arrays

    if keras.backend.backend() != "tensorflow":
        raise ValueError(
            "ud-ewt-upos: the sentences are turned into ids by the model's own "
            "SentenceVectorizer, which takes strings on the TensorFlow backend only. "
            f"Received: KERAS_BACKEND={keras.backend.backend()!r}"
        )
    data_dir = config["data_dir"]
    return to_arrays(sentences(data_dir, split), vectorizer(data_dir), UPOS_TAGS)


def load_data(data_dir, split, smoke, config):
    """Train: id batches (a ``PyDataset``, word dropout and order drawn
    again each epoch); the dev accuracy is the callback's, not ``fit``'s."""
    import keras

    from keras_seqmodels.training.batch_order import vary_first_two

    if split != "train":
        return None
    arrays = id_arrays(config, "train")
    words, _, counts = vocabularies(config["data_dir"])
    alpha = config["word_dropout"]
    drop = np.zeros(len(words) + 2, "float32")
    drop[2:] = [alpha / (alpha + counts[w]) for w in words]
    rng = np.random.default_rng(config["seed"])

    class Batches(keras.utils.PyDataset):
        def __init__(self):
            super().__init__()
            self.on_epoch_end()

        def on_epoch_end(self):
            # Widths and row counts vary: the first two batches must differ in
            # both, as Keras fixes the tf.data signature from them.
            batches = network.pad_batches(arrays, config["batch_size"], rng, drop)
            self.batches = vary_first_two(batches)

        def __len__(self):
            return len(self.batches)

        def __getitem__(self, i):
            x, y, _ = self.batches[i]
            return x, y

    return Batches()


def core_config(config):
    keys = ("word_dim", "char_dim", "char_units", "units", "dropout")
    return dict({k: config[k] for k in keys}, use_crf=config["crf"])


def build_model(config):
    """The training model: ``[word_ids, char_ids, tags]`` in."""
    from keras_seqmodels.data.tfds_builders import UPOS_TAGS

    words, chars, _ = vocabularies(config["data_dir"])
    return network.build_models(words, chars, UPOS_TAGS, **core_config(config))[0]


def compile_options(config):
    import keras

    options = dict(optimizer=keras.optimizers.Adam(config["lr"], beta_2=0.9, clipnorm=5.0))
    if config["crf"]:  # the CRF layer adds its forward-algorithm loss
        return dict(options, loss=None)
    return dict(options, loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))


def callbacks(config, work_dir, train):
    """The rate ``lr * lr_decay ** epoch``; the dev accuracy of each epoch."""
    import keras

    dev = network.pad_batches(id_arrays(config, "validation"), config["batch_size"])

    class DevAccuracy(keras.callbacks.Callback):
        def on_epoch_begin(self, epoch, logs=None):
            rate = config["lr"] * config["lr_decay"] ** epoch
            self.model.optimizer.learning_rate.assign(rate)

        def on_epoch_end(self, epoch, logs=None):
            metrics = network.score_ids(network.inference_model(self.model), dev)
            logs["val_upos_accuracy"] = metrics["upos_accuracy"]
            logs["val_oov_upos_accuracy"] = metrics["oov_upos_accuracy"]

    return [DevAccuracy()]


def package(model, config):
    """The string model: vectorizer, the selected id core, tag strings. A
    model that is one already (the shipped file, given to ``--init-from
    FILE --epochs 0``) is returned unchanged."""
    from keras_seqmodels.data.tfds_builders import UPOS_TAGS

    if "tagger_ids" in {layer.name for layer in model.layers}:
        return model
    infer = network.inference_model(model)
    return network.build_serving_model(infer, vectorizer(config["data_dir"]), UPOS_TAGS)


def combine(models, config):
    """One string model from several (``package``'s), averaging the cores'
    sequence scores (``network.build_ensemble``); a member that is itself an
    ensemble (the shipped file, ``--ensemble-with``) counts as its taggers.
    One model is returned unchanged. The members must share the vectorizer
    (the same training vocabularies)."""
    from keras_seqmodels.data.tfds_builders import UPOS_TAGS

    if len(models) == 1:
        return models[0]
    vectorizer = models[0].get_layer("vectorizer")
    expected = dict(vectorizer.get_config(), name=None)
    for i, model in enumerate(models[1:], 1):
        if dict(model.get_layer("vectorizer").get_config(), name=None) != expected:
            raise ValueError(
                "ud-ewt-upos combine: the vectorizers of members 0 and "
                f"{i} differ (other word or character vocabularies); combine only "
                "taggers trained on the same training split."
            )
    members = [(model.get_layer("tagger_ids"), {}) for model in models]
    infer = network.build_ensemble(members, UPOS_TAGS)
    return network.build_serving_model(infer, vectorizer, UPOS_TAGS)


def evaluation_data(data_dir, split, smoke, config):
    """The split's sentences and the lower-cased training words (for OOV)."""
    train_words = set(vocabularies(data_dir)[2])
    return sentences(data_dir, split), train_words


def evaluate(model, data, config):
    """UPOS accuracy (and on words unseen in train) of the string model."""
    split_sentences, train_words = data
    metrics = network.score(model, split_sentences, train_words)
    return {k: round(v, 4) if isinstance(v, float) else v for k, v in metrics.items()}
