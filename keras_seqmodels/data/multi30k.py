"""A TensorFlow Datasets builder over the local Multi30k (task 1) files.

Nothing is downloaded: the builder reads the gzipped raw files of
``multi30k/raw`` given as the TFDS manual directory and writes the usual
TFDS records into ``data_dir``; after that, ``tfds.load`` works as for any
catalogued data set:

    >>> from keras_seqmodels.data.multi30k import load   # doctest: +SKIP
    >>> ds = load("../shared/data/multi30k/raw", "val", "runs/tfds")  # doctest: +SKIP

License of the data (upstream README): non-commercial research and
educational use; see the data folder's SOURCE.md.
"""

import gzip
import os

import tensorflow_datasets as tfds

from keras_seqmodels.data.lines import read_lines

SPLITS = {"train": "train", "val": "val", "test2016": "test_2016_flickr"}


class Multi30kEnDe(tfds.core.GeneratorBasedBuilder):
    """Multi30k task 1, English-German, raw (cased, untokenized) text."""

    VERSION = tfds.core.Version("1.0.0")
    MANUAL_DOWNLOAD_INSTRUCTIONS = (
        "Put {train,val,test_2016_flickr}.{en,de}.gz (multi30k/dataset, "
        "data/task1/raw) in the manual directory, e.g. ../shared/data/multi30k/raw."
    )

    def _info(self):
        return self.dataset_info_from_configs(
            features=tfds.features.FeaturesDict(
                {"en": tfds.features.Text(), "de": tfds.features.Text()}
            ),
            supervised_keys=("en", "de"),
            homepage="https://github.com/multi30k/dataset",
            license="non-commercial research and educational use",
        )

    def _split_generators(self, dl_manager):
        return {
            split: self._generate_examples(dl_manager.manual_dir, stem)
            for split, stem in SPLITS.items()
        }

    def _generate_examples(self, directory, stem):
        def read(lang):
            path = os.path.join(directory, f"{stem}.{lang}.gz")
            return read_lines(path, "Multi30kEnDe", opener=gzip.open)

        en, de = read("en"), read("de")
        if len(en) != len(de):
            raise ValueError(
                f"Multi30kEnDe: {stem}.en.gz has {len(en)} lines but "
                f"{stem}.de.gz has {len(de)}; the files must be line-aligned."
            )
        for i, (s, t) in enumerate(zip(en, de)):
            yield i, {"en": s, "de": t}


def load(manual_dir, split, data_dir):
    """Build the records once (in ``data_dir``) and return ``tfds.load``'s split."""
    config = tfds.download.DownloadConfig(manual_dir=os.path.abspath(manual_dir))
    return tfds.load(
        Multi30kEnDe.name,
        split=split,
        data_dir=data_dir,
        download_and_prepare_kwargs={"download_config": config},
        shuffle_files=False,
    )


def read_split(manual_dir, split, data_dir):
    """``(english, german)`` lists of Python strings for one split."""
    ds = load(manual_dir, split, data_dir)
    en, de = [], []
    for ex in ds.as_numpy_iterator():
        en.append(ex["en"].decode("utf-8"))
        de.append(ex["de"].decode("utf-8"))
    return en, de
