"""CharacterEncoder (all backends), SentenceVectorizer and TagLookup (TF)."""

import keras
import numpy as np
import pytest
from keras import ops

import keras_seqmodels as ks
from keras_seqmodels.testing import run_layer_test

ATOL = 1e-5


def sigmoid(a):
    return 1.0 / (1.0 + np.exp(-a))


def numpy_lstm(x, kernel, recurrent_kernel, bias):
    """Keras LSTM (gates i, f, c, o) over x (time, features); final h."""
    units = recurrent_kernel.shape[0]
    h, c = np.zeros(units), np.zeros(units)
    for x_t in x:
        z = x_t @ kernel + h @ recurrent_kernel + bias
        i, f, g, o = (z[k * units : (k + 1) * units] for k in range(4))
        c = sigmoid(f) * c + sigmoid(i) * np.tanh(g)
        h = sigmoid(o) * np.tanh(c)
    return h


def char_ids():
    return np.array(
        [[[3, 4, 5, 0], [6, 0, 0, 0], [0, 0, 0, 0]], [[7, 8, 9, 2], [5, 5, 0, 0], [4, 0, 0, 0]]],
        "int32",
    )


def test_character_encoder_matches_numpy():
    enc = ks.tagging.CharacterEncoder(num_chars=10, embedding_dim=4, units=3)
    ids = char_ids()
    out = ops.convert_to_numpy(enc(ids))
    table = ops.convert_to_numpy(enc.embedding.embeddings).astype("float64")
    fwd = [ops.convert_to_numpy(w).astype("float64") for w in enc.forward.cell.weights]
    bwd = [ops.convert_to_numpy(w).astype("float64") for w in enc.backward.cell.weights]
    for b in range(ids.shape[0]):
        for t in range(ids.shape[1]):
            chars = ids[b, t][ids[b, t] > 0]
            if len(chars) == 0:
                np.testing.assert_allclose(out[b, t], 0.0, atol=ATOL)
                continue
            x = table[chars]
            ref = np.concatenate([numpy_lstm(x, *fwd), numpy_lstm(x[::-1], *bwd)])
            np.testing.assert_allclose(out[b, t], ref, atol=ATOL)
    mask = ops.convert_to_numpy(enc.compute_mask(ids))
    assert mask.tolist() == [[True, True, False], [True, True, True]]


def test_character_encoder_padding_does_not_change_words():
    enc = ks.tagging.CharacterEncoder(num_chars=10, embedding_dim=4, units=3)
    ids = char_ids()
    together = ops.convert_to_numpy(enc(ids))
    alone = ops.convert_to_numpy(enc(ids[1:, 1:2, :2]))
    np.testing.assert_allclose(together[1, 1], alone[0, 0], atol=ATOL)


def test_character_encoder_layer_contract():
    run_layer_test(
        lambda: ks.tagging.CharacterEncoder(num_chars=10, embedding_dim=4, units=3),
        char_ids(),
        expected_output_shape=(2, 3, 6),
        run_mixed_precision=False,
    )


def test_character_encoder_validation():
    with pytest.raises(ValueError, match="num_chars"):
        ks.tagging.CharacterEncoder(num_chars=0)
    with pytest.raises(ValueError, match="rank 3"):
        ks.tagging.CharacterEncoder(num_chars=5)(np.zeros((2, 3), "int32"))


@pytest.mark.tf_only
def test_sentence_vectorizer_ids_and_round_trip():
    vec = ks.tagging.SentenceVectorizer(["the", "cat"], list("Thecat"), max_chars=2)
    words, chars = vec(np.array(["The cat sat", "cat"], dtype=object))
    assert words.numpy().tolist() == [[2, 3, 1], [3, 0, 0]]
    big_t, h, c, a = 2, 3, 5, 6  # ids of "T", "h", "c", "a"; "s" is unknown (1)
    assert chars.numpy().tolist() == [
        [[big_t, h], [c, a], [1, a]],
        [[c, a], [0, 0], [0, 0]],
    ]
    clone = ks.tagging.SentenceVectorizer.from_config(vec.get_config())
    again = clone(np.array(["The cat sat", "cat"], dtype=object))
    assert again[0].numpy().tolist() == words.numpy().tolist()


@pytest.mark.tf_only
def test_sentence_vectorizer_gives_one_padding_slot_for_blank_batches():
    # Zero steps would make the Keras LSTMs after it fail at run time.
    vec = ks.tagging.SentenceVectorizer(["the"], list("the"))
    for batch in ([""], [" \t", ""], []):
        words, chars = vec(np.array(batch, dtype=object))
        assert words.shape == (len(batch), 1) and chars.shape == (len(batch), 1, 1)
        assert not np.any(words.numpy()) and not np.any(chars.numpy())
    words, chars = vec(np.array(["", "the"], dtype=object))
    assert words.numpy().tolist() == [[0], [2]] and chars.shape == (2, 1, 3)


@pytest.mark.tf_only
def test_tag_lookup_pads_with_empty_strings():
    lookup = ks.tagging.TagLookup(["NOUN", "VERB"])
    out = lookup([np.array([[1, 0, 0]]), np.array([[5, 7, 0]])])
    assert out.numpy().tolist() == [[b"VERB", b"NOUN", b""]]


@pytest.mark.tf_only
def test_string_model_saves_and_loads(tmp_path):
    vec = ks.tagging.SentenceVectorizer(["a", "b"], list("ab"))
    sentences = keras.Input((), dtype="string")
    word_ids, char_ids_ = vec(sentences)
    enc = ks.tagging.CharacterEncoder(4, 2, 2)(char_ids_)
    logits = keras.layers.Dense(2)(enc)
    tags = ks.tagging.CRF(2)(logits)
    out = ks.tagging.TagLookup(["X", "Y"])([tags, word_ids])
    model = keras.Model(sentences, out)
    data = np.array(["a b", "b a a"], dtype=object)
    before = model.predict_on_batch(data)
    path = tmp_path / "m.keras"
    model.save(path)
    loaded = keras.saving.load_model(path, safe_mode=True)
    np.testing.assert_array_equal(loaded.predict_on_batch(data), before)
    assert before[0, 2] == b""


@pytest.mark.tf_only
def test_vectorizer_validation():
    with pytest.raises(ValueError, match="word_vocabulary"):
        ks.tagging.SentenceVectorizer("abc", ["a"])
    with pytest.raises(ValueError, match="max_chars"):
        ks.tagging.SentenceVectorizer(["a"], ["a"], max_chars=0)
    with pytest.raises(ValueError, match=r"shape \(batch,\)"):
        ks.tagging.SentenceVectorizer(["a"], ["a"])(np.array([["a"]], dtype=object))
    with pytest.raises(ValueError, match="tags"):
        ks.tagging.TagLookup([])
