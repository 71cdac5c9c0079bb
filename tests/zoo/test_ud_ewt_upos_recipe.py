"""The ud-ewt-upos id batches, scoring and ensemble (``zoo.models.ud_ewt_upos.network``)."""

import numpy as np
import pytest

from keras_seqmodels.zoo.models.ud_ewt_upos import network

LENGTHS = [3, 20, 1, 17, 40, 16, 70]


def fake_data():
    rng = np.random.default_rng(0)
    n = sum(LENGTHS)
    return {
        "words": rng.integers(1, 50, n).astype(np.int32),
        "chars": rng.integers(1, 9, (n, 20)).astype(np.int32),
        "tags": rng.integers(0, 17, n).astype(np.int32),
        "offsets": np.concatenate([[0], np.cumsum(LENGTHS)]),
    }


def test_batches_have_fixed_shapes_and_hold_every_sentence_once():
    data = fake_data()
    batches = network.pad_batches(data, 2)
    seen = []
    for (w, c, t), y, rows in batches:
        # Rows: the batch size, fewer past 64 words (here 2 * 64 // 160 -> 1).
        assert w.shape[1] in network.WIDTHS and w.shape[0] == (2 if w.shape[1] <= 64 else 1)
        assert c.shape == w.shape + (20,) and t.shape == w.shape and y is t
        for r, s in enumerate(rows):
            a, b = data["offsets"][s], data["offsets"][s + 1]
            n = b - a
            assert n <= w.shape[1]
            np.testing.assert_array_equal(w[r, :n], data["words"][a:b])
            np.testing.assert_array_equal(c[r, :n], data["chars"][a:b])
            np.testing.assert_array_equal(t[r, :n], data["tags"][a:b])
            assert not w[r, n:].any() and not c[r, n:].any()
        seen += list(rows)
    assert sorted(seen) == list(range(len(LENGTHS)))
    # Widths are the smallest that fit: 1, 3, 16 -> 16; 17, 20 -> 32; 40 -> 64; 70 -> 160.
    assert sorted(b[0][0].shape[1] for b in batches) == [16, 16, 32, 64, 160]


def test_word_dropout_turns_known_words_unknown_and_keeps_characters():
    data = fake_data()

    def by_sentence(batches):
        return {int(s): (w[r], c[r]) for (w, c, _), _, rows in batches for r, s in enumerate(rows)}

    keep = by_sentence(network.pad_batches(data, 2, np.random.default_rng(1)))
    drop = by_sentence(
        network.pad_batches(data, 2, np.random.default_rng(1), drop=np.ones(50, "float32"))
    )
    assert sorted(keep) == sorted(drop) == list(range(len(LENGTHS)))
    for s, (w0, c0) in keep.items():
        w1, c1 = drop[s]
        np.testing.assert_array_equal(w1, np.where(w0 > 0, 1, 0))
        np.testing.assert_array_equal(c1, c0)


def test_score_ids_counts_each_sentence_once_and_unknown_words_apart():
    data = fake_data()
    batches = network.pad_batches(data, 4)

    class Oracle:  # tags every word right except the unknown ones (id 1)
        def predict_on_batch(self, inputs):
            w = inputs[0]
            tags = next(t for (bw, _, t), _, _ in batches if bw is w)
            return np.where(w == 1, 99, tags)

    metrics = network.score_ids(Oracle(), batches)
    oov = int((data["words"] == 1).sum())
    assert metrics["tokens"] == sum(LENGTHS) and metrics["oov_tokens"] == oov
    assert metrics["upos_accuracy"] == (sum(LENGTHS) - oov) / sum(LENGTHS)
    assert metrics["oov_upos_accuracy"] == 0.0


TAGS = ["A", "B", "C", "D"]


def random_members(kinds, rng):
    """Small trained-shape cores (``build_models``' training models) with
    random emission and transition scores, CRF (True) or softmax (False)."""
    import keras

    small = {"word_dim": 6, "char_dim": 4, "char_units": 3, "units": 5}
    members = []
    for i, use_crf in enumerate(kinds):
        keras.utils.set_random_seed(i)
        train, _ = network.build_models(
            [f"w{j}" for j in range(8)], list("abcdef"), TAGS, use_crf=use_crf, **small
        )
        # Emission and transition scores of similar size, so that neither
        # alone decides the sequence.
        dense = train.get_layer("potentials")
        dense.set_weights(
            [rng.normal(0, 2, w.shape).astype("float32") for w in dense.get_weights()]
        )
        if use_crf:
            crf = train.get_layer("crf")
            crf.set_weights(
                [rng.normal(0, 1, w.shape).astype("float32") for w in crf.get_weights()]
            )
        members.append((train, {"use_crf": use_crf}))
    return members


def best_mean_sequences(members, words, chars, lengths):
    """Brute force: per row, the tag sequence with the best mean of the
    members' sequence scores (CRF: emissions + transitions; softmax: the
    sum of log-probabilities)."""
    import itertools

    import keras

    def emissions(model, use_crf):
        e = np.asarray(keras.Model(model.inputs[:2], model.get_layer("potentials").output)(
            [words, chars]))  # fmt: skip
        return e if use_crf else e - np.log(np.exp(e).sum(-1, keepdims=True))

    scores = [(emissions(m, c["use_crf"]), m.get_layer("crf").get_weights() if c["use_crf"]
               else None) for m, c in members]  # fmt: skip

    def sequence_score(e, crf, seq):
        total = sum(e[t, y] for t, y in enumerate(seq))
        if crf is None:  # softmax: the sum of log-probabilities
            return total
        trans, start, end = crf
        return total + start[seq[0]] + end[seq[-1]] + sum(trans[a, b] for a, b in zip(seq, seq[1:]))

    best = []
    for r, n in enumerate(lengths):
        seqs = list(itertools.product(range(len(TAGS)), repeat=n))
        mean = [np.mean([sequence_score(e[r], crf, s) for e, crf in scores]) for s in seqs]
        best.append(list(seqs[int(np.argmax(mean))]))
    return best


def random_ids(rng, lengths):
    words = np.zeros((len(lengths), max(lengths)), np.int32)
    chars = np.zeros(words.shape + (5,), np.int32)
    for r, n in enumerate(lengths):
        words[r, :n] = rng.integers(1, 10, n)
        chars[r, :n] = rng.integers(1, 8, (n, 5))
    return words, chars


def test_ensemble_decodes_the_best_mean_sequence_score_also_with_an_ensemble_member(tmp_path):
    from keras_seqmodels.utils.loading import load_model_file

    # CRF, softmax, CRF: flat, and as a shipped-like pair (saved and loaded)
    # plus the third, which counts as three members of equal weight.
    rng = np.random.default_rng(3)
    members = random_members([True, False, True], rng)
    flat = network.build_ensemble(members, TAGS)
    pair = network.build_ensemble(members[:2], TAGS)
    pair.save(tmp_path / "pair.keras")
    pair = load_model_file(str(tmp_path / "pair.keras"))
    nested = network.build_ensemble([(pair, {}), members[2]], TAGS)
    assert sum(layer.name.startswith("member_") for layer in nested.layers) == 3
    lengths = [4, 2, 3]
    words, chars = random_ids(rng, lengths)
    expected = best_mean_sequences(members, words, chars, lengths)
    for ensemble in (flat, nested):
        pred = np.asarray(ensemble.predict_on_batch([words, chars]))
        assert [list(pred[r, :n]) for r, n in enumerate(lengths)] == expected


def test_ensemble_refuses_a_model_that_is_no_tagger():
    import keras

    inputs = keras.Input((None,), dtype="int32")
    other = keras.Model(inputs, keras.layers.Embedding(5, 4, name="lookup")(inputs))
    with pytest.raises(ValueError, match="'potentials' layer or an ensemble"):
        network.build_ensemble([(other, {})] * 2, TAGS)
    with pytest.raises(ValueError, match="at least 2 taggers"):
        network.build_ensemble(random_members([True], np.random.default_rng(0)), TAGS)


def test_inference_model_of_a_training_model_decodes_as_build_models_does():
    import keras

    rng = np.random.default_rng(5)
    words = rng.integers(1, 10, (2, 6)).astype(np.int32)
    words[1, 4:] = 0
    chars = rng.integers(1, 7, (2, 6, 5)).astype(np.int32)
    for use_crf in (True, False):
        keras.utils.set_random_seed(0)
        train, infer = network.build_models(
            [f"w{j}" for j in range(8)], list("abcde"), list("ABCD"), use_crf=use_crf,
            word_dim=4, char_dim=3, char_units=2, units=3,
        )  # fmt: skip
        again = network.inference_model(train)
        assert again.input_shape == infer.input_shape
        np.testing.assert_array_equal(
            np.asarray(again.predict_on_batch([words, chars])),
            np.asarray(infer.predict_on_batch([words, chars])),
        )


def test_package_returns_a_packaged_tagger_unchanged():
    """``--init-from FILE --epochs 0`` with the shipped (packaged) file ships
    it again instead of looking for the training network inside it."""
    import keras

    from keras_seqmodels.zoo.models.ud_ewt_upos import recipe

    inputs = keras.Input((2,))
    core = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)], name="tagger_ids")
    packaged = keras.Model(inputs, core(inputs))
    assert recipe.package(packaged, {}) is packaged
    with pytest.raises(ValueError, match="potentials"):  # a network to package is read
        recipe.package(keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)]), {})
