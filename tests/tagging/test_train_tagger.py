"""A CoNLL-U file -> a trained tagger -> .keras round trip -> a SavedModel tagging raw text.

TensorFlow only (string tensors, SavedModel). Data: the first sentences of the
committed UD English EWT samples (tests/fixtures, CC BY-SA 4.0).
"""

import collections
import os

import keras
import numpy as np
import pytest

pytestmark = pytest.mark.tf_only
if keras.backend.backend() != "tensorflow":
    pytest.skip("string models need the TensorFlow backend", allow_module_level=True)

import tensorflow as tf  # noqa: E402

from keras_seqmodels import export  # noqa: E402
from keras_seqmodels.data import read_conllu  # noqa: E402
from keras_seqmodels.data.tokenize import tokenize  # noqa: E402
from keras_seqmodels.export.tagging import export_tagger, is_string_tagger  # noqa: E402
from keras_seqmodels.tagging import train_tagger  # noqa: E402

FIXTURES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fixtures")
SMALL = dict(embedding_dim=32, char_units=16, units=32, batch_size=8, learning_rate=1e-2,
             verbose=0)  # fmt: skip


def first_sentences(name, n, path):
    with open(os.path.join(FIXTURES, name), encoding="utf-8") as f:
        blocks = f.read().split("\n\n")[:n]
    path.write_text("\n\n".join(blocks) + "\n\n", encoding="utf-8")
    return str(path)


def tag_all(model, sentences):
    out = np.asarray(model(tf.constant([" ".join(ws) for ws, _ in sentences])))
    return [[t.decode("utf-8") for t in row[: len(ws)]] for (ws, _), row in zip(sentences, out)]


def accuracy(sentences, predicted):
    pairs = [(g, p) for (_, gold), tags in zip(sentences, predicted) for g, p in zip(gold, tags)]
    return sum(g == p for g, p in pairs) / len(pairs)


def majority(sentences):
    counts = collections.Counter(t for _, ts in sentences for t in ts)
    return counts.most_common(1)[0][1] / sum(counts.values())


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    folder = tmp_path_factory.mktemp("conllu")
    train = first_sentences("ewt_train_sample.conllu", 40, folder / "train.conllu")
    dev = first_sentences("ewt_dev_sample.conllu", 20, folder / "dev.conllu")
    tagger = train_tagger(train, dev, epochs=8, **SMALL)
    return tagger, train, dev


def test_training_learns_more_than_the_majority_tag(trained):
    tagger, train, dev = trained
    history = tagger.history.history
    assert len(history["val_accuracy"]) == 8 and len(history["loss"]) == 8
    assert history["loss"][-1] < 0.5 * history["loss"][0], history["loss"]
    sentences = read_conllu(train)
    predicted = tag_all(tagger, sentences)
    assert [len(t) for t in predicted] == [len(ws) for ws, _ in sentences]
    assert accuracy(sentences, predicted) > majority(sentences) + 0.4
    # Held-out sentences: well above the majority tag too (most words unseen);
    # the reported number is the share of the validation file's words tagged right
    # (to float32 precision: one word more or less would move it by 1 / words).
    held_out = read_conllu(dev)
    dev_accuracy = accuracy(held_out, tag_all(tagger, held_out))
    assert history["val_accuracy"][-1] == pytest.approx(dev_accuracy, abs=1e-6)
    assert dev_accuracy > majority(held_out) + 0.3, history
    # The tag set is the training file's UPOS tags, most frequent first.
    counts = collections.Counter(t for _, ts in sentences for t in ts)
    assert tagger.get_layer("tag_strings").tags[0] == counts.most_common(1)[0][0]


def test_saved_tagger_reloads_with_identical_outputs(trained, tmp_path):
    tagger, train, _ = trained
    batch = tf.constant([" ".join(ws) for ws, _ in read_conllu(train)[:6]]
                        + ["", "Zyxwv qqq blorfs ."])  # fmt: skip
    tagger.save(tmp_path / "mine.keras")
    loaded = keras.saving.load_model(tmp_path / "mine.keras")
    expected = tagger(batch).numpy()
    np.testing.assert_array_equal(loaded(batch).numpy(), expected)
    assert (expected[6] == b"").all() and (expected[7][:4] != b"").all()
    assert (expected[7][4:] == b"").all()


def test_export_serves_raw_text_tokenized_in_the_graph(trained, tmp_path):
    tagger, _, _ = trained
    texts = ["I can't believe it's not butter, I dont know, im sure it's 5 p.m.",
             "The U.S. forces moved north.", "  "]
    directory = export_tagger(tagger, str(tmp_path / "served"))
    served = tf.saved_model.load(directory).signatures["serving_default"]
    out = served(text=tf.constant(texts))
    for i, text in enumerate(texts):
        tokens = tokenize(text)
        row = [t.decode("utf-8") for t in out["tokens"].numpy()[i][: len(tokens)]]
        assert row == tokens
        assert (out["tokens"].numpy()[i][len(tokens) :] == b"").all()
        # The tags are the Keras model's on the tokenized text.
        want = tagger(tf.constant([" ".join(tokens)])).numpy()[0][: len(tokens)]
        np.testing.assert_array_equal(out["tags"].numpy()[i][: len(tokens)], want)
    assert set(out["tags"].numpy()[0]) <= {t.encode() for t in tagger.get_layer("tag_strings").tags}


def test_saved_file_exports_as_a_tagger_from_python_and_the_cli(trained, tmp_path, capsys):
    from keras_seqmodels.cli.main import main

    tagger, _, _ = trained
    path = str(tmp_path / "mine.keras")
    tagger.save(path)
    export.export(path, str(tmp_path / "py"))
    assert main(["export", path, str(tmp_path / "cli")]) == 0
    text = tf.constant(["Dogs bark at the mailman."])
    want = tagger(tf.constant([" ".join(tokenize(text.numpy()[0].decode()))])).numpy()
    for name in ("py", "cli"):
        served = tf.saved_model.load(str(tmp_path / name)).signatures["serving_default"]
        np.testing.assert_array_equal(served(text=text)["tags"].numpy(), want)
    capsys.readouterr()
    assert main(["export", path, str(tmp_path / "beam"), "--beam", "3"]) == 2
    assert "--beam is not an option of the savedmodel export of a tagger" in capsys.readouterr().err
    assert is_string_tagger(tagger) and is_string_tagger(keras.saving.load_model(path))
    dense = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2)])
    assert not is_string_tagger(dense) and not is_string_tagger("mine.keras")


def test_xpos_column_and_words_only(tmp_path):
    train = first_sentences("ewt_train_sample.conllu", 10, tmp_path / "train.conllu")
    tagger = train_tagger(train, column="xpos", characters=False, epochs=1,
                          **{**SMALL, "units": 8, "embedding_dim": 8})  # fmt: skip
    sentences = read_conllu(train, column="xpos")
    assert sorted(tagger.get_layer("tag_strings").tags) == sorted(
        {t for _, ts in sentences for t in ts}
    )
    assert "chars" not in [
        layer.name for layer in tagger.get_layer("crf_tagger").potentials_model.layers
    ]
    predicted = tag_all(tagger, sentences[:3])
    assert all(t in set(tagger.get_layer("tag_strings").tags) for row in predicted for t in row)


WORD = "1\tDogs\tdog\tNOUN\tNNS\t_\t2\tnsubj\t_\t_\n"


@pytest.mark.parametrize(
    "text,match",
    [
        ("", r"train_tagger: .*bad\.conllu holds no sentence; expected CoNLL-U"),
        ("# only a comment\n\n", r"holds no sentence"),
        (WORD + "2 bark bark VERB VBP _ 0 root _ _\n",
         r"train_tagger: .*bad\.conllu:2: expected a CoNLL-U word line, 10 tab-separated "
         r"columns \(ID FORM LEMMA UPOS"),
        (WORD + "2\tbark\tbark\t\tVBP\t_\t0\troot\t_\t_\n",
         r"train_tagger: .*bad\.conllu:2: empty FORM or UPOS column"),
    ],
)  # fmt: skip
def test_bad_training_file_is_one_clear_error(tmp_path, text, match):
    (tmp_path / "bad.conllu").write_text(text, encoding="utf-8")
    with pytest.raises(ValueError, match=match):
        train_tagger(str(tmp_path / "bad.conllu"), epochs=1, verbose=0)


def test_other_bad_inputs_name_the_function_and_the_file(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"train_tagger: no such file: .*missing\.conllu"):
        train_tagger(str(tmp_path / "missing.conllu"))
    good = tmp_path / "good.conllu"
    good.write_text(WORD.replace("NNS", "_") + "\n", encoding="utf-8")
    with pytest.raises(FileNotFoundError, match=r"no such file: .*dev\.conllu"):
        train_tagger(str(good), str(tmp_path / "dev.conllu"))
    with pytest.raises(ValueError, match=r"good\.conllu has no XPOS tags"):
        train_tagger(str(good), column="xpos")
    with pytest.raises(ValueError, match=r"`column` must be one of \['upos', 'xpos'\]"):
        train_tagger(str(good), column="lemma")
    with pytest.raises(ValueError, match=r"no word of .*good\.conllu occurs min_count=2 times"):
        train_tagger(str(good))
    with pytest.raises(ValueError, match=r"`batch_size` must be a positive integer"):
        train_tagger(str(good), batch_size=0)
    (tmp_path / "latin1.conllu").write_bytes(WORD.replace("Dogs", "Caf\xe9").encode("latin-1"))
    with pytest.raises(ValueError, match=r"train_tagger: .*latin1\.conllu, line \d+: not UTF-8"):
        train_tagger(str(tmp_path / "latin1.conllu"))
