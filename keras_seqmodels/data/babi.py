"""A reader of the bAbI question-answering tasks (Weston et al. 2015)."""

import glob
import os
import re

import numpy as np

from keras_seqmodels.data.lines import iter_lines
from keras_seqmodels.data.vocabulary import build_vocabulary as _count_vocabulary

PAD, NIL, UNK = 0, 1, 2
RESERVED = ["<pad>", "<nil>", "<unk>"]
_TOKEN = re.compile(r"[a-z0-9]+")


def tokenize(text):
    """Lower-cased word tokens of a bAbI line (punctuation dropped)."""
    return _TOKEN.findall(text.lower())


def read_babi(path):
    """Read one bAbI file into ``(story, question, answer)`` triples.

    The story of a question is the list of the statements (not the earlier
    questions) of its story that come before it, oldest first, each a list of
    tokens; the answer is one token (list answers of tasks 8 and 19, e.g.
    ``"n,s"``, stay one token, as in the MemN2N paper).

    Args:
        path: a ``qa*_{train,test}.txt`` file.

    Returns:
        A list of ``(story, question, answer)``.

    Raises:
        FileNotFoundError: with the path, if it does not exist.
        ValueError: naming the file and line of a malformed row.

    Example:

    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "qa1_test.txt")
    >>> _ = open(path, "w").write(
    ...     "1 Mary went to the kitchen.\\n2 Where is Mary?\\tkitchen\\t1\\n")
    >>> read_babi(path)
    [([['mary', 'went', 'to', 'the', 'kitchen']], ['where', 'is', 'mary'], 'kitchen')]
    """
    if not os.path.isfile(path):
        raise FileNotFoundError(f"read_babi: no such file: {path}")
    examples, story = [], []
    for lineno, line in enumerate(iter_lines(path, "read_babi"), 1):
        line = line.strip()
        if not line:
            continue
        number, _, text = line.partition(" ")
        if not number.isdigit():
            raise ValueError(f"read_babi: {path}:{lineno}: no line number")
        if int(number) == 1:
            story = []
        if "\t" in text:
            parts = text.split("\t")
            if len(parts) < 2:
                raise ValueError(f"read_babi: {path}:{lineno}: no answer")
            answer = parts[1].strip().lower()
            examples.append(([list(s) for s in story], tokenize(parts[0]), answer))
        else:
            story.append(tokenize(text))
    return examples


def task_files(data_dir, split):
    """The 20 ``qa<k>_*_<split>.txt`` files of ``data_dir``, ordered by task."""
    pattern = os.path.join(data_dir, f"qa*_*_{split}.txt")
    files = glob.glob(pattern)
    if not files:
        raise FileNotFoundError(f"read_babi: no bAbI files match {pattern}")
    return sorted(files, key=lambda p: int(re.match(r"qa(\d+)_", os.path.basename(p))[1]))


def build_vocabulary(examples):
    """Sorted word list (after the reserved ``<pad>``, ``<nil>``, ``<unk>``)."""

    def tokens():
        for story, question, answer in examples:
            for sentence in story:
                yield from sentence
            yield from question
            yield answer

    return _count_vocabulary(tokens(), reserved=RESERVED, order="alphabetical")


def vectorize(examples, vocabulary, memory_size, sentence_length, query_length):
    """Integer arrays of a list of examples.

    Memory slot 0 holds the most recent statement, slot 1 the one before, and
    so on (the order of the temporal encoding); stories longer than
    ``memory_size`` keep their most recent statements. Token 0 is padding.

    Returns:
        ``(stories, queries, answers)`` of shapes ``(n, memory_size,
        sentence_length)``, ``(n, query_length)`` and ``(n,)``, int32.
    """
    index = {w: i for i, w in enumerate(vocabulary)}
    n = len(examples)
    stories = np.zeros((n, memory_size, sentence_length), "int32")
    queries = np.zeros((n, query_length), "int32")
    answers = np.zeros((n,), "int32")
    for row, (story, question, answer) in enumerate(examples):
        for slot, sentence in enumerate(reversed(story[-memory_size:])):
            ids = [index.get(w, UNK) for w in sentence[:sentence_length]]
            stories[row, slot, : len(ids)] = ids
        ids = [index.get(w, UNK) for w in question[:query_length]]
        queries[row, : len(ids)] = ids
        answers[row] = index.get(answer, UNK)
    return stories, queries, answers


def insert_empty_memories(stories, rate, rng, fill=NIL, keep_statements=False):
    """Random noise of MemN2N training: insert empty memories into stories.

    Each statement of each story is followed, with probability ``rate``, by
    an empty memory, which shifts the older statements' temporal indices.
    Vectorised over the whole batch.

    By default an empty memory is a slot holding only the ``<nil>`` token
    (a slot the network attends to) and stories keep their ``memory_size``
    most recent slots, so the oldest statements may be pushed out. With
    ``fill=PAD`` and ``keep_statements=True`` an empty memory is a padding
    slot, which ``MemoryNetwork`` masks: only the statements' temporal
    indices move (the time-index gaps of the authors' MemN2N code), and
    empty memories are inserted only while the memory has free slots, so
    no statement is lost.

    Args:
        stories: ``(n, memory_size, sentence_length)`` from ``vectorize``.
        rate: fraction of empty memories to add (0.1 in the paper).
        rng: a ``numpy.random.Generator``.
        fill: token id written at the start of an empty memory (``NIL``,
            default, or ``PAD``).
        keep_statements: never push a statement out of the memory.
    """
    n, size, length = stories.shape
    used = stories[:, :, 0] != PAD
    # Empty memories before each statement (slot order is newest first).
    extra = (rng.random((n, size)) < rate) & used
    if keep_statements:
        free = size - used.sum(axis=1, keepdims=True)
        extra &= np.cumsum(extra, axis=1) <= free
    new_slot = np.arange(size)[None, :] + np.cumsum(extra, axis=1)
    out = np.zeros_like(stories)
    keep = used & (new_slot < size)
    rows = np.broadcast_to(np.arange(n)[:, None], (n, size))
    out[rows[keep], new_slot[keep]] = stories[keep]
    # The inserted slots: every position up to the (possibly pushed-out)
    # oldest statement that received no statement.
    last = np.where(used, new_slot, -1).max(axis=1)
    filled = np.zeros((n, size), bool)
    filled[rows[keep], new_slot[keep]] = True
    empty = (~filled) & (np.arange(size)[None, :] <= last[:, None])
    out[empty, 0] = fill
    return out
