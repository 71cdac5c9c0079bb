"""The example sessions of docs/cli.md (``    $ seqmodels ...`` followed by what
it prints) are what the command prints today."""

import os
import re
import shlex
from contextlib import redirect_stderr, redirect_stdout
from io import StringIO

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SESSION = re.compile(r"^    \$ (seqmodels .+)\n((?:    (?!\$ ).*\n)+)", re.M)


def run_cli(argv):
    from keras_seqmodels.cli.main import main

    out, err = StringIO(), StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exit_:  # argparse's usage errors
            code = exit_.code
    return code, out.getvalue(), err.getvalue()


def _sessions():
    with open(os.path.join(ROOT, "docs", "cli.md"), encoding="utf-8") as f:
        return [(m.group(1), m.group(2)) for m in SESSION.finditer(f.read())]


def test_cli_md_sessions_print_what_the_page_shows(tmp_path, monkeypatch):
    sessions = _sessions()
    assert len(sessions) >= 2
    monkeypatch.chdir(tmp_path)
    (tmp_path / "photo.jpg").write_bytes(b"\xff\xd8\xff\xe0 JFIF")  # the start of a JPEG
    for command, shown in sessions:
        code, out, err = run_cli(shlex.split(command)[1:])
        expected = "\n".join(line[4:] for line in shown.rstrip("\n").split("\n"))
        assert code != 0, command
        assert (out + err).strip() == expected, command
