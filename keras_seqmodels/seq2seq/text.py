"""Word tokenization with a character fallback, in TensorFlow string ops.

This is the tokenizer that ships inside ``Translator`` (and so inside the
exported SavedModel): it uses stock TensorFlow string and ragged ops only, so
a plain TensorFlow build runs it. It is TensorFlow-only by nature (string
tensors); the models it feeds are backend-agnostic.

Scheme: punctuation ``. , ! ? ; : ( )`` is split off, the text is split on
whitespace, and each word in the vocabulary is one token; every other word
is spelled out in characters, continuation characters marked ``##``
("Antriebsradsystem" -> "A ##n ##t ##r ..."). There is no lowercasing, so
the output keeps its case, and no word is unknown unless one of its
characters never occurred in training. Detokenization joins ``##`` pieces
and removes the spaces before closing punctuation.
"""

import re

import numpy as np

from keras_seqmodels.data.vocabulary import build_vocabulary as _count_vocabulary

PUNCTUATION = r"([.,!?;:()])"
CONTINUATION = "##"
PAD, UNK, START, END = "", "[UNK]", "<s>", "</s>"
SPECIAL_TOKENS = (START, END)


def _tf():
    import tensorflow as tf

    return tf


def split_words(strings):
    """``(batch,)`` strings to ragged ``(batch, None)`` words."""
    tf = _tf()
    strings = tf.strings.regex_replace(strings, PUNCTUATION, r" \1 ")
    return tf.strings.split(strings)


def to_pieces(words, is_known):
    """Spell out the words that ``is_known`` rejects in ``##``-marked chars.

    Args:
        words: ragged ``(batch, None)`` string tensor.
        is_known: function from a flat string tensor ``(n,)`` to bool ``(n,)``.

    Returns:
        Ragged ``(batch, None)`` string tensor of pieces.
    """
    tf = _tf()
    flat = words.flat_values
    known = is_known(flat)
    chars = tf.strings.unicode_split(flat, "UTF-8")
    position = tf.ragged.range(chars.row_lengths()).flat_values
    marked = tf.where(
        position > 0,
        tf.strings.join([CONTINUATION, chars.flat_values]),
        chars.flat_values,
    )
    spelled = tf.repeat(tf.logical_not(known), chars.row_lengths())
    char_part = tf.RaggedTensor.from_row_lengths(
        tf.boolean_mask(marked, spelled),
        tf.where(known, tf.zeros_like(chars.row_lengths()), chars.row_lengths()),
    )
    word_part = tf.RaggedTensor.from_row_lengths(
        tf.boolean_mask(flat, known), tf.cast(known, tf.int64)
    )
    pieces = tf.concat([word_part, char_part], axis=1)
    return tf.RaggedTensor.from_row_splits(pieces, words.row_splits).merge_dims(1, 2)


def detokenize(pieces):
    """Ragged ``(batch, None)`` pieces to ``(batch,)`` detokenized strings."""
    tf = _tf()
    text = tf.strings.reduce_join(pieces, axis=-1, separator=" ")
    text = tf.strings.regex_replace(text, " " + CONTINUATION, "")
    text = tf.strings.regex_replace(text, "^" + CONTINUATION, "")
    text = tf.strings.regex_replace(text, r" ([.,!?;:)])", r"\1")
    text = tf.strings.regex_replace(text, r"\( ", "(")
    return tf.strings.strip(text)


# Vocabulary building (plain Python, run once by a recipe) --------------------


def python_split_words(line):
    """The same split as ``split_words``, for one Python string."""
    return re.sub(PUNCTUATION, r" \1 ", line).split()


def build_vocabulary(lines, min_count=2, max_words=None):
    """Words seen ``min_count`` times or more, plus every character seen.

    Returns the vocabulary for ``keras.layers.StringLookup`` (without the
    padding and unknown tokens, which the lookup adds as ids 0 and 1): the
    start and end tokens, the words by decreasing frequency, then the single
    characters and their ``##`` continuations.
    """
    words = [word for line in lines for word in python_split_words(line)]
    vocab = _count_vocabulary(words, min_count=min_count, order="count_first_seen")
    if max_words is not None:
        vocab = vocab[:max_words]
    seen = set(vocab)
    char_tokens = sorted({ch for word in words for ch in word})
    pieces = [c for c in char_tokens if c not in seen]
    pieces += [CONTINUATION + c for c in char_tokens]
    return list(SPECIAL_TOKENS) + vocab + pieces


def encode_numpy(lookup_ids, max_length, end_id=None, start_id=None):
    """Pad a list of id lists into an int32 array (for training data).

    Optionally prepends ``start_id`` and appends ``end_id``; truncates to
    ``max_length``.
    """
    out = np.zeros((len(lookup_ids), max_length), np.int32)
    for i, ids in enumerate(lookup_ids):
        ids = list(ids)
        if start_id is not None:
            ids = [start_id] + ids
        if end_id is not None:
            ids = ids + [end_id]
        ids = ids[:max_length]
        out[i, : len(ids)] = ids
    return out
