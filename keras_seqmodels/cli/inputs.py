"""Where a command's input lines come from (arguments, --file or stdin) and
where its output lines go (--output or stdout)."""

import os
import sys
import time

from keras_seqmodels.data import lines as line_text
from keras_seqmodels.utils.errors import UserError


def read_lines(texts, path, example):
    """Return ``(lines, from_file)`` for a command that reads sentences.

    Args:
        texts: the positional arguments (used when given).
        path: the ``--file`` value, or None.
        example: a sample input for the one-line error shown when there is
            nothing to read (no arguments, no file, and a terminal on stdin).

    Returns:
        The input lines and whether they came from a file (which gets a
        progress bar).

    Example:
        >>> read_lines(["A man is riding a bicycle."], None, "A man.")
        (['A man is riding a bicycle.'], False)
    """

    if texts:
        return list(texts), False
    if path:
        if not os.path.isfile(path):
            raise UserError(f"--file: no such file: {path}")
        # Lines end at "\n" only, so output lines stay one-to-one with the
        # file's (keras_seqmodels.data.lines).
        try:
            return line_text.read_lines(path, "--file"), True
        except ValueError as err:
            raise UserError(f"{err}, one sentence per line") from None
    if sys.stdin.isatty():
        raise UserError(f"give {example}, --file FILE, or lines on standard input")
    data = sys.stdin.buffer.read() if hasattr(sys.stdin, "buffer") else sys.stdin.read()
    if isinstance(data, str):  # a text stream without bytes (a test's StringIO)
        return line_text.split_lines(data), False
    try:
        return line_text.decode_lines(data, "standard input"), False
    except ValueError as err:
        raise UserError(f"{err}, one sentence per line") from None


def write_lines(lines, path=None):
    """Write ``lines``, one per line, to the ``--output`` file or stdout.

    Args:
        lines: the output strings, in input order.
        path: the ``--output`` value (UTF-8), or None for standard output.

    Example:
        >>> write_lines(["Ein Mann fährt Fahrrad."])
        Ein Mann fährt Fahrrad.
    """
    text = "\n".join(lines) + "\n"
    if path:
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
    else:
        sys.stdout.write(text)


class Progress:
    """A one-line progress bar on standard error."""

    def __init__(self, total, stream=sys.stderr, width=30):
        self.total, self.done, self.stream, self.width = total, 0, stream, width
        self.start = time.time()

    def __call__(self, n):
        self.done += n
        frac = self.done / max(self.total, 1)
        filled = int(self.width * frac)
        rate = self.done / max(time.time() - self.start, 1e-9)
        self.stream.write(
            f"\r[{'#' * filled}{'.' * (self.width - filled)}] "
            f"{self.done}/{self.total} sentences, {rate:.1f}/s"
        )
        if self.done >= self.total:
            self.stream.write("\n")
        self.stream.flush()
