"""Every ``seqmodels`` command and sub-command answers ``--help``; the console
script is installed under that name; a wrong command is a one-line usage error."""

import argparse
from importlib import metadata

import pytest
from cli_helpers import run_cli

from keras_seqmodels.cli.main import COMMAND_MODULES, build_parser


def _command_paths(parser, prefix=()):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield prefix + (name,)
                yield from _command_paths(sub, prefix + (name,))


def test_console_script_is_seqmodels():
    scripts = {e.name: e.value for e in metadata.entry_points(group="console_scripts")}
    assert scripts.get("seqmodels") == "keras_seqmodels.cli.main:main"


def test_every_command_has_help():
    paths = list(_command_paths(build_parser()))
    top = {p[0] for p in paths}
    assert {"zoo", "translate", "tag", "sentiment", "generate", "train", "evaluate",
            "export", "plot"} <= top
    assert len(top) >= len(COMMAND_MODULES)
    for path in paths:
        code, out, err = run_cli([*path, "--help"])
        assert code == 0, (path, err)
        assert out.startswith("usage: seqmodels " + " ".join(path)), (path, out[:80])
        assert len(out.splitlines()) >= 3, path  # usage plus a description or options


def test_unknown_command_is_a_usage_error():
    code, _, err = run_cli(["sentimnet", "good"])
    assert code == 2
    assert "invalid choice: 'sentimnet'" in err and "Traceback" not in err


def test_zoo_list_shows_scalar_metrics_only():
    code, out, err = run_cli(["zoo", "list"])
    assert code == 0, err
    rows = out.splitlines()
    assert rows[0].split()[:3] == ["name", "size", "task"]
    assert len(rows) >= 2
    assert "{" not in out  # per-task breakdowns stay in `zoo info`


def test_installed_script_prints_one_error_line(tmp_path):
    """The real console script: a user mistake gives exit 2 and one line on
    standard error, without TensorFlow's start-up lines or a traceback."""
    import shutil
    import subprocess

    script = shutil.which("seqmodels")
    assert script, "the seqmodels console script is not on PATH"
    done = subprocess.run(
        [script, "sentiment", "--file", str(tmp_path / "missing.txt")],
        capture_output=True, text=True, timeout=300,
    )
    assert done.returncode == 2, done.stderr
    assert done.stdout == ""
    assert done.stderr.splitlines() == [
        f"seqmodels sentiment: error: --file: no such file: {tmp_path / 'missing.txt'}"
    ]


def test_tag_file_with_progress_keeps_blank_lines(tmp_path):
    from keras_seqmodels import zoo

    if "ud-ewt-upos" not in zoo.list_models():
        pytest.skip("ud-ewt-upos is not registered")
    path = tmp_path / "in.txt"
    path.write_text("The old man the boats .\n\nI agree .\n", encoding="utf-8")
    out_path = tmp_path / "out.txt"
    code, out, err = run_cli(["tag", "--file", str(path), "--output", str(out_path),
                              "--batch-size", "1"])
    assert code == 0, err
    assert "2/2 sentences" in err
    rows = out_path.read_text(encoding="utf-8").splitlines()
    assert len(rows) == 3 and rows[1] == ""
    assert [p.rsplit("/", 1)[0] for p in rows[2].split()] == ["I", "agree", "."]
    assert rows[2].endswith("./PUNCT")
    code, _, err = run_cli(["tag", "--file", str(tmp_path / "none.txt")])
    assert code == 2 and err.startswith("seqmodels tag: error: --file: no such file")
