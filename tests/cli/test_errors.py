"""Every failure of ``seqmodels`` is one line on standard error and a non-zero
exit status (2: usage, 1: anything else); the traceback only with --debug."""

import pytest
from cli_helpers import assert_one_line_error, run_cli

BINARY = b"\xff\xfe\x00\x81 not text \xc3\x28\n"


@pytest.fixture
def binary_file(tmp_path):
    path = tmp_path / "binary.txt"
    path.write_bytes(BINARY)
    return str(path)


@pytest.fixture
def garbage_keras(tmp_path):
    path = tmp_path / "garbage.keras"
    path.write_bytes(b"PK\x03\x04 this is not a zip archive")
    return str(path)


@pytest.mark.parametrize("command", ["translate", "tag", "sentiment"])
def test_binary_file_is_one_line(command, binary_file):
    code, out, err = run_cli([command, "--file", binary_file])
    assert_one_line_error(code, err, f"seqmodels {command}: error: --file:", binary_file,
                          ", line 1: not UTF-8 text (byte 0xff at column 1)")
    assert out == ""


def test_binary_standard_input_is_one_line(monkeypatch):
    import io

    stdin = io.TextIOWrapper(io.BytesIO(BINARY), encoding="utf-8")
    monkeypatch.setattr("sys.stdin", stdin)
    code, _, err = run_cli(["tag"])
    assert_one_line_error(code, err, "standard input, line 1: not UTF-8 text")


def test_binary_training_log_is_one_line(binary_file, tmp_path):
    code, _, err = run_cli(["plot", "curves", binary_file, "-o", str(tmp_path / "c.png")])
    assert_one_line_error(code, err, "seqmodels plot curves: error:", binary_file, "UTF-8")


def test_garbage_model_path_in_tag(garbage_keras):
    code, _, err = run_cli(["tag", "--model-path", garbage_keras, "A sentence ."])
    assert_one_line_error(code, err, "--model-path: cannot load", garbage_keras)


def test_garbage_keras_file_in_export(garbage_keras, tmp_path):
    target = tmp_path / "out"
    code, _, err = run_cli(["export", garbage_keras, str(target)])
    assert_one_line_error(code, err, "seqmodels export: error: cannot load", garbage_keras)
    assert not target.exists()


@pytest.mark.parametrize(
    "argv, fragment",
    [
        (["translate", "--batch-size", "0", "Hi ."], "argument --batch-size: must be an "
         "integer >= 1; got '0'"),
        (["translate", "--beam", "0", "Hi ."], "argument --beam: must be an integer from 1 "
         "to 64; got '0'"),
        (["translate", "--beam", "10000", "Hi ."], "from 1 to 64; got '10000'"),
        (["translate", "--beam", "two", "Hi ."], "from 1 to 64; got 'two'"),
        (["export", "multi30k-en-de", "out", "--beam", "0"], "argument --beam: must be"),
        (["tag", "--batch-size", "-3", "Hi ."], "argument --batch-size"),
        (["sentiment", "--batch-size", "0", "good"], "argument --batch-size"),
        (["generate", "ptb-lstm", "--length", "0"], "argument --length: must be an "
         "integer from 1 to"),
        (["generate", "ptb-lstm", "--temperature", "0"], "argument --temperature: must be "
         "a number > 0"),
        (["generate", "ptb-lstm", "--temperature", "nan"], "argument --temperature"),
        (["generate", "ptb-lstm", "--seed", "-1"], "argument --seed"),
        (["plot", "ntm", "--length", "0"], "argument --length"),
        (["plot", "ntm", "--length", "100000"], "argument --length"),
    ],
)
def test_numeric_options_are_range_checked(argv, fragment):
    code, out, err = run_cli(argv)
    assert_one_line_error(code, err, fragment, "--help")
    assert out == ""


def test_usage_errors_are_one_line():
    for argv, prefix in (([], "seqmodels: error: the following arguments are required"),
                         (["translate", "--nonsense"], "seqmodels: error: "
                          "unrecognized arguments: --nonsense"),
                         (["zoo"], "seqmodels zoo: error: the following arguments")):
        code, _, err = run_cli(argv)
        assert code == 2
        assert len(err.splitlines()) == 1 and err.startswith(prefix), err


def _failing_command(exception):
    def run(args):
        raise exception

    return run


def test_unexpected_failure_is_one_line_exit_1(monkeypatch, tmp_path):
    from keras_seqmodels.cli import tag_commands

    model = tmp_path / "tagger.keras"
    model.write_bytes(b"")
    monkeypatch.setattr(
        tag_commands, "_run", _failing_command(RuntimeError("the graph failed\n  at node X"))
    )
    code, out, err = run_cli(["tag", "--model-path", str(model), "A ."])
    assert code == 1
    lines = err.splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    assert lines[0] == (
        f"seqmodels tag: error: RuntimeError: the graph failed at node X (input: {model}); "
        "run again with --debug for the traceback"
    )
    # --debug, before or after the command: the traceback, then the same line.
    for argv in (["--debug", "tag", "A ."], ["tag", "--debug", "A ."]):
        code, _, err = run_cli(argv)
        assert code == 1
        assert err.startswith("Traceback (most recent call last)"), err[:200]
        assert err.splitlines()[-1].startswith("seqmodels tag: error: RuntimeError: the graph")


def test_missing_optional_dependency_names_the_package(monkeypatch):
    from keras_seqmodels.cli import zoo_commands

    err_ = ModuleNotFoundError("No module named 'sacrebleu'", name="sacrebleu")
    monkeypatch.setattr(zoo_commands, "_list", _failing_command(err_))
    code, _, err = run_cli(["zoo", "list"])
    assert code == 2
    assert err.splitlines() == [
        "seqmodels zoo list: error: this command needs the Python package 'sacrebleu': "
        "pip install sacrebleu"
    ]


def test_garbage_model_in_evaluate(garbage_keras):
    """A recipe run in-process (mnist-renet): whatever it raises is one line."""
    from keras_seqmodels import zoo

    if "mnist-renet" not in zoo.list_models():
        pytest.skip("mnist-renet is not registered")
    code, _, err = run_cli(["evaluate", "mnist-renet", "--model", garbage_keras])
    assert code in (1, 2), (code, err)
    # Progress lines ("mnist-renet: loading ...") may come first; the error is
    # one line, the last.
    lines = [line for line in err.splitlines() if line.strip()]
    assert "Traceback" not in err, err
    assert [line for line in lines if "error" in line] == lines[-1:], err
    assert lines[-1].startswith("seqmodels evaluate: error: ")
    assert all(line.startswith("mnist-renet: ") for line in lines[:-1]), err


def test_export_into_a_non_empty_folder_is_a_usage_error(tmp_path):
    (tmp_path / "keep.txt").write_text("user data\n")
    code, _, err = run_cli(["export", "ntm-copy", str(tmp_path)])
    assert code == 2, err
    assert len(err.splitlines()) == 1 and "is not empty" in err, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["keep.txt"]


def test_debug_after_a_recipes_own_options_prints_the_traceback(tmp_path):
    # `seqmodels train NAME ... --debug`: the recipe's options are handed on
    # unparsed, so --debug there must still switch the traceback on.
    missing = tmp_path / "nowhere"
    argv = ["train", "mnist-renet", "--data-dir", str(missing), "--epochs", "1"]
    code, _, err = run_cli(argv)
    assert code == 2 and "Traceback" not in err, err
    for debug_argv in (["--debug", *argv], [*argv, "--debug"], [argv[0], "--debug", *argv[1:]]):
        code, _, err = run_cli(debug_argv)
        assert code == 2, err
        assert err.startswith("Traceback (most recent call last)"), err[:300]
        assert err.splitlines()[-1] == run_cli(argv)[2].splitlines()[-1]


def test_debug_after_a_double_dash_is_input_not_an_option():
    from keras_seqmodels.cli.main import _take_debug

    assert _take_debug(["tag", "--", "--debug"]) == (["tag", "--", "--debug"], False)
    assert _take_debug(["tag", "--debug", "x"]) == (["tag", "x"], True)
