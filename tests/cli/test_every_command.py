"""Every ``seqmodels`` command and sub-command answers ``--help``; the console
script is installed under that name; a wrong command is a one-line usage error."""

import argparse
from importlib import metadata

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
