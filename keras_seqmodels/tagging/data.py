"""Tagged sentences to the id arrays a tagger trains on.

The vocabularies and tag set of ``(words, tags)`` sentences, their ids from a
model's own ``SentenceVectorizer`` as flat arrays (every token once, with
sentence offsets), and padded batches of chosen sentences from those arrays.
``train_tagger`` and the zoo's UPOS tagger's recipe both use them.
"""

import collections

import numpy as np


def token(word):
    """``word`` as the model's whitespace split sees it: a treebank word that
    holds a space ("10 000") is one token with the space taken out."""
    return "".join(word.split())


def by_count(counts):
    """The keys of a ``Counter``, most frequent first (ties alphabetically)."""
    return sorted(counts, key=lambda k: (-counts[k], k))


def vocabularies(sentences, min_count=1, max_words=None, lowercase=True):
    """The word and character vocabularies of ``(words, tags)`` sentences.

    Args:
        sentences: a list of ``(words, tags)`` pairs.
        min_count: occurrences a word needs to be kept.
        max_words: most words kept (None: no cap).
        lowercase: count words in lower case.

    Returns:
        ``(words, chars, counts)``: the kept words and all characters, most
        frequent first (ties alphabetically), and the ``Counter`` of words.

    Example:

    >>> vocabularies([(["The", "the", "a"], ["DET"] * 3)])[:2]
    (['the', 'a'], ['e', 'h', 'T', 'a', 't'])
    """
    words = collections.Counter(
        token(w).lower() if lowercase else token(w) for ws, _ in sentences for w in ws
    )
    chars = collections.Counter(c for ws, _ in sentences for w in ws for c in token(w))
    kept = [w for w in by_count(words) if words[w] >= min_count][:max_words]
    return kept, by_count(chars), words


def to_arrays(sentences, vectorizer, tags, chunk=500):
    """Sentences vectorised by the model's own layer, flattened.

    Args:
        sentences: a list of ``(words, tags)`` pairs.
        vectorizer: the model's ``SentenceVectorizer`` (TensorFlow backend).
        tags: the tag set (id i is ``tags[i]``).
        chunk: sentences per vectorizer call.

    Returns:
        A dict of ``words`` int32 ``(tokens,)``, ``chars`` int32 ``(tokens,
        vectorizer.max_chars)``, ``tags`` int32 ``(tokens,)`` and ``offsets``
        int64 ``(sentences + 1,)``: sentence i is tokens ``offsets[i]`` to
        ``offsets[i + 1]``.
    """
    tag_index = {t: i for i, t in enumerate(tags)}
    lengths = np.array([len(ws) for ws, _ in sentences], np.int64)
    words, chars = [], []
    for i in range(0, len(sentences), chunk):
        part = sentences[i : i + chunk]
        text = np.array([" ".join(token(w) for w in ws) for ws, _ in part], dtype=object)
        w, c = (np.asarray(a) for a in vectorizer(text))
        real = np.arange(w.shape[1]) < lengths[i : i + chunk, None]
        words.append(w[real])
        # Each call pads the characters to its own longest word: widen every
        # chunk to the vectorizer's max_chars (0, the padding id) to join them.
        chars.append(np.pad(c[real], ((0, 0), (0, vectorizer.max_chars - c.shape[2]))))
    return {
        "words": np.concatenate(words).astype(np.int32),
        "chars": np.concatenate(chars).astype(np.int32),
        "tags": np.array([tag_index[t] for _, ts in sentences for t in ts], np.int32),
        "offsets": np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64),
    }


def pad_rows(data, rows, width, max_chars=None):
    """One padded batch of sentences ``rows`` of ``to_arrays``' output.

    Args:
        data: ``to_arrays``' dict (``words`` may be replaced, e.g. by word
            dropout).
        rows: sentence indices, one per batch row (repeats allowed).
        width: padded sentence length, at least the longest row's.
        max_chars: characters kept per word (default all of ``data``'s).

    Returns:
        ``(words, chars, tags)``, int32 ``(len(rows), width)``, ``(len(rows),
        width, max_chars)`` and ``(len(rows), width)``, 0 at padding.
    """
    offsets = data["offsets"]
    lengths = offsets[1:] - offsets[:-1]
    real = np.arange(width) < lengths[rows, None]
    index = (offsets[rows, None] + np.arange(width))[real]
    words = np.zeros((len(rows), width), np.int32)
    tags = np.zeros((len(rows), width), np.int32)
    chars = np.zeros((len(rows), width, max_chars or data["chars"].shape[1]), np.int32)
    words[real], tags[real] = data["words"][index], data["tags"][index]
    chars[real] = data["chars"][index, : chars.shape[2]]
    return words, chars, tags
