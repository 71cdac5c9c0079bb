"""The task API of the seven shipped models: raw inputs in, plain Python answers out."""

import json

import numpy as np
import pytest

from keras_seqmodels import zoo

UPOS = {
    "ADJ", "ADP", "ADV", "AUX", "CCONJ", "DET", "INTJ", "NOUN", "NUM", "PART", "PRON",
    "PROPN", "PUNCT", "SCONJ", "SYM", "VERB", "X",
}  # fmt: skip
SST = ["very negative", "negative", "neutral", "positive", "very positive"]


@pytest.fixture(scope="module")
def tasks():
    return {}


def task(tasks, name):
    if name not in tasks:
        tasks[name] = zoo.load(name)
    return tasks[name]


def test_every_task_has_model_info_and_its_own_class(tasks):
    for name in zoo.list_models():
        t = task(tasks, name) if name in ("mnist-renet", "ntm-copy") else None
        cls = zoo.task.task_class(name)
        assert cls is not zoo.Task and issubclass(cls, zoo.Task), name
        if t is not None:
            assert isinstance(t, cls)
            assert set(t.info) >= {"task", "domain", "data", "license", "metrics",
                                   "intended_use", "limits"}  # fmt: skip
            assert t.info["metrics"] == zoo.info(name)["metrics"]
            json.dumps(t.info)  # plain data


@pytest.mark.slow
@pytest.mark.tf_only
def test_translation_gives_german_strings(tasks):
    t = task(tasks, "multi30k-en-de")
    one = t.predict("A man is riding a bicycle.")
    assert isinstance(one, str) and "Mann" in one and "Fahrrad" in one
    two = t.predict(["Two dogs play in the snow.", ""], beam_size=1)
    assert [type(s) for s in two] == [str, str] and "Hunde" in two[0] and two[1] == ""


@pytest.mark.slow
@pytest.mark.tf_only
def test_tagging_gives_one_upos_tag_per_token(tasks):
    t = task(tasks, "ud-ewt-upos")
    sentences = ["The old man the boats .", "", "I saw her duck"]
    tags = t.predict(sentences)
    assert [len(x) for x in tags] == [6, 0, 4]
    assert all(isinstance(tag, str) and tag in UPOS for row in tags for tag in row)
    assert tags[0][0] == "DET" and tags[0][-1] == "PUNCT" and tags[2][0] == "PRON"
    assert t.predict("Dogs bark .") == t.predict(["Dogs bark ."])[0]
    raw = "I can't eat butter!"  # raw text: split UD-style, one tag per token
    assert t.tokenize(raw) == ["I", "ca", "n't", "eat", "butter", "!"]
    tags = t.predict(raw)
    assert len(tags) == 6 and tags[0] == "PRON" and tags[-1] == "PUNCT"
    assert len(t.predict(raw, pretokenized=True)) == 4


def test_sentiment_gives_labels_with_probabilities(tasks):
    t = task(tasks, "sst-treelstm")
    good, bad = t.predict(
        ["A gorgeous, witty, seductive movie.", "(0 (1 (2 a) (1 dull)) (0 (0 awful) (2 film)))"]
    )
    for answer in (good, bad):
        assert list(answer["probabilities"]) == SST and answer["label"] in SST
        assert all(isinstance(p, float) for p in answer["probabilities"].values())
        assert abs(sum(answer["probabilities"].values()) - 1) < 1e-6
        assert answer["label"] == max(answer["probabilities"], key=answer["probabilities"].get)
    assert good["label"] in ("positive", "very positive")
    assert bad["label"] in ("negative", "very negative")


def test_language_model_next_words_and_generate(tasks):
    t = task(tasks, "ptb-lstm")
    top = t.predict("the company said", top_k=5)
    assert len(top) == 5 and all(isinstance(w, str) and isinstance(p, float) for w, p in top)
    assert [p for _, p in top] == sorted((p for _, p in top), reverse=True)
    full = t.predict("the company said", top_k=None)
    assert len(full) == 10000 and abs(sum(p for _, p in full) - 1) < 1e-6
    assert full[:5] == top
    assert t.predict("") == t.predict("<eos>")  # empty text is a sentence start
    text = t.generate("the company", length=6, seed=3)
    assert isinstance(text, str) and len(text.split()) == 6
    assert t.generate("the company", length=6, seed=3) == text
    assert set(text.split()) <= set(t.vocabulary)


def test_digits(tasks):
    t = task(tasks, "mnist-renet")
    # A hand-drawn "1": a vertical bar in the middle of the frame.
    one = np.zeros((28, 28))
    one[4:24, 13:16] = 255
    assert t.predict(one.tolist()) == 1
    digits = t.predict(np.stack([one, one]))
    assert digits == [1, 1] and all(type(d) is int for d in digits)
    with pytest.raises(ValueError, match=r"mnist-renet predict: an image of shape \(14, 14\); "
                       r"expected \(28, 28\)"):  # fmt: skip
        t.predict(np.zeros((2, 14, 14)))


def test_babi_answers(tasks):
    t = task(tasks, "babi-memn2n")
    story = "Mary moved to the bathroom. John went to the hallway."
    assert t.predict((story, "Where is Mary?")) == "bathroom"
    answers = t.predict([
        {"story": story, "question": "Where is John?"},
        ("Daniel journeyed to the office.\nSandra went back to the garden.", "Where is Sandra?"),
    ])  # fmt: skip
    assert answers == ["hallway", "garden"]


def test_copy_gives_the_bits_back(tasks):
    t = task(tasks, "ntm-copy")
    bits = np.random.default_rng(0).integers(0, 2, (3, 12, 8))
    copies = t.predict(bits)
    assert np.shape(copies) == (3, 12, 8) and all(type(b) is int for b in copies[0][0])
    assert (np.asarray(copies) != bits).sum() <= 2  # 0.004 wrong bits per sequence at L = 20
    # The same as the Keras model on the training layout: bits, delimiter, blanks.
    laid_out = np.zeros((3, 25, 9), "float32")
    laid_out[:, :12, :8] = bits
    laid_out[:, 12, 8] = 1.0
    expected = np.asarray(t.model.predict_on_batch(laid_out))[:, 13:] > 0
    assert copies == expected.astype(int).tolist()
    assert t.predict(bits[1].tolist()) == copies[1]
    with pytest.raises(ValueError, match=r"ntm-copy predict: a sequence of shape \(5, 9\); "
                       r"expected \(length, 8\)"):  # fmt: skip
        t.predict(np.zeros((2, 5, 9)))


@pytest.mark.slow
@pytest.mark.tf_only
def test_export_writes_the_served_model(tasks, tmp_path):
    import tensorflow as tf

    t = task(tasks, "mnist-renet")
    one = np.zeros((1, 28, 28), "float32")
    one[0, 4:24, 13:16] = 255
    assert t.export(str(tmp_path / "mnist")) == str(tmp_path / "mnist")
    served = tf.saved_model.load(str(tmp_path / "mnist")).signatures["serving_default"]
    assert served(pixels=tf.constant(one))["class_id"].numpy().tolist() == t.predict(one)
