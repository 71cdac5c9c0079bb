"""Run ``seqmodels`` in-process and check what users see."""

import struct
from contextlib import redirect_stderr, redirect_stdout
from io import StringIO

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def run_cli(argv, stdin=None, monkeypatch=None):
    """``(exit code, stdout, stderr)`` of ``seqmodels ARGV``."""
    from keras_seqmodels.cli.main import main

    if stdin is not None:
        monkeypatch.setattr("sys.stdin", StringIO(stdin))
    out, err = StringIO(), StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exit_:  # argparse: --help, bad arguments
            code = exit_.code
    return code, out.getvalue(), err.getvalue()


def assert_one_line_error(code, err, *fragments):
    """Exit code 2 and one ``seqmodels ...: error: ...`` line naming the fragments."""
    assert code == 2, (code, err)
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    assert "Traceback" not in err
    assert lines[0].startswith("seqmodels ") and ": error: " in lines[0], lines[0]
    for fragment in fragments:
        assert fragment in lines[0], (fragment, lines[0])


def png_size(path):
    """``(width, height)`` of a PNG file; fails unless it is a valid PNG."""
    with open(path, "rb") as f:
        head = f.read(33)
    assert head[:8] == PNG_SIGNATURE, head[:8]
    assert head[12:16] == b"IHDR"
    width, height = struct.unpack(">II", head[16:24])
    return width, height
