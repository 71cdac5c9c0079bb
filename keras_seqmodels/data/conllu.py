"""A CoNLL-U reader (Universal Dependencies)."""

import os

# The ten columns of a CoNLL-U word line, and the tag columns one can read.
COLUMNS = "ID FORM LEMMA UPOS XPOS FEATS HEAD DEPREL DEPS MISC"
TAG_COLUMNS = {"upos": 3, "xpos": 4}


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
        ValueError: naming the file and line of a malformed row (or a
            file that is not UTF-8).

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
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().split("\n")
    except UnicodeDecodeError as err:
        raise ValueError(
            f"{caller}: {path} is not UTF-8 text ({err.reason} at byte {err.start}); "
            "CoNLL-U files are UTF-8"
        ) from None
    sentences, words, tags = [], [], []
    for lineno, line in enumerate(lines, 1):
        line = line.rstrip("\r")
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
        words.append(cols[1])
        tags.append(cols[index])
    if words:
        sentences.append((words, tags))
    return sentences
