"""Line-oriented text, read the way line-aligned data needs: lines end at
``"\\n"`` (or ``"\\r\\n"``) and nowhere else.

Python's ``str.splitlines()`` and its text files (universal newlines) also
break at ``"\\r"``, U+2028, U+2029, U+0085, U+000B, U+000C, U+001C-U+001E; in
a parallel corpus, a treebank or a file of sentences one such character
inside a line shifts every later line against its partner, silently, and
``wc -l`` disagrees with the program. Every reader of line data in the
package goes through ``iter_lines`` / ``read_lines`` / ``split_lines``, which
agree with ``wc -l``: line i of the file is line i of the result.

Files are read as bytes, one line at a time (memory grows with the longest
line, not with the file), and each line is decoded as UTF-8; a line that is
not UTF-8 is a ``ValueError`` naming the file, the line and the byte.
"""


def split_lines(text):
    """The lines of ``text``: split at ``"\\n"`` only, a ``"\\r"`` before it
    dropped, no empty last line for a final newline.

    Example:

    >>> split_lines("a\\u2028b\\r\\nc\\x0cd\\n\\ne\\n")
    ['a\\u2028b', 'c\\x0cd', '', 'e']
    """
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def _decoded(raw, path, lineno, caller):
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as err:
        where = f"{caller}: " if caller else ""
        raise ValueError(
            f"{where}{path}, line {lineno}: not UTF-8 text (byte 0x{raw[err.start]:02x} at "
            f"column {err.start + 1}); give a UTF-8 text file"
        ) from None


def iter_lines(path, caller=None, opener=open, max_line_bytes=None):
    """Yield the lines of a UTF-8 text file, one at a time (see the module).

    Args:
        path: the file.
        caller: a name for messages (``"read_parallel_text"``), or None.
        opener: ``open`` or ``gzip.open`` (called as ``opener(path, "rb")``).
        max_line_bytes: the longest line allowed (bytes, without its line
            end), or None for no limit; a longer line is refused after
            reading at most this many bytes of it, so memory stays bounded
            by it whatever the file holds.

    Yields:
        ``str`` lines without their ``"\\n"`` / ``"\\r\\n"``.

    Raises:
        ValueError: a line that is not UTF-8 (file, line and byte named), or
            one longer than ``max_line_bytes`` (file, line and limit named).

    Example:

    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "x.txt")
    >>> _ = open(path, "wb").write("a\\u2028b\\r\\nc\\n".encode())
    >>> list(iter_lines(path))
    ['a\\u2028b', 'c']
    """
    if max_line_bytes is None:
        with opener(path, "rb") as f:
            for lineno, raw in enumerate(f, 1):  # binary files split at b"\n" only
                if raw.endswith(b"\n"):
                    raw = raw[:-2] if raw.endswith(b"\r\n") else raw[:-1]
                yield _decoded(raw, path, lineno, caller)
        return
    with opener(path, "rb") as f:
        lineno = 0
        while True:
            raw = f.readline(max_line_bytes + 2)  # room for the "\r\n"
            if not raw:
                return
            lineno += 1
            if raw.endswith(b"\n"):
                raw = raw[:-2] if raw.endswith(b"\r\n") else raw[:-1]
            if len(raw) > max_line_bytes:
                where = f"{caller}: " if caller else ""
                raise ValueError(
                    f"{where}{path}, line {lineno}: longer than {max_line_bytes:,} bytes "
                    "(the limit on one line of this kind of file); is it the right file?"
                )
            yield _decoded(raw, path, lineno, caller)


def read_lines(path, caller=None, opener=open, max_line_bytes=None):
    """``list(iter_lines(path, caller, opener, max_line_bytes))``."""
    return list(iter_lines(path, caller, opener, max_line_bytes))


def decode_lines(data, source, caller=None):
    """The lines of UTF-8 ``bytes`` (standard input read whole), as ``iter_lines``
    splits a file; ``source`` names it in messages (``"standard input"``)."""
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    return [
        _decoded(raw[:-1] if raw.endswith(b"\r") else raw, source, lineno, caller)
        for lineno, raw in enumerate(lines, 1)
    ]
