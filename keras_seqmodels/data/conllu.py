"""A CoNLL-U reader (Universal Dependencies)."""

import os

from keras_seqmodels.data.lines import iter_lines

# The ten columns of a CoNLL-U word line, and the tag columns one can read.
COLUMNS = "ID FORM LEMMA UPOS XPOS FEATS HEAD DEPREL DEPS MISC"
TAG_COLUMNS = {"upos": 3, "xpos": 4}
# The longest line read (bytes): a word line or a "# text = ..." comment of a
# real treebank is far shorter; a longer one is refused after reading this much.
MAX_LINE_BYTES = 1 << 20


def read_conllu(path, column="upos"):
    """Read a CoNLL-U file into ``(words, tags)`` sentence lists.

    Multiword-token lines (ids like ``3-4``) and empty nodes (``3.1``) are
    skipped, so each sentence is its sequence of syntactic words, the unit UD
    scores UPOS accuracy on.

    Args:
        path: a ``.conllu`` file.
        column: the tags to read, ``"upos"`` (universal part of speech,
            column 4) or ``"xpos"`` (the treebank's own tags, column 5).

    Returns:
        A list of ``(words, tags)`` pairs of equal-length lists of strings.

    Raises:
        FileNotFoundError: with the path, if it does not exist.
        ValueError: naming the file and line of a malformed row, a line
            that is not UTF-8 or one longer than ``MAX_LINE_BYTES`` (1 MiB).

    The file is read one line at a time (memory grows with the sentences
    returned, not with the file's longest line).

    Example:

    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "s.conllu")
    >>> rows = ["1\\tDogs\\tdog\\tNOUN\\t_\\t_\\t2\\tnsubj\\t_\\t_",
    ...         "2\\tbark\\tbark\\tVERB\\t_\\t_\\t0\\troot\\t_\\t_"]
    >>> _ = open(path, "w").write("\\n".join(rows) + "\\n\\n")
    >>> read_conllu(path)
    [(['Dogs', 'bark'], ['NOUN', 'VERB'])]
    """
    return _read(path, column, "read_conllu")


def _read(path, column, caller):
    """``read_conllu`` with its errors starting with ``caller``."""
    if column not in TAG_COLUMNS:
        raise ValueError(
            f"{caller}: `column` must be one of {sorted(TAG_COLUMNS)}. Received: column={column!r}"
        )
    index = TAG_COLUMNS[column]
    if not os.path.isfile(path):
        raise FileNotFoundError(f"{caller}: no such file: {path}")
    sentences, words, tags = [], [], []
    # One str object per distinct word and tag: a treebank repeats both, so
    # the sentences take a fraction of the file's size, not a multiple of it.
    strings = {}
    for lineno, line in enumerate(iter_lines(path, caller, max_line_bytes=MAX_LINE_BYTES), 1):
        if not line.strip():
            if words:
                sentences.append((words, tags))
                words, tags = [], []
            continue
        if line.startswith("#"):
            continue
        cols = line.split("\t")
        if len(cols) != 10:
            raise ValueError(
                f"{caller}: {path}:{lineno}: expected a CoNLL-U word line, 10 "
                f"tab-separated columns ({COLUMNS}), a '#' comment or a blank "
                f"line between sentences; found {len(cols)} column(s): {line!r:.80}"
            )
        if "-" in cols[0] or "." in cols[0]:
            continue
        if not cols[1].strip() or not cols[index].strip():
            raise ValueError(
                f"{caller}: {path}:{lineno}: empty FORM or {column.upper()} column; "
                f"a CoNLL-U word line has a word in column 2 and a tag (or '_') in "
                f"column {index + 1}: {line!r:.80}"
            )
        words.append(strings.setdefault(cols[1], cols[1]))
        tags.append(strings.setdefault(cols[index], cols[index]))
    if words:
        sentences.append((words, tags))
    return sentences
