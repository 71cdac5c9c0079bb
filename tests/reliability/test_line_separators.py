"""Line-oriented readers split at "\\n" (and "\\r\\n") only: a line holding any
other character that ``str.splitlines()`` breaks at (U+2028, U+2029, U+0085,
U+000B, U+000C, U+001C-U+001E, a lone "\\r") stays one line, so line i of a
file is line i of what the package reads, as ``wc -l`` counts them."""

import io
import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from keras_seqmodels.data import babi, lines
from keras_seqmodels.language_model import read_words
from keras_seqmodels.seq2seq import read_parallel_text
from keras_seqmodels.trees import read_labelled_trees, read_ptb_file

# Every character str.splitlines() breaks at, except "\n" itself.
SEPARATORS = ["\r", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029"]
WORD = st.text("abcxyz", min_size=1, max_size=4)
# A line: words, with separator characters inside (a lone "\r" never last,
# where it would read as the "\r" of a "\r\n").
LINE = st.lists(st.one_of(WORD, st.sampled_from(SEPARATORS)), min_size=1, max_size=6).map(
    lambda parts: " ".join(parts) + " end"
)
SETTINGS = settings(max_examples=40, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])  # fmt: skip


def _write(path, rows, ending="\n"):
    path.write_bytes("".join(row + ending for row in rows).encode("utf-8"))
    return str(path)


def _wc_l(path):
    with open(path, "rb") as f:
        return f.read().count(b"\n")


@SETTINGS
@given(rows=st.lists(LINE, min_size=1, max_size=8), crlf=st.booleans())
def test_read_lines_agrees_with_wc_l(tmp_path, rows, crlf):
    path = _write(tmp_path / "x.txt", rows, "\r\n" if crlf else "\n")
    assert lines.read_lines(path) == rows
    assert len(lines.read_lines(path)) == _wc_l(path)
    data = open(path, "rb").read()
    assert lines.decode_lines(data, "standard input") == rows
    assert lines.split_lines(data.decode("utf-8")) == rows


@SETTINGS
@given(rows=st.lists(LINE, min_size=1, max_size=8))
def test_parallel_text_keeps_pairs_aligned(tmp_path, rows):
    source = _write(tmp_path / "src.txt", rows)
    target = _write(tmp_path / "tgt.txt", [f"T{i}" for i in range(len(rows))])
    src, tgt = read_parallel_text(source, target)
    assert tgt == [f"T{i}" for i in range(len(rows))]
    assert src == [row.strip() for row in rows]


def test_parallel_text_with_a_separator_in_one_file_is_not_shifted(tmp_path):
    source = _write(tmp_path / "src.txt", ["a dog", "a\u2028cat", "a bird"])
    target = _write(tmp_path / "tgt.txt", ["ein Hund", "eine Katze", "ein Vogel"])
    assert read_parallel_text(source, target)[1] == ["ein Hund", "eine Katze", "ein Vogel"]
    assert read_parallel_text(source, target)[0][1] == "a\u2028cat"


@SETTINGS
@given(rows=st.lists(LINE, min_size=1, max_size=6))
def test_cli_file_and_stdin_lines_are_one_to_one(tmp_path, rows, monkeypatch):
    from keras_seqmodels.cli.inputs import read_lines

    path = _write(tmp_path / "in.txt", rows)
    assert read_lines([], path, "TEXT") == (rows, True)

    class Stdin(io.TextIOWrapper):
        def isatty(self):
            return False

    monkeypatch.setattr("sys.stdin", Stdin(io.BytesIO(open(path, "rb").read())))
    assert read_lines([], None, "TEXT") == (rows, False)


@SETTINGS
@given(words=st.lists(st.lists(LINE, min_size=1, max_size=1), min_size=1, max_size=5))
def test_language_model_text_ends_one_sentence_per_line(tmp_path, words):
    rows = [w[0] for w in words]
    path = _write(tmp_path / "lm.txt", rows)
    assert read_words(path, lowercase=False).count("<eos>") == len(rows)


@pytest.mark.parametrize("separator", SEPARATORS)
def test_tree_files_keep_a_tree_per_line(tmp_path, separator):
    word = f"good{separator}fun"
    path = _write(tmp_path / "trees.txt", [f"(1 (1 {word}) (0 plot))", "(0 (0 dull) (0 plot))"])
    trees = read_labelled_trees(path)
    assert [t.labels[t.root] for t in trees] == [1, 0]
    assert len(read_ptb_file(path)) == 2


def test_babi_story_lines_stay_lines(tmp_path):
    path = _write(tmp_path / "qa.txt", [
        "1 Mary moved to the\u2028bathroom.",
        "2 John went to the hallway.",
        "3 Where is Mary?\tbathroom\t1",
    ])  # fmt: skip
    [(story, question, answer)] = babi.read_babi(path)
    assert len(story) == 2 and answer == "bathroom"


def test_a_line_that_is_not_utf8_names_the_file_and_line(tmp_path):
    path = tmp_path / "bad.txt"
    path.write_bytes(b"fine\nstill fine\nbad \xff here\n")
    with pytest.raises(ValueError, match=r"bad\.txt, line 3: not UTF-8 text \(byte 0xff"):
        lines.read_lines(str(path))
    with pytest.raises(ValueError, match=r"read_parallel_text: .*bad\.txt, line 3"):
        read_parallel_text(str(path), str(path))
    with pytest.raises(ValueError, match=r"read_words: .*bad\.txt, line 3"):
        read_words(str(path))
    assert os.path.isfile(path)
