"""``load_model_file``: the one place the package opens a ``.keras`` file,
whether a user gives it (a ``--model-path``, ``seqmodels export FILE``,
``ks.export.write("model.keras", ...)``, a recipe's ``--init-from``) or the
zoo ships it (its bytes, after their SHA-256 is checked).

Opening a model file is three steps, always together: the file exists; the
sizes in its config are bounded before Keras builds anything
(``utils.bounds.check_keras_file``: a crafted config cannot allocate more
than the file holds); Keras loads it in safe mode (no ``Lambda`` code runs).
Any failure is one line (``utils.errors.ModelFileError``) naming the file.
"""

import os
import tempfile

from keras_seqmodels.utils.bounds import check_keras_file
from keras_seqmodels.utils.errors import ModelFileError, ModelFileNotFoundError


def load_model_file(
    path, *, data=None, option=None, compile=False, hint="give a model saved with model.save"
):
    """A ``.keras`` file as a ``keras.Model``: checked, then loaded in safe mode.

    Args:
        path: the ``.keras`` file (with ``data``: a name for messages).
        data: the file's bytes, already read (the zoo's artifact, whose
            SHA-256 was checked): loaded from a private copy (a fresh
            directory of mode 0700, the file 0600, deleted at once), so
            nothing can swap the file between the check and the load.
        option: what named the file, for messages (e.g. ``"--model-path"``).
        compile: whether to restore the training configuration.
        hint: what the message asks for instead.

    Returns:
        The ``keras.Model``.

    Raises:
        ModelFileNotFoundError: no such file (also a ``FileNotFoundError``).
        ModelFileError: a size in its config over its bound, a corrupt or
            foreign file (also a ``ValueError``); one line, e.g.
            ``"--model-path: cannot load m.keras as a Keras model (BadZipFile:
            File is not a zip file); give a model saved with model.save"``.

    Example:

    >>> import os, tempfile, keras
    >>> path = os.path.join(tempfile.mkdtemp(), "m.keras")
    >>> keras.Sequential([keras.Input((3,)), keras.layers.Dense(2)]).save(path)
    >>> load_model_file(path).output_shape
    (None, 2)
    """
    prefix = f"{option}: " if option else ""
    path = os.fspath(path)
    if data is None and not os.path.isfile(path):
        raise ModelFileNotFoundError(f"{prefix}no such file: {path}")
    try:
        check_keras_file(path, data)  # sizes in its config bounded before Keras builds it
        if data is None:
            return _load(path, compile)
        with tempfile.TemporaryDirectory(prefix="keras_seqmodels-zoo-") as private:
            copy = os.path.join(private, "model.keras")
            fd = os.open(copy, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            return _load(copy, compile)
    except Exception as err:  # a corrupt or foreign file: one line
        first = str(err).splitlines()[0] if str(err) else ""
        raise ModelFileError(
            f"{prefix}cannot load {path} as a Keras model ({type(err).__name__}: {first}); {hint}"
        ) from None


def _load(path, compile):
    import keras  # its import registers the package's classes (keras_seqmodels/__init__.py)

    return keras.saving.load_model(path, compile=compile, safe_mode=True)


__all__ = ["load_model_file"]
