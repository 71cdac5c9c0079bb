"""The bAbI reader and the random-noise augmentation of MemN2N training."""

import os

import numpy as np

from keras_seqmodels.data import babi

FIXTURES = os.path.join(os.path.dirname(os.path.dirname(__file__)), "fixtures", "babi")


def test_read_babi_stories_exclude_questions():
    path = os.path.join(FIXTURES, "qa1_single-supporting-fact_test.txt")
    examples = babi.read_babi(path)
    assert len(examples) == 10
    story, question, answer = examples[0]
    # The file starts: "1 John travelled to the hallway." "2 Mary journeyed to
    # the bathroom." "3 Where is John?  hallway  1".
    assert story == [
        ["john", "travelled", "to", "the", "hallway"],
        ["mary", "journeyed", "to", "the", "bathroom"],
    ]
    assert question == ["where", "is", "john"]
    assert answer == "hallway"
    # The second question's story has four statements, no questions.
    assert len(examples[1][0]) == 4


def test_list_answers_stay_one_token():
    examples = babi.read_babi(os.path.join(FIXTURES, "qa19_path-finding_test.txt"))
    assert all("," in a for _, _, a in examples)


def test_vectorize_puts_the_most_recent_statement_first():
    examples = [([["a", "b"], ["c"]], ["q"], "c")]
    vocab = babi.build_vocabulary(examples)
    stories, queries, answers = babi.vectorize(examples, vocab, 3, 2, 2)
    index = {w: i for i, w in enumerate(vocab)}
    np.testing.assert_array_equal(stories[0], [[index["c"], 0], [index["a"], index["b"]], [0, 0]])
    assert queries[0].tolist() == [index["q"], 0]
    assert answers[0] == index["c"]


def test_insert_empty_memories_keeps_order_and_marks_empties():
    rng = np.random.default_rng(0)
    stories = np.zeros((200, 8, 2), "int32")
    stories[:, :5, 0] = np.arange(10, 15)  # five statements, newest first
    noisy = babi.insert_empty_memories(stories, 0.3, rng)
    first = noisy[:, :, 0]
    inserted = (first == babi.NIL).sum()
    assert inserted > 0
    for row in first:
        kept = row[(row != babi.NIL) & (row != 0)]
        # Statements keep their order; only the oldest may be pushed out.
        np.testing.assert_array_equal(kept, np.arange(10, 10 + len(kept)))
        assert len(kept) + (row == babi.NIL).sum() <= 8
    assert np.all(babi.insert_empty_memories(stories, 0.0, rng) == stories)


def test_insert_empty_memories_as_gaps_keeps_every_statement():
    rng = np.random.default_rng(1)
    stories = np.zeros((300, 8, 2), "int32")
    stories[:100, :5, 0] = np.arange(10, 15)  # five statements: room for three gaps
    stories[100:, :, 0] = np.arange(10, 18)  # a full memory: no gap fits
    noisy = babi.insert_empty_memories(stories, 0.5, rng, fill=babi.PAD, keep_statements=True)
    first = noisy[:, :, 0]
    assert not np.any(first == babi.NIL)
    np.testing.assert_array_equal(noisy[100:], stories[100:])
    moved = 0
    for row in first[:100]:
        # All five statements stay, in order; gaps are padding slots.
        np.testing.assert_array_equal(row[row != 0], np.arange(10, 15))
        moved += int(np.flatnonzero(row)[-1] > 4)
    assert moved > 50  # with rate 0.5 most stories get a gap
