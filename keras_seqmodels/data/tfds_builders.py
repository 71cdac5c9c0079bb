"""TensorFlow Datasets builders that read the local copies of the zoo's data.

Nothing is downloaded: each builder reads the files of a folder given as the
TFDS *manual directory* (``../shared/data/<name>`` in a checkout) and writes
the usual TFDS records into ``data_dir``. ``load_local`` wraps the
build-then-load dance:

    >>> from keras_seqmodels.data import load_local   # doctest: +SKIP
    >>> ds = load_local("ud_english_ewt", "../shared/data/ud_english_ewt",
    ...                 split="dev", data_dir="runs/tfds")  # doctest: +SKIP
"""

import os

import tensorflow_datasets as tfds

from keras_seqmodels.data.conllu import read_conllu
from keras_seqmodels.data.lines import iter_lines

UPOS_TAGS = (
    "ADJ", "ADP", "ADV", "AUX", "CCONJ", "DET", "INTJ", "NOUN", "NUM",
    "PART", "PRON", "PROPN", "PUNCT", "SCONJ", "SYM", "VERB", "X",
)  # fmt: skip


class _ManualFiles:
    """The splits of a builder are its ``FILES`` found in the manual directory.

    TFDS announces a build as "Downloading and preparing dataset ..."; these
    builders download nothing, so their announcement says what they do."""

    def _log_download_bytes(self):
        print(
            f"Preparing {self.name} from the local files (nothing is downloaded); "
            f"records go to {self.data_dir} (once; later runs read them)...",
            flush=True,
        )

    def _log_download_done(self):
        print(f"{self.name} prepared in {self.data_dir}.", flush=True)

    def check_files(self, manual_dir):
        """Read each file of the manual directory as the build will, before
        TFDS starts: a ``ValueError`` naming the first one that is not in
        the expected form (not UTF-8, binary, malformed: the file and line)
        or that holds no example at all."""
        for name in self.FILES.values():
            path = os.path.join(manual_dir, name)
            if not os.path.isfile(path):
                continue
            useful = 0
            for _, example in self._generate_examples(path):  # the whole file: errors named
                useful += bool(self._useful(example))
            if not useful:
                raise ValueError(
                    f"{self.name}: {path} holds no {self.EXAMPLE}; expected {self.FORM}"
                )

    @staticmethod
    def _useful(example):
        """Whether an example counts towards a file holding data."""
        return True

    def _split_generators(self, dl_manager):
        return {
            split: self._generate_examples(os.path.join(dl_manager.manual_dir, name))
            for split, name in self.FILES.items()
            if os.path.isfile(os.path.join(dl_manager.manual_dir, name))
        }


class UdEnglishEwt(_ManualFiles, tfds.core.GeneratorBasedBuilder):
    """UD English EWT (CoNLL-U), one example per sentence of syntactic words."""

    VERSION = tfds.core.Version("2.16.0")
    MANUAL_DOWNLOAD_INSTRUCTIONS = (
        "Put en_ewt-ud-{train,dev,test}.conllu (UD English EWT r2.16) in the "
        "manual directory, e.g. ../shared/data/ud_english_ewt."
    )
    EXAMPLE = "sentence"
    FORM = "a CoNLL-U file (UTF-8, 10 tab-separated columns per word line)"
    FILES = {
        "train": "en_ewt-ud-train.conllu",
        "dev": "en_ewt-ud-dev.conllu",
        "test": "en_ewt-ud-test.conllu",
    }

    def _info(self):
        return self.dataset_info_from_configs(
            features=tfds.features.FeaturesDict(
                {
                    "words": tfds.features.Sequence(tfds.features.Text()),
                    "upos": tfds.features.Sequence(tfds.features.ClassLabel(names=UPOS_TAGS)),
                }
            ),
            supervised_keys=("words", "upos"),
            homepage="https://universaldependencies.org/treebanks/en_ewt/",
            license="CC BY-SA 4.0",
        )

    def _generate_examples(self, path):
        for i, (words, tags) in enumerate(read_conllu(path)):
            yield i, {"words": words, "upos": tags}


class PtbText(_ManualFiles, tfds.core.GeneratorBasedBuilder):
    """Mikolov's Penn Treebank LM text, one example per line (sentence).

    The lines keep the order of the files (no shuffling at generation): a
    language model reads each split as one continuous stream.
    """

    VERSION = tfds.core.Version("1.1.0")
    RELEASE_NOTES = {"1.1.0": "Keep the lines in file order (shuffling disabled)."}
    MANUAL_DOWNLOAD_INSTRUCTIONS = (
        "Put ptb.{train,valid,test}.txt (Mikolov's preprocessing) in the "
        "manual directory, e.g. ../shared/data/ptb."
    )
    EXAMPLE = "non-blank line"
    FORM = "UTF-8 text, one sentence per line (Mikolov's PTB files)"
    FILES = {
        "train": "ptb.train.txt",
        "valid": "ptb.valid.txt",
        "test": "ptb.test.txt",
    }

    def _info(self):
        return self.dataset_info_from_configs(
            features=tfds.features.FeaturesDict({"text": tfds.features.Text()}),
            homepage="https://www.fit.vutbr.cz/~imikolov/rnnlm/",
            disable_shuffling=True,
        )

    @staticmethod
    def _useful(example):
        return bool(example["text"])

    def _generate_examples(self, path):
        for i, line in enumerate(iter_lines(path, "ptb_text")):  # "\n" ends a line, nothing else
            if "\0" in line:
                raise ValueError(
                    f"ptb_text: {path}, line {i + 1}: a NUL byte; this is binary data, not "
                    f"{self.FORM}"
                )
            yield i, {"text": line.strip()}


BUILDERS = {"ud_english_ewt": UdEnglishEwt, "ptb_text": PtbText}


def load_local(name, manual_dir, split, data_dir):
    """Build (once) and load a split of one of the local builders.

    Args:
        name: ``"ud_english_ewt"`` or ``"ptb_text"``.
        manual_dir: folder holding the original files.
        split: a split name (``"train"``, ``"dev"``/``"valid"``, ``"test"``).
        data_dir: where TFDS writes and reads its records.

    Returns:
        A ``tf.data.Dataset`` of feature dicts.

    Raises:
        FileNotFoundError: the manual directory does not exist.
        KeyError: unknown builder name.
        ValueError: a file of the manual directory is empty, binary or
            malformed (the message names it, and the line where there is one).
    """
    if name not in BUILDERS:
        raise KeyError(f"load_local: unknown builder {name!r}. Known: {sorted(BUILDERS)}")
    if not os.path.isdir(manual_dir):
        raise FileNotFoundError(f"load_local: no such data directory: {manual_dir}")
    builder = BUILDERS[name](data_dir=data_dir)
    if not builder.is_prepared():
        builder.check_files(manual_dir)  # bad files named before TFDS starts
    builder.download_and_prepare(
        download_config=tfds.download.DownloadConfig(manual_dir=manual_dir)
    )
    return builder.as_dataset(split=split, shuffle_files=False)
