"""Adding a trained model to the zoo (used by the recipes).

The artifact and its assets are copied into ``<zoo dir>/<name>/`` (the source
tree's ``zoo/``, or ``$KERAS_SEQMODELS_ZOO_DIR`` when set); the package's
``index.json`` records their SHA-256.
"""

import contextlib
import json
import os
import shutil
import tempfile
import time
import warnings

from keras_seqmodels.zoo.api import CHECKOUT_ZOO_DIR, ENV_DIR, INDEX_PATH, sha256_of

try:
    import fcntl
except ImportError:  # not POSIX
    fcntl = None

LOCK_TIMEOUT_S = 120.0
# Fields of a model card that a new registration keeps unless it gives them.
CARD_FIELDS = ("domain", "license", "intended_use", "limits")
# What the model is and takes, true of any artifact trained for the same name:
# kept from the previous entry with the card fields.
SIGNATURE_FIELDS = ("inputs", "outputs")


def target_dir(name):
    """The folder ``register_model`` writes ``name``'s files into.

    Raises:
        FileNotFoundError: no ``$KERAS_SEQMODELS_ZOO_DIR`` and not a source checkout.
    """
    root = os.environ.get(ENV_DIR)
    if not root:
        if not os.path.isdir(CHECKOUT_ZOO_DIR):
            raise FileNotFoundError(
                f"register_model: no source checkout's zoo/ at {CHECKOUT_ZOO_DIR}; register "
                f"from a checkout, or set {ENV_DIR} to the folder to write into"
            )
        root = CHECKOUT_ZOO_DIR
    return os.path.join(root, name)


def _atomic_write_text(path, text):
    directory = os.path.dirname(path)
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=".tmp-")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)  # mkstemp makes files private; package data must be readable
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise


@contextlib.contextmanager
def index_lock(index_path, timeout=None):
    """Hold the zoo index's lock for a read-modify-write of ``index_path``.

    Two recipes registering at once would otherwise each read the index, add
    their entry and write it back, and the later write would drop the other's
    entry. On POSIX the lock is ``fcntl.flock`` on ``<index>.lock`` (released
    by the kernel if the process dies, so it never goes stale); elsewhere it is
    a directory ``<index>.lockdir`` created atomically and removed on release.

    Raises:
        TimeoutError: the lock was not obtained within ``timeout`` seconds
            (default ``LOCK_TIMEOUT_S``); the message names the lock's path.
    """
    timeout = LOCK_TIMEOUT_S if timeout is None else timeout
    deadline = time.monotonic() + timeout
    if fcntl is not None:
        path = index_path + ".lock"
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() > deadline:
                        raise TimeoutError(
                            f"zoo registry: another process has held the index lock {path!r} "
                            f"for more than {timeout:g} s; is a register still running?"
                        ) from None
                    time.sleep(0.05)
            try:
                yield
            finally:
                fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)
        return
    path = index_path + ".lockdir"
    while True:
        try:
            os.mkdir(path)
            break
        except FileExistsError:
            if time.monotonic() > deadline:
                raise TimeoutError(
                    f"zoo registry: the index lock {path!r} has existed for more than "
                    f"{timeout:g} s; if no register is running (a killed run leaves it), "
                    "remove that directory."
                ) from None
            time.sleep(0.05)
    try:
        yield
    finally:
        os.rmdir(path)


def register_model(name, artifact, task, metrics, data, command, card, extra=None, assets=None):
    """Copy ``artifact`` into ``zoo/<name>/`` and record it in the zoo index.

    The copy and the index update are atomic (write to a temporary file, then
    rename), so a killed run never leaves a half-written artifact in place, and
    both happen under the index lock (``index_lock``), so processes registering
    at once keep each other's entries.

    Args:
        name: zoo name (the ``ModelSpec.name`` of its folder).
        artifact: path of the trained ``.keras`` file.
        task: one line describing the task.
        metrics: dict of test-set metrics, e.g. ``{"test_upos_accuracy": 0.955}``.
        data: the data set and split.
        command: the exact command that measured the metrics.
        card: path of the card, relative to the repository root.
        extra: optional dict of further fields (training time, machine, ...).
        assets: optional dict ``{key: path}`` of files shipped beside the
            model (a vocabulary); copied under their base name beside the
            artifact and recorded with their SHA-256 (read back with
            ``zoo.read_asset``).

    Returns:
        The model's new entry in the zoo index (a dict).

    The entry keeps the previous entry's card fields (``domain``,
    ``license``, ``intended_use``, ``limits``) and its description of the
    inputs and outputs (``inputs``, ``outputs``) unless ``extra`` gives them.
    The previous entry's other fields described the artifact this one
    replaces (how it was trained, its parameter count, its dev figures):
    they are not carried over, and a warning names each one ``extra`` did
    not give again, so a stale figure is never shipped with a new file.

    Example (writes into the source tree, so not run here):

    >>> register_model(  # doctest: +SKIP
    ...     "my-tagger", "runs/my-tagger/best.keras", task="UPOS tagging",
    ...     metrics={"test_upos_accuracy": 0.9454}, data="UD English EWT, test",
    ...     command="seqmodels evaluate my-tagger --split test --register",
    ...     card="zoo/my-tagger/card.md")
    """
    os.makedirs(target_dir(name), exist_ok=True)
    with index_lock(INDEX_PATH):
        return _register_locked(name, artifact, task, metrics, data, command, card, extra, assets)


def _copy_atomic(source, directory, filename):
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=".tmp-")
    os.close(fd)
    try:
        shutil.copyfile(source, tmp)
        os.chmod(tmp, 0o644)  # mkstemp makes files private; artifacts must be readable
        os.replace(tmp, os.path.join(directory, filename))
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)
    return os.path.join(directory, filename)


def _register_locked(name, artifact, task, metrics, data, command, card, extra, assets):
    directory = target_dir(name)
    filename = f"{name}.keras"
    path = _copy_atomic(artifact, directory, filename)
    recorded_assets = {}
    for key, source in (assets or {}).items():
        asset_name = os.path.basename(source)
        target = _copy_atomic(source, directory, asset_name)
        recorded_assets[key] = {"file": asset_name, "sha256": sha256_of(target)}
    with open(INDEX_PATH, encoding="utf-8") as f:
        index = json.load(f)
    previous = index.get(name, {})
    kept = {k: previous[k] for k in CARD_FIELDS + SIGNATURE_FIELDS if k in previous}
    index[name] = dict(
        kept,
        task=task,
        artifact=filename,
        sha256=sha256_of(path),
        size_bytes=os.path.getsize(path),
        metrics=metrics,
        data=data,
        command=command,
        card=card,
        assets=recorded_assets,
    )
    index[name].update(extra or {})
    dropped = sorted(set(previous) - set(index[name]))
    if dropped:
        warnings.warn(
            f"zoo registry: {name}: the previous entry's fields {', '.join(dropped)} "
            "described the artifact this one replaces and are not carried over; "
            "give them again in `extra` where they still hold.",
            stacklevel=3,
        )
    _atomic_write_text(INDEX_PATH, json.dumps(index, indent=2, sort_keys=True) + "\n")
    return index[name]
