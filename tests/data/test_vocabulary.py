"""The one vocabulary count (``data.vocabulary.build_vocabulary``) and the
five word lists built on it, each checked against a copy of the code it
replaced (the ``_old_*`` functions below, kept verbatim as the reference)."""

import collections
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from keras_seqmodels.data import babi
from keras_seqmodels.data.vocabulary import build_vocabulary
from keras_seqmodels.language_model import text as lm_text
from keras_seqmodels.seq2seq import text as s2s_text
from keras_seqmodels.trees import network as tree_network
from keras_seqmodels.trees.balanced import balanced_tree
from keras_seqmodels.zoo.models.ptb_lstm import network as ptb_network
from keras_seqmodels.zoo.models.sst_treelstm import network as sst_network

# --- The replaced implementations, as they were -----------------------------


def _old_trees(trees, min_count=2):
    counts = collections.Counter(t for tree in trees for t in tree.tokens if t is not None)
    return [""] + sorted(w for w, c in counts.items() if c >= min_count)


def _old_seq2seq(lines, min_count=2, max_words=None):
    words = collections.Counter()
    chars = collections.Counter()
    for line in lines:
        for word in re.sub(s2s_text.PUNCTUATION, r" \1 ", line).split():
            words[word] += 1
            for ch in word:
                chars[ch] += 1
    vocab = [w for w, c in words.most_common() if c >= min_count]
    if max_words is not None:
        vocab = vocab[:max_words]
    seen = set(vocab)
    char_tokens = sorted(chars)
    pieces = [c for c in char_tokens if c not in seen]
    pieces += [s2s_text.CONTINUATION + c for c in char_tokens]
    return list(s2s_text.SPECIAL_TOKENS) + vocab + pieces


def _old_language_model(words, vocabulary_size=10_000, min_count=1):
    EOS, UNK = "<eos>", "<unk>"
    counts = collections.Counter(words)
    ranked = sorted(
        (w for w, c in counts.items() if c >= min_count and w not in (EOS, UNK)),
        key=lambda w: (-counts[w], w),
    )
    return [EOS, UNK] + ranked[: vocabulary_size - 2]


def _old_babi(examples):
    RESERVED = ["<pad>", "<nil>", "<unk>"]
    words = set()
    for story, question, answer in examples:
        for sentence in story:
            words.update(sentence)
        words.update(question)
        words.add(answer)
    return RESERVED + sorted(words - set(RESERVED))


def _old_ptb(train_tokens):
    counts = {}
    for w in train_tokens:
        counts[w] = counts.get(w, 0) + 1
    return sorted(counts, key=lambda w: (-counts[w], w))


# --- Inputs: few distinct words, so counts tie and min_count bites ----------

WORD = st.sampled_from(["a", "b", "c", "the", "The", "dog", "é", "<eos>", "<unk>", "<pad>"])
WORDS = st.lists(WORD, max_size=40)
MIN_COUNT = st.integers(0, 4)


@settings(max_examples=200, deadline=None)
@given(WORDS, MIN_COUNT, st.sampled_from(["count", "count_first_seen", "alphabetical"]))
def test_core_keeps_every_frequent_word_once_in_order(words, min_count, order):
    vocab = build_vocabulary(words, min_count=min_count, order=order)
    counts = collections.Counter(words)
    assert sorted(vocab) == sorted(w for w, c in counts.items() if c >= min_count)
    if order == "alphabetical":
        assert vocab == sorted(vocab)
    else:
        assert [counts[w] for w in vocab] == sorted((counts[w] for w in vocab), reverse=True)
        tie = (lambda w: w) if order == "count" else words.index
        for x, y in zip(vocab, vocab[1:]):
            if counts[x] == counts[y]:
                assert tie(x) < tie(y)


@settings(max_examples=200, deadline=None)
@given(WORDS, st.lists(st.sampled_from(["<pad>", "<unk>", "a"]), unique=True), st.data())
def test_core_reserved_first_once_and_max_size_counts_them(words, reserved, data):
    max_size = data.draw(st.none() | st.integers(len(reserved), len(reserved) + 6))
    vocab = build_vocabulary(words, reserved=reserved, max_size=max_size)
    assert vocab[: len(reserved)] == reserved
    assert len(vocab) == len(set(vocab))
    full = build_vocabulary(words, reserved=reserved)
    assert vocab == (full if max_size is None else full[:max_size])


@settings(max_examples=150, deadline=None)
@given(st.lists(st.lists(WORD | st.just(""), min_size=1, max_size=6), max_size=6), MIN_COUNT)
def test_tree_vocabulary_as_before(leaf_lists, min_count):
    trees = [balanced_tree(len(leaves), tokens=leaves) for leaves in leaf_lists]
    assert tree_network.build_vocabulary(trees, min_count) == _old_trees(trees, min_count)
    assert sst_network.build_vocabulary(trees, min_count) == _old_trees(trees, min_count)


LINE = st.lists(st.sampled_from(["a", "b", "dog", "Dog", ".", ",", "(x)", "é", "ab!"]), max_size=8)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(LINE.map(" ".join), max_size=8),
    MIN_COUNT,
    st.none() | st.integers(0, 5),
)
def test_seq2seq_vocabulary_as_before(lines, min_count, max_words):
    assert s2s_text.build_vocabulary(iter(lines), min_count, max_words) == _old_seq2seq(
        lines, min_count, max_words
    )


@settings(max_examples=150, deadline=None)
@given(WORDS, st.integers(3, 9), st.integers(1, 4))
def test_language_model_vocabulary_as_before(words, size, min_count):
    assert lm_text.build_vocabulary(iter(words), size, min_count) == _old_language_model(
        words, size, min_count
    )


EXAMPLE = st.tuples(st.lists(st.lists(WORD, max_size=4), max_size=3), st.lists(WORD), WORD)


@settings(max_examples=150, deadline=None)
@given(st.lists(EXAMPLE, max_size=5))
def test_babi_vocabulary_as_before(examples):
    assert babi.build_vocabulary(examples) == _old_babi(examples)


@settings(max_examples=150, deadline=None)
@given(WORDS)
def test_ptb_vocabulary_as_before(words):
    assert ptb_network.build_vocabulary(iter(words)) == _old_ptb(words)


def test_edge_cases():
    assert build_vocabulary([]) == []
    assert build_vocabulary([], reserved=("<pad>",), max_size=1) == ["<pad>"]
    assert build_vocabulary(iter("ba")) == ["a", "b"]  # a generator, read once
    # Ties: alphabetical for "count", first seen for "count_first_seen".
    assert build_vocabulary("c b b a a c".split()) == ["a", "b", "c"]
    assert build_vocabulary("c b b a a c".split(), order="count_first_seen") == ["c", "b", "a"]
    # min_count: 0 and 1 keep all; above every count keeps none.
    assert build_vocabulary("a a b".split(), min_count=0) == ["a", "b"]
    assert build_vocabulary("a a b".split(), min_count=2) == ["a"]
    assert build_vocabulary("a a b".split(), min_count=3, reserved=["<unk>"]) == ["<unk>"]
    # A reserved word in the text keeps its reserved place, once.
    assert build_vocabulary("<unk> a <unk>".split(), reserved=["<pad>", "<unk>"]) == [
        "<pad>",
        "<unk>",
        "a",
    ]
    assert tree_network.build_vocabulary([]) == [""]
    assert lm_text.build_vocabulary([]) == ["<eos>", "<unk>"]
    assert babi.build_vocabulary([]) == ["<pad>", "<nil>", "<unk>"]
    assert s2s_text.build_vocabulary([]) == ["<s>", "</s>"]
    assert ptb_network.build_vocabulary([]) == []


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"order": "frequency"}, "`order` must be one of"),
        ({"min_count": "2"}, "`min_count` must be a number"),
        ({"max_size": 1, "reserved": ("<pad>", "<unk>")}, "`max_size` must be None or an"),
        ({"max_size": 2.0}, "Received: max_size=2.0"),
    ],
)
def test_bad_arguments_are_named(kwargs, message):
    with pytest.raises(ValueError, match=message):
        build_vocabulary(["a"], **kwargs)


def test_language_model_checks_stay_its_own():
    with pytest.raises(ValueError, match="`vocabulary_size` must be an integer >= 3"):
        lm_text.build_vocabulary(["a"], vocabulary_size=2)
    with pytest.raises(ValueError, match="`min_count` must be an integer >= 1"):
        lm_text.build_vocabulary(["a"], min_count=0)
