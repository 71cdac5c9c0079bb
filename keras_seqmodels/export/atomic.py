"""Exports written atomically: complete or not at all.

Every writer writes into a temporary file (``.tflite``, ``.onnx``) or folder
(a SavedModel) beside its target, in the same folder and so on the same file
system, and moves it into place with one ``os.replace`` once it is complete
(its bytes flushed to disk). A writer that fails, or a process killed in the
middle, leaves the previous file (or nothing) at the target, never a partial
one; what it leaves is a hidden ``.NAME.*.partial*`` beside it, removed on a
failure and left behind only by a killed process.
"""

import contextlib
import os
import shutil
import tempfile

PARTIAL = ".partial"  # the ending of the temporary names


def _temporary_name(path):
    folder = os.path.dirname(os.path.abspath(path)) or "."
    name = os.path.basename(os.path.normpath(path))
    return folder, f".{name}.", PARTIAL


def _sync(path):
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass  # a file system without fsync (some network mounts)
    finally:
        os.close(fd)


@contextlib.contextmanager
def atomic_file(path):
    """Yield a temporary path beside ``path``; once the block ends without an
    error, its file replaces ``path`` in one step (``os.replace``).

    Example:

    >>> import os, tempfile
    >>> target = os.path.join(tempfile.mkdtemp(), "m.onnx")
    >>> with atomic_file(target) as partial:
    ...     with open(partial, "wb") as f:
    ...         _ = f.write(b"complete")
    >>> open(target, "rb").read()
    b'complete'
    """
    folder, prefix, suffix = _temporary_name(path)
    extension = os.path.splitext(path)[1]  # writers that read the ending keep it
    fd, partial = tempfile.mkstemp(prefix=prefix, suffix=suffix + extension, dir=folder)
    os.close(fd)
    try:
        yield partial
        _sync(partial)
        os.replace(partial, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.remove(partial)
        raise


def write_bytes(path, content):
    """``content`` written to ``path`` atomically (``atomic_file``)."""
    with atomic_file(path) as partial:
        with open(partial, "wb") as f:
            f.write(content)
    return path


@contextlib.contextmanager
def atomic_folder(path):
    """Yield an empty temporary folder beside ``path``; once the block ends
    without an error it becomes ``path`` (which must not exist or be empty:
    the writers refuse a folder with files in it before they start)."""
    folder, prefix, suffix = _temporary_name(path)
    partial = tempfile.mkdtemp(prefix=prefix, suffix=suffix, dir=folder)
    try:
        yield partial
        for root, _, files in os.walk(partial):
            for name in files:
                _sync(os.path.join(root, name))
        if os.path.isdir(path) and not os.path.islink(path):
            os.rmdir(path)  # empty (checked by the writer); refuses if not
        os.replace(partial, path)
        os.chmod(path, 0o777 & ~_umask())
    except BaseException:
        shutil.rmtree(partial, ignore_errors=True)
        raise


def _umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask
