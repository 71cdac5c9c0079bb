"""Loading API of the zoo: list, describe and load shipped models.

Artifacts are Keras ``.keras`` files shipped as package data under
``keras_seqmodels/zoo/artifacts/``; ``index.json`` beside this file records,
for each model, its artifact's SHA-256 (checked before every load), its task,
its test metrics and the command that measured them.
"""

import hashlib
import json
import os
import zipfile

import keras

ZOO_DIR = os.path.dirname(os.path.abspath(__file__))
INDEX_PATH = os.path.join(ZOO_DIR, "index.json")
ARTIFACT_DIR = os.path.join(ZOO_DIR, "artifacts")


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

    >>> "multi30k-en-de" in list_models()
    True
    """
    return sorted(_index())


def _entry(name):
    index = _index()
    if name not in index:
        known = ", ".join(sorted(index)) or "(none)"
        raise KeyError(f"keras_seqmodels.zoo: unknown model {name!r}. Known models: {known}")
    return index[name]


def info(name):
    """The model card as data.

    Args:
        name: a name from ``list_models()``.

    Returns:
        A dict with ``name``, ``task``, ``data`` (data set and split),
        ``metrics`` (test-set figures), ``command`` (the one that measured
        them), ``card`` (path of the card in a checkout), ``artifact``,
        ``sha256``, ``size_bytes``, ``assets`` (files shipped beside the
        model, e.g. a vocabulary) and any recipe-specific fields (training
        time, machine).

    Raises:
        KeyError: unknown name (the message lists the known models).

    Example:

    >>> card = info("mnist-renet")
    >>> card["card"], sorted(card["metrics"]) != []
    ('zoo/mnist-renet/card.md', True)
    """
    entry = dict(_entry(name), name=name)
    entry.setdefault("assets", {})
    return entry


def artifact_path(name):
    """Path of a model's artifact inside the installed package (not checked;
    ``load`` checks it).

    Args:
        name: a name from ``list_models()``.

    Returns:
        The absolute path of the ``.keras`` file.

    Example:

    >>> import os
    >>> os.path.basename(artifact_path("mnist-renet"))
    'mnist-renet.keras'
    """
    return os.path.join(ARTIFACT_DIR, _entry(name)["artifact"])


def asset_path(name, key):
    """Path of a file shipped beside a model (e.g. ``"vocabulary"``), checked.

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
    >>> os.path.basename(asset_path("babi-memn2n", "vocab"))
    'babi-memn2n.vocab.json'
    """
    assets = _entry(name).get("assets", {})
    if key not in assets:
        known = ", ".join(sorted(assets)) or "(none)"
        raise KeyError(
            f"keras_seqmodels.zoo: model {name!r} has no asset {key!r}. Its assets: {known}"
        )
    path = os.path.join(ARTIFACT_DIR, assets[key]["file"])
    if not os.path.isfile(path):
        raise ArtifactError(f"keras_seqmodels.zoo: asset {key!r} of {name!r} not found at {path}")
    actual = sha256_of(path)
    if actual != assets[key]["sha256"]:
        raise ArtifactError(
            f"keras_seqmodels.zoo: refusing asset {key!r} of {name!r}: the SHA-256 of "
            f"{path} is {actual}, but the zoo index records {assets[key]['sha256']}."
        )
    return path


def recipe_path(name):
    """Path of a model's recipe in a source checkout (``zoo/<name>/recipe.py``).

    Args:
        name: a zoo model name (registered or not).

    Returns:
        The absolute path of ``recipe.py``.

    Raises:
        FileNotFoundError: not in a source checkout, or no such recipe.

    Example:

    >>> recipe_path("mnist-renet").endswith("recipe.py")
    True
    """
    root = os.path.dirname(os.path.dirname(ZOO_DIR))
    path = os.path.join(root, "zoo", name, "recipe.py")
    if not os.path.isfile(path):
        raise FileNotFoundError(
            f"keras_seqmodels.zoo: the recipe of {name!r} is in the source "
            f"tree (zoo/{name}/recipe.py); run from a checkout. Looked at {path}"
        )
    return path


def sha256_of(path):
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def verify_artifact(path, expected_sha256, name="model"):
    """Check an artifact exists, matches its checksum and is a readable zip."""
    if not os.path.isfile(path):
        raise ArtifactError(f"keras_seqmodels.zoo: artifact of {name!r} not found at {path}")
    actual = sha256_of(path)
    if actual != expected_sha256:
        raise ArtifactError(
            f"keras_seqmodels.zoo: refusing to load {name!r}: the SHA-256 of "
            f"{path} is {actual}, but the zoo index records {expected_sha256}. "
            "The file was modified or corrupted; reinstall the package."
        )
    if not zipfile.is_zipfile(path):
        raise ArtifactError(
            f"keras_seqmodels.zoo: {path} is not a valid .keras archive (truncated or corrupt)."
        )


def load(name, compile=False):
    """Load a zoo model, after checking its artifact's SHA-256.

    Loading uses Keras safe mode, so an artifact cannot run arbitrary Python
    (e.g. from a ``Lambda`` layer).

    Args:
        name: a name from ``list_models()``.
        compile: whether to restore the training configuration.

    Returns:
        A ``keras.Model``.

    Raises:
        KeyError: unknown name (the message lists the known models).
        ArtifactError: missing, modified or corrupt artifact.

    Example:

    >>> model = load("mnist-renet")
    >>> model.output_shape
    (None, 10)
    """
    entry = _entry(name)
    path = os.path.join(ARTIFACT_DIR, entry["artifact"])
    verify_artifact(path, entry["sha256"], name)
    import keras_seqmodels  # noqa: F401  (registers the package's classes)

    try:
        return keras.saving.load_model(path, compile=compile, safe_mode=True)
    except Exception as err:  # re-raised with the model's name
        raise ArtifactError(
            f"keras_seqmodels.zoo: could not load {name!r} from {path}: {err}"
        ) from err
