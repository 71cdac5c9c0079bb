"""The shipped ud-ewt-upos tagger: accuracy floor, padding, round trip, export."""

import os

import keras
import numpy as np
import pytest

from keras_seqmodels import zoo
from keras_seqmodels.cli import tag_commands
from keras_seqmodels.data import read_conllu

pytestmark = pytest.mark.tf_only  # string inputs: the model runs on TensorFlow

FIXTURE = os.path.join(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
    "fixtures",
    "ewt_dev_sample.conllu",
)
# Measured 0.9660 on this dev sample (150 sentences, 3,145 words) with the
# shipped artifact, a two-member ensemble (the full dev set scores 0.9550;
# the earlier pair scored 0.9647 here, its member A alone 0.9631); the floor
# leaves room for numerical differences across machines only.
FLOOR = 0.955


@pytest.fixture(scope="module")
def tagger():
    return zoo.load("ud-ewt-upos").model


@pytest.fixture(scope="module")
def sample():
    return read_conllu(FIXTURE)


def predict(model, sentences):
    out = np.asarray(model.predict_on_batch(np.array(sentences, dtype=object)))
    return [[t.decode("utf-8") for t in row] for row in out]


def test_accuracy_floor_on_the_dev_sample(tagger, sample):
    pred = predict(tagger, [" ".join(ws) for ws, _ in sample])
    correct = total = 0
    for (words, gold), row in zip(sample, pred):
        assert row[: len(words)] and all(row[: len(words)])
        assert not any(row[len(words) :]), "padding must be empty strings"
        correct += sum(g == p for g, p in zip(gold, row))
        total += len(gold)
    assert correct / total >= FLOOR


def test_batched_equals_alone(tagger, sample):
    sentences = [" ".join(ws) for ws, _ in sample[:12]]
    together = predict(tagger, sentences)
    for sentence, row in zip(sentences, together):
        alone = predict(tagger, [sentence])[0]
        n = len(sentence.split())
        assert len(alone) == n
        assert row[:n] == alone


def test_keras_round_trip_is_unchanged(tagger, sample, tmp_path):
    sentences = [" ".join(ws) for ws, _ in sample[:20]]
    path = tmp_path / "again.keras"
    tagger.save(path)
    again = keras.saving.load_model(path, compile=False, safe_mode=True)
    assert predict(again, sentences) == predict(tagger, sentences)


def test_saved_model_serving_default_maps_strings_to_tags(tagger, tmp_path):
    import tensorflow as tf

    path = str(tmp_path / "saved")
    tagger.export(path, format="tf_saved_model", verbose=False)
    fn = tf.saved_model.load(path).signatures["serving_default"]
    sentences = tf.constant(["The old man the boats .", "I agree ."])
    out = list(fn(sentences).values())[0].numpy()
    assert out.dtype == object and out.shape == (2, 6)
    assert [t.decode() for t in out[1]] == predict(tagger, ["I agree ."])[0] + ["", "", ""]


def test_tag_command_prints_word_tag_pairs(capsys):
    from keras_seqmodels.cli.main import main

    assert main(["tag", "The old man the boats ."]) == 0
    line = capsys.readouterr().out.strip()
    words = [pair.rsplit("/", 1) for pair in line.split()]
    assert [w for w, _ in words] == "The old man the boats .".split()
    assert words[0][1] == "DET" and words[-1][1] == "PUNCT"
    assert tag_commands.tag(["  "]) == []


# Measured 0.9641 end to end on the dev sample (the gold words joined by
# spaces, tokenised by the task; 2 of 3,145 words covered by no token); the
# tokenizer without the UD conventions for web text scored 0.9618 (10 words
# uncovered), below this floor.
RAW_TEXT_FLOOR = 0.963


def test_raw_text_accuracy_floor_on_the_dev_sample(sample):
    """Tags from raw text: a gold word counts when one token covers it exactly
    and that token's tag is right (benchmarks/tokenizer_ewt.py --tag)."""
    task = zoo.load("ud-ewt-upos")
    texts = [" ".join(words) for words, _ in sample]
    right = total = 0
    for (words, gold), text, tags in zip(sample, texts, task.predict(texts)):
        tokens = task.tokenize(text)
        assert len(tags) == len(tokens)
        starts, pos = {}, 0
        for i, token in enumerate(tokens):
            starts[(pos, pos + len(token))] = i
            pos += len(token)
        pos = 0
        for word, tag in zip(words, gold):
            i = starts.get((pos, pos + len(word)))
            right += i is not None and tags[i] == tag
            total += 1
            pos += len(word)
    assert right / total >= RAW_TEXT_FLOOR
