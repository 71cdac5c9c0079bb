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
import hashlib
import json
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
CACHE_NAME = "multi30k-en-de"  # folder of the prepared data in cache_dir()
CACHE_FORMAT = 1
# The raw files' stems, as the TFDS builder ``data.multi30k`` names them (that
# module imports TFDS, which a JAX-only machine lacks).
RAW_STEMS = {"train": "train", "validation": "val", "test": "test_2016_flickr"}


@functools.lru_cache(maxsize=8)
def sentences(data_dir, split):
    """``(english, german)`` lists of one split (the smoke pairs without data)."""
    if data_dir is None:
        return [e for e, _ in SMOKE_PAIRS], [d for _, d in SMOKE_PAIRS]
    from keras_seqmodels.data.multi30k import read_split
    from keras_seqmodels.zoo.api import cache_dir

    tfds_dir = os.path.join(cache_dir(), "tfds")
    return read_split(os.path.join(data_dir, "raw"), SPLITS[split], tfds_dir)


def vocabularies(data_dir, min_count):
    """Source and target vocabularies (words seen ``min_count`` times in train)."""
    return prepared(data_dir, min_count)["vocabularies"]


def _translator(core, config, **options):
    from keras_seqmodels.seq2seq.translator import Translator

    source, target = vocabularies(config["data_dir"], config["min_count"])
    return Translator(core, source, target, **options)


def id_arrays(config, split):
    """Source ids and ``<s> target </s>`` ids, by the shipped tokenizer."""
    return prepared(config["data_dir"], config["min_count"])[split]


def _tensorflow_available():
    try:
        import tensorflow  # noqa: F401
    except ImportError:
        return False
    return True


def cache_path(data_dir, min_count):
    """The prepared-data file of ``data_dir`` (``None``: the smoke pairs):
    ``<cache_dir()>/multi30k-en-de/prepared-min_count=M-KEY.npz`` (and
    ``.json``), KEY a hash of the raw files' bytes (or the smoke pairs), so
    other data or another ``min_count`` give another file."""
    from keras_seqmodels.zoo.api import cache_dir

    digest = hashlib.sha256(f"format={CACHE_FORMAT}".encode())
    if data_dir is None:
        digest.update(json.dumps(SMOKE_PAIRS).encode())
    else:
        for stem in sorted(RAW_STEMS.values()):
            for lang in ("en", "de"):
                name = f"{stem}.{lang}.gz"
                digest.update(name.encode())
                with open(os.path.join(data_dir, "raw", name), "rb") as f:
                    digest.update(f.read())
    stem = f"prepared-min_count={min_count}-{digest.hexdigest()[:12]}"
    return os.path.join(cache_dir(), CACHE_NAME, stem + ".npz")


@functools.lru_cache(maxsize=2)
def prepared(data_dir, min_count):
    """``{"vocabularies": (source, target), split: (source_ids, target_ids)}``.

    With TensorFlow: read through TFDS, tokenized by the shipped tokenizer
    (the ``Translator``'s TensorFlow string ops) and written to
    ``cache_path``. Without it (a JAX-only machine): read from that file,
    written before by any TensorFlow run of the recipe."""
    path = cache_path(data_dir, min_count)
    if not _tensorflow_available():
        return _read_cache(path, data_dir, min_count)
    from keras_seqmodels.seq2seq import EncoderDecoder, text
    from keras_seqmodels.seq2seq.translator import Translator

    english, german = sentences(data_dir, "train")
    source = text.build_vocabulary(english, min_count)
    target = text.build_vocabulary(german, min_count)
    core = EncoderDecoder(len(source) + 2, len(target) + 2, 8, 8, 8, start_id=2, end_id=3)
    tokenizer = Translator(core, source, target)  # the shipped model's tokenizer
    out = {"vocabularies": (source, target)}
    for split in SPLITS:
        english, german = sentences(data_dir, split)
        ids = tokenizer.encode_target(german).to_list()
        width = max(len(t) for t in ids) + 2
        out[split] = (
            np.asarray(tokenizer.encode_source(english)),
            text.encode_numpy(ids, width, start_id=2, end_id=3),
        )
    _write_cache(path, out, data_dir, min_count)
    return out


def _write_cache(path, out, data_dir, min_count):
    import warnings

    arrays = {f"{s}_{k}": out[s][i] for s in SPLITS for i, k in enumerate(("source", "target"))}
    meta = {
        "format": CACHE_FORMAT,
        "data_dir": data_dir and os.path.abspath(data_dir),
        "min_count": min_count,
        "source": out["vocabularies"][0],
        "target": out["vocabularies"][1],
    }
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        # Arrays first, vocabularies last (each by rename): a reader that
        # finds the .json finds a complete .npz.
        with open(path + ".tmp", "wb") as f:
            np.savez_compressed(f, **arrays)
        os.replace(path + ".tmp", path)
        with open(path[: -len(".npz")] + ".json.tmp", "w", encoding="utf-8") as f:
            json.dump(meta, f, ensure_ascii=False)
        os.replace(path[: -len(".npz")] + ".json.tmp", path[: -len(".npz")] + ".json")
    except OSError as err:  # a read-only cache costs the JAX-only path, not this run
        warnings.warn(
            f"multi30k-en-de: could not write the prepared data to {path}: {err}", stacklevel=3
        )


def _read_cache(path, data_dir, min_count):
    vocab_path = path[: -len(".npz")] + ".json"
    if not (os.path.isfile(vocab_path) and os.path.isfile(path)):
        data = "--smoke" if data_dir is None else f"--data-dir {os.path.dirname(data_dir)}"
        raise FileNotFoundError(
            f"multi30k-en-de: TensorFlow is not installed, so the tokenizer cannot "
            f"run and the prepared data (vocabularies and id arrays) are read from "
            f"the cache, but {vocab_path} does not exist. Write it on a machine with "
            f"TensorFlow (`seqmodels train multi30k-en-de --epochs 0 {data} "
            f"--min-count {min_count}`), then copy its folder "
            f"{os.path.dirname(path)} here and set KERAS_SEQMODELS_CACHE_DIR to "
            "the folder holding it."
        )
    with open(vocab_path, encoding="utf-8") as f:
        meta = json.load(f)
    with np.load(path) as arrays:
        out = {s: (arrays[f"{s}_source"], arrays[f"{s}_target"]) for s in SPLITS}
    out["vocabularies"] = (meta["source"], meta["target"])
    return out


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

    train = id_arrays(config, "train")[0]
    steps = len(train) // config["batch_size"] + 1
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

    english, german = data
    model.alpha = config["alpha"]
    hypotheses = model.translate(list(english), beam_size=config["beam"], batch_size=64)
    bleu = sacrebleu.corpus_bleu(hypotheses, [german])
    name = f"bleu_beam{config['beam']}" if config["beam"] > 1 else "bleu_greedy"
    return {"sentences": len(english), name: round(bleu.score, 2), "signature": str(bleu)}
