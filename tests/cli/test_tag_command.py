"""``seqmodels tag`` on raw text: UD-style tokens, one tag per token, and the
exported tagger tokenises and tags the same way (served where only TensorFlow
is imported)."""

import numpy as np
import pytest
from cli_helpers import run_cli

from keras_seqmodels.data.tokenize import tokenize

UPOS = {"ADJ", "ADP", "ADV", "AUX", "CCONJ", "DET", "INTJ", "NOUN", "NUM", "PART", "PRON",
        "PROPN", "PUNCT", "SCONJ", "SYM", "VERB", "X"}
SENTENCES = [
    "I can't eat butter!",
    "Mr. Smith's dog barked at 3.5 cats in the U.S. -- really?!",
    "Write to john.doe@example.com or see www.example.com.",
    "Don't worry, I'm gonna be fine.",
    # UD English EWT's conventions for web and e-mail text.
    "it's 01-Feb-02 :) so e-mail bob@ENRON or call 713-853-3989 ** now",
    "See alt.animals.cat b/c J. Smith's anti-war post.? Yes :-(",
]


@pytest.fixture(scope="module")
def tagger():
    from keras_seqmodels import zoo

    if "ud-ewt-upos" not in zoo.list_models():
        pytest.skip("ud-ewt-upos is not registered")
    return zoo.load("ud-ewt-upos").model


@pytest.fixture
def cli(tagger, monkeypatch):
    from keras_seqmodels.cli import tag_commands

    monkeypatch.setattr(tag_commands, "load_tagger", lambda *a, **k: tagger)
    return run_cli


def _pairs(line):
    return [tuple(p.rsplit("/", 1)) for p in line.split(" ")]


def test_raw_text_gets_one_tag_per_token(cli):
    code, out, err = cli(["tag", "I can't eat butter!"])
    assert code == 0, err
    pairs = _pairs(out.strip())
    assert [w for w, _ in pairs] == ["I", "ca", "n't", "eat", "butter", "!"]
    assert all(t in UPOS for _, t in pairs), pairs
    assert dict(pairs)["n't"] == "PART" and dict(pairs)["!"] == "PUNCT"


def test_every_sentence_is_tokenised_like_the_tokenizer(cli):
    code, out, err = cli(["tag", *SENTENCES])
    assert code == 0, err
    rows = out.splitlines()
    assert len(rows) == len(SENTENCES)
    for sentence, row in zip(SENTENCES, rows):
        pairs = _pairs(row)
        assert [w for w, _ in pairs] == tokenize(sentence)
        assert all(t in UPOS for _, t in pairs), pairs


def test_pretokenized_splits_on_whitespace_only(cli):
    code, out, err = cli(["tag", "--pretokenized", "I can't eat butter!"])
    assert code == 0, err
    assert [w for w, _ in _pairs(out.strip())] == ["I", "can't", "eat", "butter!"]


@pytest.mark.tf_only
@pytest.mark.slow
def test_exported_tagger_tokenises_and_tags_as_the_command(tagger, tmp_path):
    from keras_seqmodels.cli.tag_commands import tag
    from keras_seqmodels.export.tagging import export_tagger
    from keras_seqmodels.testing import run_in_clean_process
    from keras_seqmodels.zoo.models import spec

    # `seqmodels export ud-ewt-upos` writes with it
    assert spec("ud-ewt-upos").exporter("savedmodel") is export_tagger
    directory = str(tmp_path / "tagger")
    export_tagger(tagger, directory, served_name="ud-ewt-upos")
    texts = SENTENCES + ["", "   ", "one"]
    served = run_in_clean_process(
        """
        import tensorflow as tf
        fn = tf.saved_model.load(str(inputs["dir"])).signatures["serving_default"]
        out = fn(text=tf.constant([str(t) for t in inputs["texts"]]))
        outputs["tokens"] = out["tokens"].numpy()
        outputs["tags"] = out["tags"].numpy()
        """,
        inputs={"dir": np.array(directory), "texts": np.array(texts)},
    )
    assert served["tokens"].shape == served["tags"].shape
    got = []
    for tokens, tags in zip(served["tokens"], served["tags"]):
        pairs = [(w.decode(), t.decode()) for w, t in zip(tokens, tags) if w]
        assert all(t for _, t in pairs)  # a tag for every token, none for padding
        assert not any(t for w, t in zip(tokens, tags) if not w)
        got.append(pairs)
    assert got[: len(SENTENCES)] == tag(SENTENCES, model=tagger)
    assert got[len(SENTENCES):] == [[], [], tag(["one"], model=tagger)[0]]
