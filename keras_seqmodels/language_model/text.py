"""Plain text to word ids: reading, the vocabulary, the id stream.

Pure Python and NumPy (no Keras), so any backend can train on the result.
"""

import os

import numpy as np

from keras_seqmodels.data.lines import iter_lines
from keras_seqmodels.data.vocabulary import build_vocabulary as _count_vocabulary

EOS = "<eos>"  # end of a line (sentence); also the context of an empty prompt
UNK = "<unk>"  # any word not in the vocabulary
EXPECTED = (
    "a UTF-8 plain-text file, one sentence (or line of text) per line, words separated by spaces"
)


def _paths(caller, argument, paths):
    if isinstance(paths, (str, os.PathLike)):
        return [os.fspath(paths)]
    try:
        paths = [os.fspath(p) for p in paths]
    except TypeError:
        raise TypeError(
            f"{caller}: `{argument}` must be a path or a list of paths, each {EXPECTED}. "
            f"Received: {paths!r}"
        ) from None
    if not paths:
        raise ValueError(f"{caller}: `{argument}` is an empty list; give at least one file")
    return paths


def read_words(paths, lowercase=True, caller="read_words", argument="paths"):
    """The words of one or more text files as one stream, each line ended by ``<eos>``.

    Each non-blank line is split on whitespace (lower-cased first when
    ``lowercase``) and followed by ``<eos>``; blank lines are skipped. Files
    are read in the order given, as one text.

    Args:
        paths: a path or a list of paths, UTF-8 plain text, one sentence
            (or line of text) per line.
        lowercase: lower-case the words.
        caller, argument: the function and argument named in errors.

    Returns:
        A list of strings (words and ``<eos>``).

    Raises:
        FileNotFoundError: a file does not exist (the message names it).
        ValueError: a file is not UTF-8 text, or the files hold no word.

    Example:

    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "text.txt")
    >>> _ = open(path, "w").write("The cat sat\\n\\nthe dog\\n")
    >>> read_words(path)
    ['the', 'cat', 'sat', '<eos>', 'the', 'dog', '<eos>']
    """
    words = []
    for path in _paths(caller, argument, paths):
        if not os.path.isfile(path):
            raise FileNotFoundError(
                f"{caller}: no such file: {path} (`{argument}` must be {EXPECTED})"
            )
        try:  # lines end at "\n" only (keras_seqmodels.data.lines)
            words.extend(line_words(iter_lines(path), lowercase))
        except ValueError as err:  # not UTF-8: the file, line and byte named
            raise ValueError(f"{caller}: {err}; `{argument}` must be {EXPECTED}") from None
    if not words:
        raise ValueError(
            f"{caller}: {' and '.join(_paths(caller, argument, paths))} holds no words "
            f"(empty or blank lines only); `{argument}` must be {EXPECTED}"
        )
    return words


def line_words(lines, lowercase=True):
    """The words of lines of text as one stream, each non-blank line ended by ``<eos>``.

    Each line is split on whitespace (lower-cased first when ``lowercase``);
    blank lines give nothing. ``read_words`` reads files with it.

    Args:
        lines: an iterable of strings (a list, an open text file).
        lowercase: lower-case the words.

    Returns:
        A list of strings (words and ``<eos>``).

    Example:

    >>> line_words(["The cat", "", "sat"], lowercase=False)
    ['The', 'cat', '<eos>', 'sat', '<eos>']
    """
    words = []
    for line in lines:
        split = (line.lower() if lowercase else line).split()
        if split:
            words.extend(split)
            words.append(EOS)
    return words


def build_vocabulary(words, vocabulary_size=10_000, min_count=1):
    """The word list of a language model: ``<eos>``, ``<unk>``, then the most frequent words.

    Words are ordered by decreasing count (ties alphabetically); a word
    needs ``min_count`` occurrences, and at most ``vocabulary_size`` entries
    are kept (the two special words included). The words left out are read
    as ``<unk>``.

    Args:
        words: the training words (``read_words``).
        vocabulary_size: most entries, at least 3.
        min_count: fewest occurrences of a kept word, at least 1.

    Returns:
        A list of strings; a word's index is its id.

    Example:

    >>> build_vocabulary("a b a c a b <eos>".split(), vocabulary_size=4)
    ['<eos>', '<unk>', 'a', 'b']
    """
    if not isinstance(vocabulary_size, int) or vocabulary_size < 3:
        raise ValueError(
            "build_vocabulary: `vocabulary_size` must be an integer >= 3 (<eos>, <unk> "
            f"and one word). Received: {vocabulary_size!r}"
        )
    if not isinstance(min_count, int) or min_count < 1:
        raise ValueError(
            f"build_vocabulary: `min_count` must be an integer >= 1. Received: {min_count!r}"
        )
    return _count_vocabulary(
        words, min_count=min_count, max_size=vocabulary_size, reserved=(EOS, UNK)
    )


def to_ids(words, vocabulary):
    """Word ids (int32 array); words not in ``vocabulary`` are ``<unk>``.

    A vocabulary without ``<unk>`` serves streams of its own words only.

    Args:
        words: a list of words.
        vocabulary: the word list (``build_vocabulary``).

    Returns:
        A NumPy int32 array ``(len(words),)``.

    Example:

    >>> to_ids(["a", "zebra", "<eos>"], ["<eos>", "<unk>", "a"]).tolist()
    [2, 1, 0]
    """
    index = {w: i for i, w in enumerate(vocabulary)}
    unk = index.get(UNK)
    ids = [index.get(w, unk) for w in words]
    if unk is None and None in ids:
        missing = next(w for w, i in zip(words, ids) if i is None)
        raise KeyError(f"to_ids: {missing!r} is not in the vocabulary, which has no {UNK!r}")
    return np.array(ids, dtype="int32")


def windows(ids, length):
    """Non-overlapping training windows of a stream: inputs and next-word targets.

    Window k reads ``ids[k*length : (k+1)*length]`` and
    predicts the same span shifted by one word; the words after the last
    full window are left out. A stream shorter than ``length + 1`` words gives
    one window of ``len(ids) - 1`` words.

    Args:
        ids: int array, the word stream.
        length: words per window.

    Returns:
        ``(inputs, targets)``, int32 arrays ``(windows, length)``.

    Example:

    >>> x, y = windows(np.arange(7), 3)
    >>> x.tolist(), y.tolist()
    ([[0, 1, 2], [3, 4, 5]], [[1, 2, 3], [4, 5, 6]])
    """
    ids = np.asarray(ids, "int32")
    if len(ids) < length + 1:
        return ids[None, :-1], ids[None, 1:]
    count = (len(ids) - 1) // length
    end = count * length
    return ids[:end].reshape(count, length), ids[1 : end + 1].reshape(count, length)
