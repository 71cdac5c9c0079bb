"""multi30k-en-de: English -> German translation on Multi30k (task 1).

The network (``EncoderDecoder``, integer ids) is trained by teacher forcing
on length-bucketed batches of a few fixed shapes (one trace each on JAX or
XLA), the epoch of lowest validation loss kept; ``package`` then puts the
vocabularies, tokenizer and beam search around it (``Translator``: strings
in, strings out), the shipped model. Tokens: words seen ``min_count`` times
in train plus characters. Evaluation: sacrebleu (default, cased) of the
detokenized output against the raw references.

    seqmodels train multi30k-en-de --epochs 40 --dropout 0.4
    seqmodels evaluate multi30k-en-de --split test
"""

import functools
import os

import numpy as np

from keras_seqmodels.zoo.models.multi30k_en_de.config import (
    CONFIG,  # noqa: F401 (the recipe's)
    NETWORK,
    SMOKE_PAIRS,
    SPLITS,
    WIDTHS,
)

TASK = "English->German translation (strings in, strings out)"
DATA = "Multi30k task 1: train 29,000 / val 1,014 (selection) / test2016 1,000"
MONITOR = ("val_loss", "min")
DATA_SUBDIR = "multi30k"


@functools.lru_cache(maxsize=8)
def sentences(data_dir, split):
    """``(english, german)`` lists of one split (the smoke pairs without data)."""
    if data_dir is None:
        return [e for e, _ in SMOKE_PAIRS], [d for _, d in SMOKE_PAIRS]
    from keras_seqmodels.seq2seq.multi30k import read_split
    from keras_seqmodels.zoo.api import cache_dir

    tfds_dir = os.path.join(cache_dir(), "tfds")
    return read_split(os.path.join(data_dir, "raw"), SPLITS[split], tfds_dir)


@functools.lru_cache(maxsize=2)
def vocabularies(data_dir, min_count):
    from keras_seqmodels.seq2seq import text

    english, german = sentences(data_dir, "train")
    return text.build_vocabulary(english, min_count), text.build_vocabulary(german, min_count)


def _translator(core, config, **options):
    from keras_seqmodels.seq2seq.translator import Translator

    source, target = vocabularies(config["data_dir"], config["min_count"])
    return Translator(core, source, target, **options)


def id_arrays(config, split):
    """Source ids and ``<s> target </s>`` ids, by the shipped tokenizer."""
    from keras_seqmodels.seq2seq import EncoderDecoder, text

    source, target = vocabularies(config["data_dir"], config["min_count"])
    core = EncoderDecoder(len(source) + 2, len(target) + 2, 8, 8, 8, start_id=2, end_id=3)
    tokenizer = _translator(core, config)
    english, german = sentences(config["data_dir"], split)
    ids = tokenizer.encode_target(german).to_list()
    width = max(len(t) for t in ids) + 2
    return (
        np.asarray(tokenizer.encode_source(english)),
        text.encode_numpy(ids, width, start_id=2, end_id=3),
    )


def bucketed_batches(source, target, batch_size, shuffle, seed=0):
    """Batches of sentences of similar length, padded (source and target
    alike) to the next width in ``WIDTHS`` and with empty rows up to
    ``batch_size``: a handful of shapes. Empty rows add nothing to the loss."""
    rng = np.random.default_rng(seed)
    length = np.maximum((source > 0).sum(1), (target > 0).sum(1) - 1)
    order = np.argsort(length + rng.random(len(source)), kind="stable")
    groups = [order[i : i + batch_size] for i in range(0, len(order), batch_size)]
    if shuffle:
        rng.shuffle(groups)
    out = []
    for rows in groups:
        need = int(length[rows].max())
        width = next((w for w in WIDTHS if w >= need), need)
        src = np.zeros((batch_size, width), np.int32)
        tgt = np.zeros((batch_size, width + 1), np.int32)
        s, t = source[rows, :width], target[rows, : width + 1]
        src[: len(rows), : s.shape[1]] = s
        tgt[: len(rows), : t.shape[1]] = t
        # Decoder input: the target behind <s>; label: the target itself.
        out.append(((src, tgt[:, :-1]), tgt[:, 1:]))
    return out


def load_data(data_dir, split, smoke, config):
    """Id batches (a ``PyDataset``; train reshuffled each epoch)."""
    import keras

    source, target = id_arrays(config, split)
    shuffle = split == "train"

    class Batches(keras.utils.PyDataset):
        epoch = 0
        items = bucketed_batches(source, target, config["batch_size"], shuffle)

        def __len__(self):
            return len(self.items)

        def __getitem__(self, i):
            return self.items[i]

        def on_epoch_end(self):
            if shuffle:
                self.epoch += 1
                self.items = bucketed_batches(
                    source, target, config["batch_size"], True, seed=self.epoch
                )

    return Batches()


def evaluation_data(data_dir, split, smoke, config):
    return sentences(data_dir, split)


def build_model(config):
    from keras_seqmodels.seq2seq import EncoderDecoder

    source, target = vocabularies(config["data_dir"], config["min_count"])
    keys = ("embedding_dim", "encoder_units", "decoder_units", "encoder_layers", "dropout")
    core = EncoderDecoder(
        len(source) + 2,
        len(target) + 2,
        input_feeding=config["input_feeding"],
        scheduled_sampling=config["scheduled_sampling"] != "none",
        **{k: config[k] for k in keys},
        **NETWORK,
    )
    core.build(((None, None), (None, None)))
    return core


def callbacks(config, work_dir, train):
    if config["scheduled_sampling"] == "none":
        return []
    from keras_seqmodels.training import ScheduledSampling

    k = config["ss_k"] or None
    return [
        ScheduledSampling(config["scheduled_sampling"], k=k, c=config["ss_c"], per=config["ss_per"])
    ]


def compile_options(config):
    import keras

    from keras_seqmodels.seq2seq import MaskedAccuracy, MaskedSparseCrossentropy

    steps = len(sentences(config["data_dir"], "train")[0]) // config["batch_size"] + 1
    schedule = keras.optimizers.schedules.CosineDecay(
        config["learning_rate"], decay_steps=steps * config["epochs"], alpha=0.05
    )
    return dict(
        optimizer=keras.optimizers.Adam(schedule, clipnorm=1.0),
        loss=MaskedSparseCrossentropy(label_smoothing=config["label_smoothing"]),
        metrics=[MaskedAccuracy()],
    )


def package(model, config):
    """The string-to-string ``Translator`` around the selected network."""
    translator = _translator(
        model, config, beam_size=config["beam"], alpha=config["alpha"], name="translator"
    )
    translator.build()
    return translator


def evaluate(model, data, config):
    """BLEU (sacrebleu default: 13a, cased) with beam ``config["beam"]``."""
    import sacrebleu
    import tensorflow as tf

    english, german = data
    model.alpha = config["alpha"]

    @tf.function(reduce_retracing=True)
    def decode(lines):
        return model(lines, beam_size=config["beam"])

    hypotheses = []
    for i in range(0, len(english), 64):
        output = decode(tf.constant(english[i : i + 64])).numpy()
        hypotheses += [t.decode("utf-8") for t in output]
    bleu = sacrebleu.corpus_bleu(hypotheses, [german])
    name = f"bleu_beam{config['beam']}" if config["beam"] > 1 else "bleu_greedy"
    return {"sentences": len(english), name: round(bleu.score, 2), "signature": str(bleu)}
