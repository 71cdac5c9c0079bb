"""Tagged sentences to id arrays and padded batches (``keras_seqmodels.tagging.data``)."""

import keras
import numpy as np
import pytest

from keras_seqmodels.tagging.data import pad_rows, to_arrays, vocabularies


def test_vocabularies_count_tokens_as_the_model_splits_them():
    sentences = [(["The", "10 000", "the"], ["DET", "NUM", "DET"]), (["a"], ["DET"])]
    words, chars, counts = vocabularies(sentences)
    assert words == ["the", "10000", "a"] and counts["the"] == 2
    assert chars[:2] == ["0", "e"] and " " not in chars
    assert vocabularies(sentences, min_count=2)[0] == ["the"]
    assert vocabularies(sentences, max_words=2, lowercase=False)[0] == ["10000", "The"]


def test_pad_rows_places_each_sentence_at_the_start_of_its_row():
    lengths = [2, 3, 1]
    n = sum(lengths)
    data = {
        "words": np.arange(1, n + 1, dtype=np.int32),
        "chars": np.arange(1, 4 * n + 1, dtype=np.int32).reshape(n, 4),
        "tags": np.arange(10, 10 + n, dtype=np.int32),
        "offsets": np.concatenate([[0], np.cumsum(lengths)]),
    }
    rows = np.array([1, 2, 1])
    words, chars, tags = pad_rows(data, rows, 5, max_chars=3)
    assert words.shape == tags.shape == (3, 5) and chars.shape == (3, 5, 3)
    for r, s in enumerate(rows):
        a, b = data["offsets"][s], data["offsets"][s + 1]
        np.testing.assert_array_equal(words[r], np.pad(data["words"][a:b], (0, 5 - (b - a))))
        np.testing.assert_array_equal(tags[r], np.pad(data["tags"][a:b], (0, 5 - (b - a))))
        np.testing.assert_array_equal(chars[r, : b - a], data["chars"][a:b, :3])
        assert not chars[r, b - a :].any()


@pytest.mark.tf_only
@pytest.mark.skipif(keras.backend.backend() != "tensorflow", reason="string inputs")
def test_to_arrays_joins_chunks_whose_longest_words_differ():
    import keras_seqmodels as ks

    vectorizer = ks.tagging.SentenceVectorizer(["a", "extraordinarily"], list("aextrodinly"))
    # 500 sentences per vectorizer call: the first chunk's longest word has 1
    # character, the second's 15 (below max_chars=20).
    sentences = [(["a"], ["DET"])] * 500 + [(["extraordinarily", "a"], ["ADV", "DET"])]
    data = to_arrays(sentences, vectorizer, ["DET", "ADV"], chunk=500)
    assert data["chars"].shape == (502, vectorizer.max_chars)
    assert data["words"][0] == data["words"][501] != data["words"][500]
    np.testing.assert_array_equal(data["offsets"][-3:], [499, 500, 502])
    assert (data["chars"][0, 1:] == 0).all() and (data["chars"][500, :15] > 0).all()
    assert data["tags"].tolist()[-2:] == [1, 0]
