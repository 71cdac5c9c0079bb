"""``seqmodels sentiment``: inputs, output shape, polarity and user errors.

The checks do not depend on the exact weights of the shipped sst-treelstm
model (it may be retrained): only strongly positive / negative inputs are
scored, and the rest is structure (one label per input line, in order,
the same label alone and in a batch). The trees were written for this test.
"""

import pytest
from cli_helpers import assert_one_line_error, run_cli

from keras_seqmodels import zoo
from keras_seqmodels.trees import parse_ptb
from keras_seqmodels.trees import text as tree_text

POSITIVE = ("positive", "very positive")
NEGATIVE = ("negative", "very negative")
TREES = [
    ("(4 (2 a) (4 (4 wonderful) (2 film)))", POSITIVE),
    ("(4 (2 the) (4 (4 best) (2 movie)))", POSITIVE),
    ("(0 (2 a) (0 (0 boring) (2 mess)))", NEGATIVE),
    ("(0 (2 the) (0 (0 worst) (2 movie)))", NEGATIVE),
]
SENTENCES = [
    ("A wonderful, beautiful film.", POSITIVE),
    ("The worst movie, a boring mess.", NEGATIVE),
]

needs_model = pytest.mark.skipif(
    "sst-treelstm" not in zoo.list_models(), reason="sst-treelstm is not registered"
)


@pytest.fixture(scope="module")
def shipped():
    return zoo.load("sst-treelstm").model


@pytest.fixture
def cli(shipped, monkeypatch):
    """``run_cli`` with the zoo model loaded once for the module."""
    monkeypatch.setattr(zoo, "load", lambda name: zoo.task.task_class(name)(name, model=shipped))
    return lambda argv, stdin=None: run_cli(argv, stdin, monkeypatch)


def test_tokenize_is_ptb_style():
    assert tree_text.tokenize("It isn't (really) bad... Don't!") == [
        "It", "is", "n't", "-LRB-", "really", "-RRB-", "bad", "...", "Do", "n't", "!",
    ]
    assert tree_text.tokenize("a well-made film's end") == ["a", "well-made", "film", "'s", "end"]
    assert tree_text.tokenize("   ") == []


def test_plain_text_gets_a_balanced_tree_and_trees_are_parsed():
    tree = tree_text.text_to_tree("a gorgeous , witty , seductive movie .")
    assert [tree.tokens[i] for i in tree.leaves] == "a gorgeous , witty , seductive movie .".split()
    assert tree.depth() == 3  # ceil(log2 8)
    assert tree.max_arity == 2
    bracketed = "(3 (2 good) (4 (3 fun) (2 film)))"
    parsed = tree_text.text_to_tree("  " + bracketed)
    assert parsed.children == parse_ptb(bracketed).children
    # --input-format text reads a leading "(" as a word.
    forced = tree_text.text_to_tree("(really) good", input_format="text")
    assert [forced.tokens[i] for i in forced.leaves] == ["-LRB-", "really", "-RRB-", "good"]


def test_help_says_plain_text_is_less_accurate():
    code, out, _ = run_cli(["sentiment", "--help"])
    assert code == 0
    text = " ".join(out.split())
    assert "balanced binary tree" in text and "less accurate" in text


@needs_model
def test_polarity_of_strong_trees_and_sentences(cli):
    inputs = TREES + SENTENCES
    code, out, err = cli(["sentiment", *[text for text, _ in inputs]])
    assert code == 0, err
    labels = out.splitlines()
    assert len(labels) == len(inputs)
    for label, (text, allowed) in zip(labels, inputs):
        assert label in allowed, (text, label)


@needs_model
def test_file_with_progress_keeps_order_and_blank_lines(cli, tmp_path):
    lines = [t for t, _ in TREES] + [""] + [s for s, _ in SENTENCES]
    path = tmp_path / "in.txt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out_path = tmp_path / "labels.txt"
    code, out, err = cli(["sentiment", "--file", str(path), "--output", str(out_path),
                          "--batch-size", "2", "--probabilities"])
    assert code == 0, err
    assert out == ""
    assert "6/6 sentences" in err  # the progress bar (blank line not counted)
    rows = out_path.read_text(encoding="utf-8").splitlines()
    assert len(rows) == len(lines) and rows[len(TREES)] == ""
    # Batched (sorted by size inside) == each input alone, in input order.
    for line, row in zip(lines, rows):
        if not line:
            continue
        label, probs = row.split("\t")
        values = [float(v) for v in probs.split()]
        assert len(values) == 5 and abs(sum(values) - 1) < 0.01
        assert tree_text.SST_LABELS[max(range(5), key=values.__getitem__)] == label
        code, alone, _ = cli(["sentiment", line])
        assert alone.strip() == label, line


@needs_model
def test_stdin(cli):
    code, out, err = cli(["sentiment"], stdin=TREES[0][0] + "\n" + TREES[2][0] + "\n")
    assert code == 0, err
    first, second = out.splitlines()
    assert first in POSITIVE and second in NEGATIVE


@needs_model
def test_malformed_tree_is_one_line_with_its_position(cli, tmp_path):
    code, _, err = cli(["sentiment", "fine", "(4 (2 a) (4 wonderful) (2 film)"])
    assert_one_line_error(code, err, "argument 2", "unbalanced brackets", "length 31")
    path = tmp_path / "bad.txt"
    path.write_text("(3 (2 good) (4 fun))\n(3 (2 good) (4))\n", encoding="utf-8")
    code, _, err = cli(["sentiment", "--file", str(path)])
    assert_one_line_error(code, err, f"{path} line 2", "missing child", "position 14")


def test_user_errors_are_one_line(tmp_path, monkeypatch):
    code, _, err = run_cli(["sentiment", "--file", str(tmp_path / "none.txt")])
    assert_one_line_error(code, err, "--file", "none.txt")
    code, _, err = run_cli(["sentiment", "--model", "no-such-model", "good"])
    assert_one_line_error(code, err, "unknown model 'no-such-model'")
    code, _, err = run_cli(["sentiment", "--model-path", str(tmp_path / "m.keras"), "good"])
    assert_one_line_error(code, err, "--model-path", "m.keras")
    code, _, err = run_cli(["sentiment", "--batch-size", "0", "good"])
    assert_one_line_error(code, err, "--batch-size")
    code, _, err = run_cli(["sentiment", "--input-format", "xml", "good"])
    assert code == 2 and "invalid choice" in err and "Traceback" not in err


def test_docstring_examples_run():
    import doctest

    from keras_seqmodels.trees import text

    result = doctest.testmod(text, optionflags=doctest.ELLIPSIS)
    assert result.attempted >= 3 and result.failed == 0
