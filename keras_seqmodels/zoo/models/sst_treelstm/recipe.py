"""sst-treelstm: binary constituency Tree-LSTM for SST fine-grained sentiment.

Data: the Stanford Sentiment Treebank PTB trees (``sst/{train,dev,test}.txt``),
tokens lower-cased. Every labelled node of a training tree is an example
(Tai et al. 2015), batched by the package's tree batcher
(``keras_seqmodels.trees.tree_dataset``); the dev root fine-grained accuracy
of each epoch selects the checkpoint. ``prepare`` starts the embedding from
skip-gram vectors trained (``model.fit``, a wall-clock budget) on the SST
train sentences and unlabelled train text of other sets. Metrics on the
roots: fine-grained accuracy (5 classes) and binary accuracy on the
non-neutral roots.

    seqmodels train sst-treelstm --time-budget 2100
    seqmodels evaluate sst-treelstm --split test
"""

import functools
import os

import numpy as np

from keras_seqmodels.zoo.models.sst_treelstm import network, skipgram

CONFIG = {
    "epochs": 21,
    "batch_size": 25,  # trees
    "seed": 22,
    "embed_dim": 100,
    "units": 150,
    "dropout": 0.5,
    "lr": 2e-3,
    "skipgram_s": 420.0,  # seconds of skip-gram pre-training (0: none)
    "skipgram_lr": 1e-2,
    # Unlabelled train text beside ptb/ptb.train.txt, relative to the data root.
    "skipgram_text": "ud_english_ewt/en_ewt-ud-train.conllu,multi30k/tok/train.lc.norm.tok.en",
}
TASK = "SST fine-grained sentiment (root, 5 classes) from binary constituency trees"
DATA = "Stanford Sentiment Treebank PTB trees: train 8,544 / dev 1,101 / test 2,210"
MONITOR = ("val_fine_grained_accuracy", "max")
DATA_SUBDIR = "sst"


def vocabulary(data_dir):
    """The words of ``network.build_vocabulary`` (train split)."""
    return network.build_vocabulary(trees(data_dir, "train"))


@functools.lru_cache(maxsize=4)
def trees(data_dir, split):
    """The split's trees, tokens lower-cased (a few generated ones for smoke)."""
    from keras_seqmodels.trees import lower_tokens, read_ptb_file

    if data_dir is None:
        seed = ("train", "validation", "test").index(split)
        return tuple(network.random_trees(24 if split == "train" else 8, seed))
    path = os.path.join(data_dir, ("dev" if split == "validation" else split) + ".txt")
    return tuple(lower_tokens(t) for t in read_ptb_file(path))


def load_data(data_dir, split, smoke, config):
    """Train: batches of whole trees, every node labelled (reshuffled each
    epoch); the dev accuracy is the callback's, not ``fit``'s."""
    from keras_seqmodels.trees import tree_dataset

    if split != "train":
        return None
    return tree_dataset(list(trees(data_dir, "train")), config["batch_size"], arity=2,
                        shuffle=True, seed=config["seed"])  # fmt: skip


def build_model(config):
    import keras

    if keras.backend.backend() != "tensorflow":
        raise ValueError(
            "sst-treelstm: the model takes token strings (StringLookup inside) and the "
            "tree batcher is tf.data, so it trains on the TensorFlow backend only. "
            f"Received: KERAS_BACKEND={keras.backend.backend()!r}"
        )
    return network.build_model(
        vocabulary(config["data_dir"]), config["embed_dim"], config["units"], config["dropout"]
    )


def compile_options(config):
    import keras

    return dict(
        optimizer=keras.optimizers.Adam(config["lr"]),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True, ignore_class=-1),
    )


def skipgram_corpus(config):
    """Ids of the SST train sentences, PTB train and ``skipgram_text``
    (``-1`` ends a sentence)."""
    data_dir = config["data_dir"]
    sentences = [[t for t in tree.tokens if t is not None] for tree in trees(data_dir, "train")]
    if data_dir is not None:
        root = os.path.dirname(os.path.normpath(data_dir))
        ptb = os.path.join(root, "ptb", "ptb.train.txt")
        if os.path.isfile(ptb):  # as is: lower-cased already, "N" for numbers kept apart
            with open(ptb, encoding="utf-8") as f:
                sentences += [line.split() for line in f]
        paths = []
        for name in filter(None, config["skipgram_text"].split(",")):
            path = os.path.join(root, name)
            if not os.path.isfile(path):
                raise FileNotFoundError(
                    f"sst-treelstm: --skipgram-text names {path!r}, which does not exist."
                )
            paths.append(path)
        for path in paths:
            sentences += skipgram.text_sentences(path)
    return skipgram.corpus_ids(sentences, vocabulary(data_dir))


def prepare(model, train, config, work_dir):
    """Skip-gram vectors (cached in ``<work-dir>/skipgram.npy``) replace the
    embedding rows of the words the corpus holds."""
    if not config["skipgram_s"]:
        return
    corpus = skipgram_corpus(config)
    size = len(vocabulary(config["data_dir"])) + 1
    path = os.path.join(work_dir, "skipgram.npy")
    if os.path.isfile(path):
        vectors = np.load(path)
    else:
        smoke = {"batch": 256, "steps": 2} if config["smoke"] else {}
        vectors = skipgram.train_vectors(
            corpus, size, config["embed_dim"], config["skipgram_s"], config["seed"],
            config["skipgram_lr"], **smoke,
        )  # fmt: skip
        np.save(path, vectors)
    embedding = model.get_layer("embedding").embeddings
    seen = np.bincount(corpus[corpus >= 0], minlength=size) > 0
    embedding.assign(np.where(seen[:, None], vectors, np.asarray(embedding)).astype("float32"))


def callbacks(config, work_dir, train):
    """Dev root accuracies at the end of each epoch."""
    import keras

    dev = list(trees(config["data_dir"], "validation"))

    class DevAccuracy(keras.callbacks.Callback):
        def on_epoch_end(self, epoch, logs=None):
            for key, value in network.root_metrics(self.model, dev).items():
                if key.endswith("accuracy"):
                    logs[f"val_{key}"] = value

    return [DevAccuracy()]


def evaluation_data(data_dir, split, smoke, config):
    return list(trees(data_dir, split))


def evaluate(model, data, config):
    """Root fine-grained and binary accuracy."""
    metrics = network.root_metrics(model, data)
    return {k: round(v, 4) if isinstance(v, float) else v for k, v in metrics.items()}
