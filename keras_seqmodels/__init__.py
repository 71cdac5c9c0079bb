"""keras_seqmodels: recurrent and recursive sequence models for Keras 3.

Sub-packages load on first use (``import keras_seqmodels as ks; ks.tagging.CRF``
imports ``keras_seqmodels.tagging`` then), so ``import keras_seqmodels`` and the
``seqmodels`` commands that need no model (``--help``, ``zoo list``) do not pay
for importing Keras and TensorFlow.

The package's Keras classes are registered (``keras.saving``) as soon as Keras
is imported: if Keras is already imported, by ``import keras_seqmodels``;
otherwise right after Keras's own import finishes (or, when Keras is first
imported by a module of this package, right after that module's import). So
``import keras_seqmodels`` then ``keras.saving.load_model("model.keras")``
finds the package's layers, as before.
"""

import importlib as _importlib
import sys as _sys

from keras_seqmodels import _import_hooks
from keras_seqmodels.version import __version__

# The sub-packages that define Keras classes or need Keras, in an order in
# which each imports cleanly (the order of the former eager imports).
_SUBPACKAGES = (
    "cells",
    "data",
    "initializers",
    "layers",
    "linear_rnn",
    "language_model",
    "memory",
    "seq2seq",
    "tagging",
    "training",
    "trees",
    "zoo",
)
_registered = False


# Keras, the frameworks it loads, and this package's own modules: registration
# waits until none of them is half-imported.
_FRAMEWORKS = ("keras", "tensorflow", "jax")


def _watched(name):
    return name in _FRAMEWORKS or name.startswith(__name__ + ".")


def _initializing(module, skip=None):
    spec = getattr(module, "__spec__", None)
    return module is not skip and bool(getattr(spec, "_initializing", False))


def _register_all(finished=None):
    """Import every sub-package once Keras is usable and no module of this
    package is half-imported (importing then could meet a partial module)."""
    global _registered
    if _registered or "keras" not in _sys.modules:
        return
    for name, module in list(_sys.modules.items()):
        if _watched(name) and _initializing(module, skip=finished):
            return  # that module's import finishing will call again
    _registered = True
    try:
        for name in _SUBPACKAGES:
            _importlib.import_module(f"{__name__}.{name}")
    except BaseException:
        _registered = False
        raise


def _execute_then_register(exec_module, module):
    exec_module(module)
    _register_all(finished=module)


if "keras" in _sys.modules:
    _register_all()
if not _registered:
    _import_hooks.install(
        "register", lambda name: not _registered and _watched(name), _execute_then_register
    )


def __getattr__(name):
    if name in _SUBPACKAGES or name in ("cli", "export", "utils", "testing"):
        return _importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_SUBPACKAGES))


__all__ = [*_SUBPACKAGES, "__version__"]
