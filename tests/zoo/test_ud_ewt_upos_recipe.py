"""The ud-ewt-upos recipe's id batches (the GPU/JAX path): shapes, coverage, scoring."""

import numpy as np

from keras_seqmodels.cli.recipe_commands import load_recipe

recipe = load_recipe("ud-ewt-upos")
LENGTHS = [3, 20, 1, 17, 40, 16, 70]


def fake_data():
    rng = np.random.default_rng(0)
    n = sum(LENGTHS)
    return {
        "dev_words": rng.integers(1, 50, n).astype(np.int32),
        "dev_chars": rng.integers(1, 9, (n, 20)).astype(np.uint8),
        "dev_tags": rng.integers(0, 17, n).astype(np.uint8),
        "dev_offsets": np.concatenate([[0], np.cumsum(LENGTHS)]),
    }


def test_batches_have_fixed_shapes_and_hold_every_sentence_once():
    data = fake_data()
    batches = recipe.pad_batches(data, "dev", 2)
    seen = []
    for (w, c, t), y, rows in batches:
        # Rows: the batch size, fewer past 64 words (here 2 * 64 // 160 -> 1).
        assert w.shape[1] in recipe.WIDTHS and w.shape[0] == (2 if w.shape[1] <= 64 else 1)
        assert c.shape == w.shape + (20,) and t.shape == w.shape and y is t
        for r, s in enumerate(rows):
            a, b = data["dev_offsets"][s], data["dev_offsets"][s + 1]
            n = b - a
            assert n <= w.shape[1]
            np.testing.assert_array_equal(w[r, :n], data["dev_words"][a:b])
            np.testing.assert_array_equal(c[r, :n], data["dev_chars"][a:b])
            np.testing.assert_array_equal(t[r, :n], data["dev_tags"][a:b])
            assert not w[r, n:].any() and not c[r, n:].any()
        seen += list(rows)
    assert sorted(seen) == list(range(len(LENGTHS)))
    # Widths are the smallest that fit: 1, 3, 16 -> 16; 17, 20 -> 32; 40 -> 64; 70 -> 160.
    assert sorted(b[0][0].shape[1] for b in batches) == [16, 16, 32, 64, 160]


def test_word_dropout_turns_known_words_unknown_and_keeps_characters():
    data = fake_data()

    def by_sentence(batches):
        return {int(s): (w[r], c[r]) for (w, c, _), _, rows in batches for r, s in enumerate(rows)}

    keep = by_sentence(recipe.pad_batches(data, "dev", 2, np.random.default_rng(1)))
    drop = by_sentence(
        recipe.pad_batches(data, "dev", 2, np.random.default_rng(1), drop=np.ones(50, "float32"))
    )
    assert sorted(keep) == sorted(drop) == list(range(len(LENGTHS)))
    for s, (w0, c0) in keep.items():
        w1, c1 = drop[s]
        np.testing.assert_array_equal(w1, np.where(w0 > 0, 1, 0))
        np.testing.assert_array_equal(c1, c0)


def test_score_ids_counts_each_sentence_once_and_unknown_words_apart():
    data = fake_data()
    batches = recipe.pad_batches(data, "dev", 4)

    class Oracle:  # tags every word right except the unknown ones (id 1)
        def predict_on_batch(self, inputs):
            w = inputs[0]
            tags = next(t for (bw, _, t), _, _ in batches if bw is w)
            return np.where(w == 1, 99, tags)

    metrics = recipe.score_ids(Oracle(), batches)
    oov = int((data["dev_words"] == 1).sum())
    assert metrics["tokens"] == sum(LENGTHS) and metrics["oov_tokens"] == oov
    assert metrics["upos_accuracy"] == (sum(LENGTHS) - oov) / sum(LENGTHS)
    assert metrics["oov_upos_accuracy"] == 0.0
