"""The local TFDS builders read the manual directory exactly (no network)."""

import os
import shutil

import pytest

from keras_seqmodels.data import load_local, read_conllu
from keras_seqmodels.data.tfds_builders import UPOS_TAGS

pytestmark = pytest.mark.tf_only

FIXTURES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fixtures")


def test_ud_english_ewt_builder_matches_read_conllu(tmp_path):
    manual = tmp_path / "ewt"
    manual.mkdir()
    for split in ("train", "dev"):
        shutil.copy(
            os.path.join(FIXTURES, f"ewt_{split}_sample.conllu"),
            manual / f"en_ewt-ud-{split}.conllu",
        )
    ds = load_local("ud_english_ewt", str(manual), "dev", str(tmp_path / "tfds"))
    got = [
        ([w.decode() for w in ex["words"]], [UPOS_TAGS[i] for i in ex["upos"]])
        for ex in ds.as_numpy_iterator()
    ]
    expected = read_conllu(os.path.join(FIXTURES, "ewt_dev_sample.conllu"))
    assert sorted(got) == sorted(expected)


def test_ptb_builder_reads_lines(tmp_path):
    manual = tmp_path / "ptb"
    manual.mkdir()
    lines = [" the cat sat ", " a dog ran far "]
    for split in ("train", "valid", "test"):
        (manual / f"ptb.{split}.txt").write_text("\n".join(lines) + "\n")
    ds = load_local("ptb_text", str(manual), "valid", str(tmp_path / "tfds"))
    got = sorted(ex["text"].decode() for ex in ds.as_numpy_iterator())
    assert got == ["a dog ran far", "the cat sat"]


def test_errors_name_the_problem(tmp_path):
    with pytest.raises(KeyError, match="unknown builder 'nope'"):
        load_local("nope", str(tmp_path), "train", str(tmp_path))
    with pytest.raises(FileNotFoundError, match="no such data directory"):
        load_local("ptb_text", str(tmp_path / "missing"), "train", str(tmp_path))


def test_ptb_builder_keeps_the_file_order(tmp_path):
    """A language model reads PTB as one continuous stream: line order matters."""
    manual = tmp_path / "ptb"
    manual.mkdir()
    lines = [f"sentence number {i} of the article" for i in range(40)]
    for split in ("train", "valid", "test"):
        (manual / f"ptb.{split}.txt").write_text("\n".join(f" {x} " for x in lines) + "\n")
    ds = load_local("ptb_text", str(manual), "train", str(tmp_path / "tfds"))
    assert [ex["text"].decode() for ex in ds.as_numpy_iterator()] == lines


def test_preparing_says_what_it_does_and_downloads_nothing(tmp_path, capfd):
    manual = tmp_path / "ptb"
    manual.mkdir()
    for split in ("train", "valid", "test"):
        (manual / f"ptb.{split}.txt").write_text(" a b \n")
    load_local("ptb_text", str(manual), "train", str(tmp_path / "tfds"))
    out = capfd.readouterr().out
    assert "Downloading" not in out
    assert "Preparing ptb_text from the local files (nothing is downloaded)" in out
    assert "ptb_text prepared in" in out
    load_local("ptb_text", str(manual), "valid", str(tmp_path / "tfds"))  # built: silent
    assert "Preparing" not in capfd.readouterr().out
