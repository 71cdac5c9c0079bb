"""Bad data and bad arguments get one error that names its cause.

Every user-facing entry answers a bad numeric argument, an empty or corrupt
data file, data that leaves nothing to train on, or a reused work folder
with a ``ValueError`` naming the argument or the file (and line), never a
Python internal (``range() arg 3 must not be zero``, ``max() arg is an
empty sequence``, ``IndexError``, a TFDS ``AssertionError``). A tagger never
answers a token with an empty tag.
"""

import gzip
import json
import os
import types

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

FAST = settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))

NOT_POSITIVE = st.one_of(
    st.integers(-(10**6), 0),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([None, "8", True, 2.5, [8]]),
)

# -- numeric arguments, checked before any file is read ---------------------------------


def _entries():
    from keras_seqmodels.language_model import train_language_model
    from keras_seqmodels.seq2seq import train_translator
    from keras_seqmodels.tagging import train_tagger
    from keras_seqmodels.trees import train_tree_classifier
    from keras_seqmodels.trees.serving import root_probabilities

    missing = "/nonexistent/file.txt"
    return {
        "train_translator": lambda **kw: train_translator(missing, missing, **kw),
        "train_tree_classifier": lambda **kw: train_tree_classifier(missing, **kw),
        "train_language_model": lambda **kw: train_language_model(missing, **kw),
        "train_tagger": lambda **kw: train_tagger(missing, **kw),
        "root_probabilities": lambda **kw: root_probabilities(None, ["(1 a)"], **kw),
    }


@FAST
@given(entry=st.sampled_from(sorted(_entries())), value=NOT_POSITIVE)
def test_batch_size_not_positive_is_named(entry, value):
    with pytest.raises(ValueError, match=rf"^{entry}: `batch_size` must be a positive integer"):
        _entries()[entry](batch_size=value)


NOT_A_RATE = st.one_of(
    st.floats(max_value=0.0),
    st.sampled_from([float("nan"), float("inf"), None, "0.1", True]),
)


@FAST
@given(
    entry=st.sampled_from(["train_translator", "train_tree_classifier", "train_language_model"]),
    arg=st.sampled_from(["epochs", "min_count", "units", "learning_rate"]),
    data=st.data(),
)
def test_other_numeric_arguments_are_named(entry, arg, data):
    value = data.draw(NOT_A_RATE if arg == "learning_rate" else NOT_POSITIVE)
    if entry == "train_translator" and arg == "units":
        arg = "encoder_units"
    with pytest.raises(ValueError, match=rf"^{entry}: `{arg}` must be"):
        _entries()[entry](**{arg: value})


@pytest.fixture(scope="module")
def language_model():
    from keras_seqmodels.language_model import WordLanguageModel

    return WordLanguageModel(["<eos>", "<unk>", "a"], units=2, layers=1)


@FAST
@given(arg=st.sampled_from(["batch_size", "sequence_length"]), value=NOT_POSITIVE)
def test_perplexity_arguments_are_named(language_model, arg, value):
    with pytest.raises(ValueError, match=rf"^stream_perplexity: `{arg}` must be a positive"):
        language_model.stream_perplexity(np.array([2, 2, 2]), **{arg: value})
    with pytest.raises(ValueError, match=rf"^perplexity: `{arg}` must be a positive"):
        language_model.perplexity("/nonexistent.txt", **{arg: value})


# -- data that leaves nothing to train on ---------------------------------------------


@FAST
@given(lengths=st.lists(st.integers(3, 12), min_size=1, max_size=6))
def test_every_target_too_long_is_named(tmp_path_factory, lengths):
    from keras_seqmodels.seq2seq import train_translator

    d = tmp_path_factory.mktemp("pairs")
    src, tgt = d / "src.txt", d / "tgt.txt"
    src.write_text("".join("a b\n" for _ in lengths))
    tgt.write_text("".join(" ".join(["x"] * n) + "\n" for n in lengths))
    with pytest.raises(ValueError, match=r"every one of the \d+ target sentence\(s\) is longer "
                                         r"than max_length=1"):  # fmt: skip
        train_translator(str(src), str(tgt), max_length=1, min_count=1, embedding_dim=2,
                         encoder_units=2, decoder_units=2, verbose=0)  # fmt: skip


# -- non-UTF-8 files: the file and line are named ------------------------------------------


@FAST
@given(line=st.integers(0, 4), byte=st.sampled_from([b"\xff", b"\xe9", b"\xc3", b"\x80"]))
def test_non_utf8_line_is_named(tmp_path_factory, line, byte):
    from keras_seqmodels.seq2seq import read_parallel_text
    from keras_seqmodels.trees.training import read_labelled_trees

    d = tmp_path_factory.mktemp("enc")
    rows = [b"(1 (1 good) (1 fun))"] * 5
    rows[line] = b"(1 (1 g" + byte + b"d) (1 fun))"
    bad = d / "bad.txt"
    bad.write_bytes(b"\n".join(rows) + b"\n")
    good = d / "good.txt"
    good.write_text("a\n" * 5)
    expected = rf"bad\.txt, line {line + 1}: not UTF-8"
    with pytest.raises(ValueError, match=expected):
        read_labelled_trees(str(bad))
    with pytest.raises(ValueError, match=expected):
        read_parallel_text(str(good), str(bad))


# -- MNIST idx files ---------------------------------------------------------------------


def _idx(dims, payload=None, magic=b"\0\0\x08"):
    header = magic + bytes([len(dims)]) + b"".join(int(d).to_bytes(4, "big") for d in dims)
    size = int(np.prod(dims)) if payload is None else None
    return header + (bytes(size) if payload is None else payload)


IDX_BAD = st.one_of(
    st.binary(max_size=64),  # garbage, maybe not even gzip
    st.binary(max_size=64).map(gzip.compress),  # gzip of garbage
    st.tuples(st.integers(1, 2**31 - 1), st.integers(0, 100)).map(  # lying image count
        lambda t: gzip.compress(_idx([t[0], 28, 28], payload=bytes(t[1])))
    ),
    st.integers(0, 100).map(lambda n: gzip.compress(_idx([n + 1, 28, 28])[:-1])),  # truncated
    st.sampled_from([[5, 27, 28], [5, 28], [5, 28, 28, 1]]).map(
        lambda dims: gzip.compress(_idx(dims))  # wrong item shape
    ),
)


@FAST
@given(data=IDX_BAD)
def test_bad_mnist_idx_files_are_named(tmp_path_factory, data):
    from keras_seqmodels.data import mnist

    path = tmp_path_factory.mktemp("mnist") / "train-images-idx3-ubyte.gz"
    path.write_bytes(data)
    try:
        images = mnist.read_idx(str(path), shape=(None, 28, 28), owner="mnist-renet")
    except ValueError as err:
        assert str(err).startswith(f"mnist-renet: {path}"), err
    else:  # random bytes that happen to be a valid file
        assert images.shape[1:] == (28, 28)


def test_mismatched_mnist_counts_are_named(tmp_path):
    from keras_seqmodels.zoo.models.mnist_renet import recipe

    def read_split(folder, split):
        return recipe.load_data(folder, split, False, recipe.CONFIG)

    (tmp_path / "t10k-images-idx3-ubyte.gz").write_bytes(gzip.compress(_idx([3, 28, 28])))
    (tmp_path / "t10k-labels-idx1-ubyte.gz").write_bytes(gzip.compress(_idx([2])))
    with pytest.raises(ValueError, match="has 3 images but .*t10k-labels-idx1-ubyte.gz has 2"):
        read_split(str(tmp_path), "test")
    (tmp_path / "t10k-labels-idx1-ubyte.gz").write_bytes(
        gzip.compress(_idx([3], payload=bytes([1, 2, 200])))
    )
    with pytest.raises(ValueError, match="holds the label 200"):
        read_split(str(tmp_path), "test")
    with pytest.raises(FileNotFoundError, match="train-images-idx3-ubyte.gz"):
        read_split(str(tmp_path), "train")


# -- local TFDS builders: bad files are named before TFDS starts ----------------------------


@pytest.mark.parametrize(
    "builder, name, content, expected",
    [
        ("ptb_text", "ptb.train.txt", b"", "holds no non-blank line"),
        ("ptb_text", "ptb.train.txt", b"\n  \n\n", "holds no non-blank line"),
        ("ptb_text", "ptb.valid.txt", b"the cat\n\x00\x01\x02\x00\n", "line 2: a NUL byte"),
        ("ptb_text", "ptb.test.txt", b"the cat\n\xff\xfe\x00\n", "line 2: not UTF-8"),
        ("ud_english_ewt", "en_ewt-ud-dev.conllu", b"", "holds no sentence"),
        ("ud_english_ewt", "en_ewt-ud-dev.conllu", b"\x7fELF\x00", r"conllu:1: expected a CoNLL"),
    ],
)
def test_bad_local_data_files_are_named(tmp_path, builder, name, content, expected):
    from keras_seqmodels.data import load_local

    manual = tmp_path / "manual"
    manual.mkdir()
    (manual / name).write_bytes(content)
    with pytest.raises(ValueError, match=expected) as err:
        load_local(builder, str(manual), "train", str(tmp_path / "tfds"))
    assert str(manual / name) in str(err.value)


# -- a reused --work-dir ------------------------------------------------------------------


def _run_folder(tmp_path, model, config, state="backup"):
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    (work / "config.json").write_text(json.dumps(config))
    (work / "run.json").write_text(json.dumps({"model": model}))
    if state == "backup":
        (work / "backup").mkdir(exist_ok=True)
        (work / "backup" / "1.json").write_text("{}")
    elif state == "best":
        (work / "best.keras").write_bytes(b"x")
    return str(work)


@FAST
@given(
    key=st.sampled_from(["units", "layers", "seed", "dropout"]),
    before=st.integers(0, 5),
    after=st.integers(0, 5),
    state=st.sampled_from(["backup", "best", None]),
)
def test_work_dir_of_other_options_is_refused(tmp_path_factory, key, before, after, state):
    from keras_seqmodels.zoo.framework.run import _check_work_dir

    tmp = tmp_path_factory.mktemp("w")
    recipe = types.SimpleNamespace(name="ptb-lstm")
    work = _run_folder(tmp, "ptb-lstm", {key: before, "data_dir": "/a"}, state)
    now = {key: after, "data_dir": "/b"}  # the data folder may move
    if before != after and state:
        expected = rf"--work-dir {work} holds a run with other options \({key}: {before} there"
        with pytest.raises(ValueError, match=expected + rf", {after} now"):
            _check_work_dir(recipe, work, now)
    else:
        _check_work_dir(recipe, work, now)


def test_work_dir_of_another_model_is_refused(tmp_path):
    from keras_seqmodels.zoo.framework.run import _check_work_dir

    work = _run_folder(tmp_path, "mnist-renet", {"units": 1})
    with pytest.raises(ValueError, match="holds a run of the model 'mnist-renet'"):
        _check_work_dir(types.SimpleNamespace(name="ptb-lstm"), work, {"units": 1})


def test_reused_work_dir_is_one_line_before_any_keras_warning(tmp_path, capsys):
    from keras_seqmodels.cli.main import main

    work = str(tmp_path / "run")
    small = ["--smoke", "--epochs", "1", "--batch-size", "4", "--bptt", "5", "--verbose", "0"]
    assert main(["train", "ptb-lstm", *small, "--units", "8", "--work-dir", work]) == 0
    capsys.readouterr()
    assert main(["train", "ptb-lstm", *small, "--units", "9", "--work-dir", work]) != 0
    err = capsys.readouterr().err
    assert "holds a run with other options (units: 8 there, 9 now)" in err
    assert "warn" not in err.lower() and len(err.strip().splitlines()) == 1, err


# -- a tagger never gives an empty tag -------------------------------------------------------


@pytest.fixture(scope="module")
def tagger(tmp_path_factory):
    from keras_seqmodels.tagging import train_tagger

    path = tmp_path_factory.mktemp("tagger") / "s.conllu"
    rows = ["1\tDogs\tdog\tNOUN\tNNS\t_\t2\tnsubj\t_\t_",
            "2\tbark\tbark\tVERB\tVBP\t_\t0\troot\t_\t_"]  # fmt: skip
    path.write_text(("\n".join(rows) + "\n\n") * 4)
    return train_tagger(str(path), epochs=1, embedding_dim=4, char_units=4, units=4, verbose=0)


CONTROL = st.lists(
    st.sampled_from(["\0", "\x01", "\x1b", "\x7f", "\x1c", "\ufeff", "\u200b", " ", "a", "Dogs"]),
    min_size=1,
    max_size=8,
).map("".join)


@settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
@given(text=CONTROL, pretokenized=st.booleans())
def test_tagger_gives_a_tag_or_an_error_never_an_empty_tag(tagger, text, pretokenized):
    from keras_seqmodels.tagging.text import tag_sentences

    try:
        tagged = tag_sentences(tagger, [text], pretokenized=pretokenized)
    except ValueError as err:
        assert "gave no tag to the token" in str(err)
        return
    for sentence in tagged:
        assert sentence, text
        assert all(tag for _, tag in sentence), (text, sentence)


def test_nul_only_text_gets_a_real_tag(tagger):
    from keras_seqmodels.tagging.text import tag_sentences

    for text in ("\0", "\0\0 \0", "Dogs \0 bark"):
        tagged = tag_sentences(tagger, [text])
        assert [tag for _, tag in tagged[0]] and all(
            tag in ("NOUN", "VERB") for _, tag in tagged[0]
        ), tagged
    # The served graph itself: one tag per token, none empty.
    out = np.asarray(tagger.predict_on_batch(np.array(["\0", "a \0 b"], dtype=object)))
    assert all(t for t in out[0][:1]) and all(t for t in out[1][:3]), out


def test_tag_sentences_refuses_a_model_that_drops_a_token():
    from keras_seqmodels.tagging.text import tag_sentences

    class Dropping:
        def predict_on_batch(self, batch):
            return np.array([[b"NOUN", b""] for _ in batch], dtype=object)

    with pytest.raises(ValueError, match=r"sentence 1 \(non-blank\): the tagger gave no tag to "
                                         r"the token 'b'"):  # fmt: skip
        tag_sentences(Dropping(), ["a b"])
    assert os.path.basename(__file__) == "test_named_errors.py"
