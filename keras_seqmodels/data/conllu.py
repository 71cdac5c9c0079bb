"""A CoNLL-U reader (Universal Dependencies)."""

import os


def read_conllu(path):
    """Read a CoNLL-U file into ``(words, upos_tags)`` sentence lists.

    Multiword-token lines (ids like ``3-4``) and empty nodes (``3.1``) are
    skipped, so each sentence is its sequence of syntactic words, the unit UD
    scores UPOS accuracy on.

    Args:
        path: a ``.conllu`` file.

    Returns:
        A list of ``(words, tags)`` pairs of equal-length lists of strings.

    Raises:
        FileNotFoundError: with the path, if it does not exist.
        ValueError: naming the file and line of a malformed row.

    Example:

    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "s.conllu")
    >>> rows = ["1\\tDogs\\tdog\\tNOUN\\t_\\t_\\t2\\tnsubj\\t_\\t_",
    ...         "2\\tbark\\tbark\\tVERB\\t_\\t_\\t0\\troot\\t_\\t_"]
    >>> _ = open(path, "w").write("\\n".join(rows) + "\\n\\n")
    >>> read_conllu(path)
    [(['Dogs', 'bark'], ['NOUN', 'VERB'])]
    """
    if not os.path.isfile(path):
        raise FileNotFoundError(f"read_conllu: no such file: {path}")
    sentences, words, tags = [], [], []
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line:
                if words:
                    sentences.append((words, tags))
                    words, tags = [], []
                continue
            if line.startswith("#"):
                continue
            cols = line.split("\t")
            if len(cols) != 10:
                raise ValueError(
                    f"read_conllu: {path}:{lineno}: expected 10 tab-separated "
                    f"columns, found {len(cols)}"
                )
            if "-" in cols[0] or "." in cols[0]:
                continue
            words.append(cols[1])
            tags.append(cols[3])
    if words:
        sentences.append((words, tags))
    return sentences
