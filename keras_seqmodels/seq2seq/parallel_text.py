"""Aligned parallel text for training a ``Translator``.

``read_parallel_text`` reads two plain-text files, one sentence per line, line
i of one the translation of line i of the other; ``encode_pairs`` encodes both
sides with the tokenizer that ships inside the model; ``Batches`` feeds
length-bucketed, padded batches to ``model.fit``. ``train_translator``
(``keras_seqmodels.seq2seq.translator``) uses them.
"""

import keras
import numpy as np

from keras_seqmodels.seq2seq import text
from keras_seqmodels.training.batch_order import vary_first_two

# Padded widths of the training batches: a handful of shapes, so the training
# step is traced a handful of times instead of once per batch.
_WIDTHS = (8, 16, 24, 32, 48, 64, 96, 128, 192, 256)


def read_parallel_text(source_path, target_path):
    """Read two aligned plain-text files (UTF-8, one sentence per line).

    Lines that are blank on either side are dropped (with their partner).

    Args:
        source_path, target_path: the two files.

    Returns:
        ``(source_lines, target_lines)``, two lists of equal length.

    Raises:
        FileNotFoundError: naming a missing file.
        ValueError: if the files have different numbers of lines, or no
            non-blank pair.

    Example:

    >>> import os, tempfile
    >>> d = tempfile.mkdtemp()
    >>> _ = open(os.path.join(d, "src.txt"), "w").write("a dog\\n\\na cat\\n")
    >>> _ = open(os.path.join(d, "tgt.txt"), "w").write("ein Hund\\nx\\neine Katze\\n")
    >>> read_parallel_text(os.path.join(d, "src.txt"), os.path.join(d, "tgt.txt"))
    (['a dog', 'a cat'], ['ein Hund', 'eine Katze'])
    """
    from keras_seqmodels.data.lines import read_lines

    sides = []
    for path in (source_path, target_path):
        # Lines end at "\n" only: a U+2028 or form feed inside a sentence
        # must not shift every later pair (keras_seqmodels.data.lines).
        sides.append(read_lines(path, "read_parallel_text"))
    source, target = sides
    if len(source) != len(target):
        raise ValueError(
            f"read_parallel_text: {source_path} has {len(source)} lines and "
            f"{target_path} has {len(target)}; line i of one must translate line i "
            "of the other."
        )
    pairs = [(s.strip(), t.strip()) for s, t in zip(source, target) if s.strip() and t.strip()]
    if not pairs:
        raise ValueError(
            f"read_parallel_text: no pair of non-blank lines in {source_path} and {target_path}"
        )
    return [s for s, _ in pairs], [t for _, t in pairs]


def encode_pairs(translator, source, target, max_length):
    """Source ids (end appended) and ``<s> y </s>`` target ids, overlong pairs left out."""
    src = translator.encode_source(source).numpy()
    tgt = translator.encode_target(target).to_list()
    keep = [i for i, t in enumerate(tgt) if len(t) + 2 <= max_length + 1]
    if not keep:
        longest = max((len(t) for t in tgt), default=0)
        raise ValueError(
            f"train_translator: every one of the {len(tgt)} target sentence(s) is longer "
            f"than max_length={max_length} pieces (the shortest has "
            f"{min((len(t) for t in tgt), default=0)}, the longest {longest}); raise "
            "`max_length` or give shorter sentences"
        )
    src = src[keep]
    tgt = [tgt[i] for i in keep]
    width = max(len(t) for t in tgt) + 2
    return src, text.encode_numpy(
        tgt, width, start_id=translator.model.start_id, end_id=translator.model.end_id
    )


def _batches(source, target, batch_size, rng=None):
    """Batches of similar length, padded to the next width in ``_WIDTHS``."""
    length = np.maximum((source > 0).sum(1), (target > 0).sum(1) - 1)
    jitter = rng.random(len(source)) if rng is not None else np.zeros(len(source))
    order = np.argsort(length + jitter, kind="stable")
    groups = [order[i : i + batch_size] for i in range(0, len(order), batch_size)]
    if rng is not None:
        rng.shuffle(groups)
    out = []
    for rows in groups:
        need = int(length[rows].max())
        width = next((w for w in _WIDTHS if w >= need), need)
        src = np.zeros((len(rows), width), np.int32)
        tgt = np.zeros((len(rows), width + 1), np.int32)
        s, t = source[rows, :width], target[rows, : width + 1]
        src[:, : s.shape[1]] = s
        tgt[:, : t.shape[1]] = t
        # Decoder input: <s> y; label: y </s> (the arrays hold <s> y </s>).
        out.append(((src, tgt[:, :-1]), tgt[:, 1:]))
    return out


class Batches(keras.utils.PyDataset):
    """Length-bucketed batches; reshuffled each epoch when ``seed`` is given."""

    def __init__(self, source, target, batch_size, seed=None):
        super().__init__()
        self.source, self.target, self.batch_size = source, target, batch_size
        self.rng = None if seed is None else np.random.default_rng(seed)
        # Keras fixes the tf.data signature from the first two batches.
        self.items = vary_first_two(_batches(source, target, batch_size, self.rng))

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        return self.items[i]

    def on_epoch_end(self):
        if self.rng is not None:
            self.items = vary_first_two(
                _batches(self.source, self.target, self.batch_size, self.rng)
            )
