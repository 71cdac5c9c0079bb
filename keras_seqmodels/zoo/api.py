"""Loading API of the zoo: list, describe, find and load the trained models.

``index.json`` beside this file (part of the package, a few kB) records each
model's artifact and assets with their SHA-256, its task, data and data
license, metrics, intended use and known limits. The artifacts themselves
(tens of MB) are not in the Python package; each lives in the source tree's
``zoo/<name>/`` beside its card. ``artifact_path`` / ``load`` find a model's
file, first hit wins:

1. in the folder named by the environment variable ``KERAS_SEQMODELS_ZOO_DIR``
   (laid out as the source tree's ``zoo/``: ``<dir>/<name>/<file>``);
2. in the source checkout's ``zoo/`` (an editable install, ``pip install -e .``);
3. in the download cache (``KERAS_SEQMODELS_CACHE_DIR``, default
   ``~/.cache/keras_seqmodels``), downloaded there once from the mirror
   ``KERAS_SEQMODELS_ZOO_URL`` (``<url>/<name>/<file>``, e.g.
   ``https://...``  or ``file:///srv/zoo``) by ``keras.utils.get_file`` with
   the SHA-256 check.

Whatever the source, ``load`` reads the file once, checks the SHA-256 of the
bytes it read, and builds the model from those same bytes (a private copy),
in Keras safe mode.

Listing and describing (``list_models``, ``info``) import neither Keras nor
TensorFlow.
"""

import hashlib
import io
import json
import os
import zipfile

ZOO_DIR = os.path.dirname(os.path.abspath(__file__))
INDEX_PATH = os.path.join(ZOO_DIR, "index.json")
# The source tree's zoo/ (exists in a checkout, i.e. an editable install).
CHECKOUT_ZOO_DIR = os.path.join(os.path.dirname(os.path.dirname(ZOO_DIR)), "zoo")
ENV_DIR = "KERAS_SEQMODELS_ZOO_DIR"
ENV_URL = "KERAS_SEQMODELS_ZOO_URL"
ENV_CACHE = "KERAS_SEQMODELS_CACHE_DIR"


class ArtifactError(ValueError):
    """An artifact is missing, corrupt, or does not match its checksum."""


def _index():
    with open(INDEX_PATH, encoding="utf-8") as f:
        return json.load(f)


def list_models():
    """Names of the models in the zoo, sorted.

    Returns:
        A sorted list of strings.

    Example:

    >>> from keras_seqmodels.zoo.models import specs
    >>> set(list_models()) <= set(specs())  # each registered model has its folder
    True
    """
    return sorted(_index())


class NotShippedError(KeyError):
    """A zoo model declared recipe-only (``ModelSpec(shipped=False)``): it can
    be trained (``seqmodels train NAME``) but ships no trained file."""

    def __str__(self):
        return str(self.args[0]) if self.args else ""


def check_shipped(name):
    """Raise ``NotShippedError`` if ``name``'s spec declares it recipe-only
    (``ModelSpec(shipped=False)``); anything else passes."""
    from keras_seqmodels.zoo.models import specs

    spec = specs().get(name)
    if spec is not None and not spec.shipped:
        raise NotShippedError(
            f"{name} ships no trained file; train it with `seqmodels train {name}` and pass --model"
        )


def _entry(name):
    index = _index()
    if name not in index:
        check_shipped(name)
        known = ", ".join(sorted(index)) or "(none)"
        raise KeyError(f"keras_seqmodels.zoo: unknown model {name!r}. Known models: {known}")
    return index[name]


def info(name):
    """The model card as data.

    Args:
        name: a name from ``list_models()``.

    Returns:
        A dict with ``name``, ``task``, ``domain``, ``data`` (data set and
        split), ``license`` (of the training data), ``metrics`` (test-set
        figures), ``intended_use``, ``limits`` (known limits), ``command``
        (the one that measured the metrics), ``card`` (path of the card in
        the source tree), ``artifact``, ``sha256``, ``size_bytes``,
        ``assets`` (files beside the model, e.g. a vocabulary) and any
        recipe-specific fields (training time, machine).

    Raises:
        KeyError: unknown name (the message lists the known models).

    Example:

    >>> name = list_models()[0]
    >>> card = info(name)
    >>> card["card"] == f"zoo/{name}/card.md", sorted(card["metrics"]) != []
    (True, True)
    """
    entry = dict(_entry(name), name=name)
    entry.setdefault("assets", {})
    return entry


def cache_dir():
    """The download cache: ``$KERAS_SEQMODELS_CACHE_DIR`` or ``~/.cache/keras_seqmodels``."""
    return os.environ.get(ENV_CACHE) or os.path.join(
        os.path.expanduser("~"), ".cache", "keras_seqmodels"
    )


def search_dirs():
    """The local folders searched for artifacts, in order (see the module doc).

    Returns:
        A list of existing folders laid out as ``<folder>/<name>/<file>``.
    """
    dirs = [os.environ.get(ENV_DIR), CHECKOUT_ZOO_DIR, cache_dir()]
    return [d for d in dirs if d and os.path.isdir(d)]


def _plain(value, what, name):
    """``value`` if it is one plain file or folder name, else an ``ArtifactError``."""
    bad = (
        not isinstance(value, str)
        or value in ("", ".", "..")
        or "/" in value
        or "\\" in value
        or "\0" in value
        or os.path.isabs(value)
    )
    if bad:
        raise ArtifactError(
            f"keras_seqmodels.zoo: the index names the {what} of {name!r} as {value!r}; "
            "expected a plain file name inside the model's folder"
        )
    return value


def _locate(name, filename, sha256, what="artifact"):
    """Path of ``<name>/<filename>``: a local copy, else downloaded into the cache.

    A local copy may be a symbolic link to a file anywhere (a shared cache
    keeps files that way): what is trusted is the bytes, whose size and
    SHA-256 ``read_verified`` checks against the index, not where they lie.
    Only regular files count (``os.path.isfile`` follows the link), so a link
    to a device or a pipe is "not found" rather than read."""
    _plain(name, "folder", name)
    _plain(filename, what, name)
    base = os.environ.get(ENV_URL)
    local = search_dirs()
    if base and cache_dir() in local:
        local.remove(cache_dir())  # get_file checks the cached copy, re-downloads if stale
    for root in local:
        path = os.path.join(root, name, filename)
        if os.path.isfile(path):
            return path
    where = ", ".join(os.path.join(d, name) for d in search_dirs()) or "(no folder)"
    if not base:
        raise ArtifactError(
            f"keras_seqmodels.zoo: {what} of {name!r} not found ({filename}; looked in {where}). "
            f"Run from a source checkout, set {ENV_DIR} to a folder holding "
            f"{name}/{filename}, or set {ENV_URL} to a mirror to download it from."
        )
    import keras

    origin = f"{base.rstrip('/')}/{name}/{filename}"
    try:
        os.makedirs(cache_dir(), exist_ok=True)  # else get_file falls back to /tmp/.keras
        return keras.utils.get_file(
            fname=filename,
            origin=origin,
            file_hash=sha256,
            hash_algorithm="sha256",
            cache_dir=cache_dir(),
            cache_subdir=name,
        )
    except Exception as err:  # a failed or corrupt download: name what and where
        bad = os.path.join(cache_dir(), name, filename)
        if os.path.isfile(bad):
            os.remove(bad)  # get_file keeps a download that failed its check
        raise ArtifactError(
            f"keras_seqmodels.zoo: {what} of {name!r} ({filename}) not found locally ({where}) "
            f"and could not be downloaded from {origin}: {err}"
        ) from err


def artifact_path(name):
    """Path of a model's artifact (found or downloaded; not checked, ``load`` checks it).

    Args:
        name: a name from ``list_models()``.

    Returns:
        The absolute path of the ``.keras`` file.

    Raises:
        KeyError: unknown name.
        ArtifactError: not found and no mirror to download it from.

    Example:

    >>> import os
    >>> name = list_models()[0]
    >>> os.path.basename(artifact_path(name)) == f"{name}.keras"
    True
    """
    entry = _entry(name)
    return _locate(name, entry["artifact"], entry["sha256"])


# Largest file the resolver reads when the index records no size (assets).
MAX_ASSET_BYTES = 256 << 20
# Largest artifact, whatever the index records.
MAX_ARTIFACT_BYTES = 2 << 30


def read_verified(path, expected_sha256, what, size_bytes=None):
    """The bytes of ``path``, read once, after checking their size and SHA-256.

    The size is checked first, on the open file (``fstat``, a symbolic link
    followed), against ``size_bytes`` (what the index records) or, without
    one, ``MAX_ASSET_BYTES``; a larger file is refused before a byte of it is
    read, and no more than the allowed size is ever read. The caller uses the
    returned bytes, never the path again, so a file replaced after this read
    cannot be used unchecked.

    Raises:
        ArtifactError: missing file, wrong size or checksum mismatch
            (``what`` names it).
    """
    try:
        with open(path, "rb") as f:
            actual_size = os.fstat(f.fileno()).st_size
            if size_bytes is not None:
                limit = min(int(size_bytes), MAX_ARTIFACT_BYTES)
                if actual_size != size_bytes:
                    raise ArtifactError(
                        f"keras_seqmodels.zoo: refusing {what}: {path} is {actual_size:,} "
                        f"bytes, but the zoo index records {size_bytes:,}; the file was not "
                        "read. Restore it (git checkout, or delete it from the download cache)."
                    )
                if actual_size > MAX_ARTIFACT_BYTES:
                    raise ArtifactError(
                        f"keras_seqmodels.zoo: refusing {what}: {path} is {actual_size:,} "
                        f"bytes, over the {MAX_ARTIFACT_BYTES:,}-byte limit on an artifact; "
                        "the file was not read."
                    )
            else:
                limit = MAX_ASSET_BYTES
                if actual_size > limit:
                    raise ArtifactError(
                        f"keras_seqmodels.zoo: refusing {what}: {path} is {actual_size:,} "
                        f"bytes, over the {limit:,}-byte limit on a file the index records "
                        "no size for; the file was not read."
                    )
            data = f.read(limit + 1)
    except FileNotFoundError:
        raise ArtifactError(f"keras_seqmodels.zoo: {what} not found at {path}") from None
    if len(data) > limit:
        raise ArtifactError(
            f"keras_seqmodels.zoo: refusing {what}: {path} grew past {limit:,} bytes while "
            "it was read"
        )
    actual = hashlib.sha256(data).hexdigest()
    if actual != expected_sha256:
        raise ArtifactError(
            f"keras_seqmodels.zoo: refusing {what}: the SHA-256 of {path} is {actual}, "
            f"but the zoo index records {expected_sha256}. The file was modified or "
            "corrupted; restore it (git checkout, or delete it from the download cache)."
        )
    return data


def _asset(name, key):
    assets = _entry(name).get("assets", {})
    if key not in assets:
        known = ", ".join(sorted(assets)) or "(none)"
        raise KeyError(
            f"keras_seqmodels.zoo: model {name!r} has no asset {key!r}. Its assets: {known}"
        )
    return assets[key]


def read_asset(name, key):
    """The checked bytes of a file shipped beside a model (e.g. ``"vocabulary"``).

    Args:
        name: a name from ``list_models()``.
        key: the asset's key in ``info(name)["assets"]``.

    Returns:
        ``bytes``, whose SHA-256 was checked against the index.

    Raises:
        KeyError: unknown model or asset (the message lists the known ones).
        ArtifactError: missing or modified file.

    Example:

    >>> name = next(n for n in list_models() if info(n)["assets"])
    >>> key = sorted(info(name)["assets"])[0]
    >>> len(read_asset(name, key)) > 0
    True
    """
    asset = _asset(name, key)
    path = _locate(name, asset["file"], asset["sha256"], f"asset {key!r}")
    return read_verified(
        path, asset["sha256"], f"asset {key!r} of {name!r}", asset.get("size_bytes")
    )


def asset_path(name, key):
    """Path of a file shipped beside a model (e.g. ``"vocabulary"``), checked.

    Prefer ``read_asset``, which returns the checked bytes themselves.

    Args:
        name: a name from ``list_models()``.
        key: the asset's key in ``info(name)["assets"]``.

    Returns:
        The absolute path of the file, after its SHA-256 was checked.

    Raises:
        KeyError: unknown model or asset (the message lists the known ones).
        ArtifactError: missing or modified file.

    Example:

    >>> import os
    >>> name = next(n for n in list_models() if info(n)["assets"])
    >>> key = sorted(info(name)["assets"])[0]
    >>> os.path.basename(asset_path(name, key)) == info(name)["assets"][key]["file"]
    True
    """
    asset = _asset(name, key)
    path = _locate(name, asset["file"], asset["sha256"], f"asset {key!r}")
    read_verified(path, asset["sha256"], f"asset {key!r} of {name!r}", asset.get("size_bytes"))
    return path


def sha256_of(path):
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def verify_artifact(path, expected_sha256, name="model", size_bytes=None):
    """Check an artifact exists, has its recorded size (checked before it is
    read), matches its checksum and is a readable zip.

    Returns:
        The file's bytes (read once; load from these, not from ``path``).
    """
    data = read_verified(path, expected_sha256, f"to load {name!r}", size_bytes)
    if not zipfile.is_zipfile(io.BytesIO(data)):
        raise ArtifactError(
            f"keras_seqmodels.zoo: {path} is not a valid .keras archive (truncated or corrupt)."
        )
    return data


def load_keras_bytes(data, compile=False):
    """A Keras model from the bytes of a ``.keras`` file, in safe mode.

    The bytes go to a private copy (a fresh directory of mode 0700, the file
    0600) that Keras loads and that is deleted at once, so nothing else can
    swap the file between the caller's check and the load.
    """
    from keras_seqmodels.utils.loading import load_model_file

    return load_model_file("the model file", data=data, compile=compile)


def load_model(name, compile=False):
    """The Keras model of a zoo entry, loaded from the bytes whose SHA-256 was checked.

    Loading uses Keras safe mode, so an artifact cannot run arbitrary Python
    (e.g. from a ``Lambda`` layer). Most users want ``load`` (a task object
    whose ``.model`` is this).

    Args:
        name: a name from ``list_models()``.
        compile: whether to restore the training configuration.

    Returns:
        A ``keras.Model``.

    Raises:
        KeyError: unknown name (the message lists the known models).
        ArtifactError: missing, modified or corrupt artifact.

    Example:

    >>> import keras
    >>> isinstance(load_model(list_models()[0]), keras.Model)
    True
    """
    path = artifact_path(name)
    entry = _entry(name)
    data = verify_artifact(path, entry["sha256"], name, entry.get("size_bytes"))
    try:
        return load_keras_bytes(data, compile=compile)
    except Exception as err:  # re-raised with the model's name
        raise ArtifactError(
            f"keras_seqmodels.zoo: could not load {name!r} from {path}: {err}"
        ) from err
