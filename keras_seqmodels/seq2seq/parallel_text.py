"""Your own parallel text to a trained ``Translator`` (strings in, strings out).

Two plain-text files, one sentence per line, line i of one the translation of
line i of the other, are enough: ``train_translator`` builds the vocabularies
(``seq2seq.text``: words seen ``min_count`` times, characters for the rest),
encodes both sides with the tokenizer that will ship inside the model, trains
an ``EncoderDecoder`` by teacher forcing on length-bucketed batches and
returns a ``Translator`` that decodes with beam search. Export it with
``keras_seqmodels.export.translation.export_translator(translator, directory)``.
TensorFlow backend (string tensors).
"""

import keras
import numpy as np

from keras_seqmodels.seq2seq import text
from keras_seqmodels.training.batch_order import vary_first_two
from keras_seqmodels.utils import bounds
from keras_seqmodels.utils import validation as checks

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


def _encode(translator, source, target, max_length):
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


def train_translator(
    source_path,
    target_path,
    validation=None,
    *,
    min_count=2,
    max_words=None,
    embedding_dim=64,
    encoder_units=64,
    decoder_units=128,
    epochs=10,
    batch_size=32,
    learning_rate=2e-3,
    beam_size=5,
    max_length=64,
    callbacks=None,
    seed=0,
    verbose="auto",
    **model_options,
):
    """Train a ``Translator`` on two aligned plain-text files.

    Args:
        source_path, target_path: UTF-8 files, one sentence per line, line i
            of ``target_path`` the translation of line i of ``source_path``
            (``read_parallel_text``).
        validation: optional ``(source_path, target_path)`` of held-out
            pairs; their loss is reported as ``val_loss`` each epoch.
        min_count: a word needs this many occurrences in the training text
            to be one token; rarer words are spelled in characters.
        max_words: most word tokens per side (None: no cap).
        embedding_dim, encoder_units, decoder_units: model widths.
        epochs, batch_size, learning_rate: training (Adam, gradient norm
            clipped to 1).
        beam_size: beam of the returned translator (1: greedy).
        max_length: training pairs whose target has more pieces are left
            out; sources are cut to ``4 * max_length`` pieces when
            translating.
        callbacks: Keras callbacks for ``fit`` (e.g. TensorBoard).
        seed: seed of the weights and the batch order.
        verbose: ``fit``'s verbosity.
        **model_options: more ``EncoderDecoder`` arguments (``dropout``,
            ``encoder_layers``, ``attention``, ``cell_type``, ...).

    Returns:
        A built ``Translator``; ``translator.model.history`` is the Keras
        ``History`` of the training. Save it with ``translator.save(path)``
        (a ``.keras`` file), export it with
        ``keras_seqmodels.export.translation.export_translator``.

    Example (TensorFlow backend):

    >>> import os, tempfile
    >>> from keras_seqmodels.seq2seq import train_translator
    >>> d = tempfile.mkdtemp()
    >>> _ = open(os.path.join(d, "src.txt"), "w").write("a dog\\na cat\\n" * 4)
    >>> _ = open(os.path.join(d, "tgt.txt"), "w").write("ein Hund\\neine Katze\\n" * 4)
    >>> t = train_translator(os.path.join(d, "src.txt"), os.path.join(d, "tgt.txt"),
    ...                      epochs=1, embedding_dim=8, encoder_units=8,
    ...                      decoder_units=8, verbose=0)
    >>> import numpy as np
    >>> t(np.array(["a dog"])).shape
    TensorShape([1])
    """
    from keras_seqmodels.seq2seq.encoder_decoder import EncoderDecoder
    from keras_seqmodels.seq2seq.masked_accuracy import MaskedAccuracy
    from keras_seqmodels.seq2seq.masked_sparse_crossentropy import MaskedSparseCrossentropy
    from keras_seqmodels.seq2seq.translator import Translator

    name = "train_translator"
    checks.check_positive_ints(
        name, min_count=min_count, embedding_dim=embedding_dim, encoder_units=encoder_units,
        decoder_units=decoder_units, epochs=epochs, batch_size=batch_size, beam_size=beam_size,
        max_length=max_length,
    )  # fmt: skip
    # Sources are cut to 4 * max_length pieces when translating.
    bounds.check_size(name, "max_length", max_length, bounds.LENGTH // 4, "sequence lengths")
    if max_words is not None:
        checks.check_positive_int(name, "max_words", max_words)
    checks.check_positive_float(name, "learning_rate", learning_rate)
    source, target = read_parallel_text(source_path, target_path)
    src_vocab = text.build_vocabulary(source, min_count=min_count, max_words=max_words)
    tgt_vocab = text.build_vocabulary(target, min_count=min_count, max_words=max_words)
    keras.utils.set_random_seed(seed)
    core = EncoderDecoder(
        len(src_vocab) + 2, len(tgt_vocab) + 2, embedding_dim, encoder_units, decoder_units,
        start_id=tgt_vocab.index(text.START) + 2, end_id=tgt_vocab.index(text.END) + 2,
        **model_options,
    )
    translator = Translator(
        core, src_vocab, tgt_vocab, beam_size=beam_size,
        max_source_length=4 * max_length, max_output_length=2 * max_length,
    )
    # The training arrays come from the translator's own tokenizer, so the
    # ids seen in training are the ids the saved model computes from text.
    train_src, train_tgt = _encode(translator, source, target, max_length)
    val = None
    if validation is not None:
        val_src, val_tgt = _encode(translator, *read_parallel_text(*validation), max_length)
        val = _Batches(val_src, val_tgt, batch_size)
    core.build(((None, None), (None, None)))
    core.compile(
        optimizer=keras.optimizers.Adam(learning_rate, clipnorm=1.0),
        loss=MaskedSparseCrossentropy(),
        metrics=[MaskedAccuracy()],
    )
    core.fit(
        _Batches(train_src, train_tgt, batch_size, seed=seed),
        validation_data=val,
        epochs=epochs,
        callbacks=callbacks,
        verbose=verbose,
    )
    translator.build()
    return translator


class _Batches(keras.utils.PyDataset):
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
