"""keras_seqmodels: recurrent and recursive sequence models for Keras 3.

Sub-packages load on first use (``import keras_seqmodels as ks; ks.layers.CRF``
imports ``keras_seqmodels.layers`` then), so ``import keras_seqmodels`` and the
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
import importlib.abc as _importlib_abc
import sys as _sys
import threading as _threading

from keras_seqmodels.version import __version__

# The sub-packages that define Keras classes or need Keras, in an order in
# which each imports cleanly (the order of the former eager imports).
_SUBPACKAGES = (
    "cells",
    "data",
    "initializers",
    "layers",
    "memory",
    "seq2seq",
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


class _CallAfterExec(_importlib_abc.Loader):
    """Runs a module's own loader, then ``_register_all``; everything else is
    the wrapped loader's."""

    def __init__(self, loader):
        self._loader = loader

    def __getattr__(self, name):
        return getattr(self._loader, name)

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module):
        self._loader.exec_module(module)
        _register_all(finished=module)


class _RegistrationFinder(_importlib_abc.MetaPathFinder):
    """Watches the import of Keras, its frameworks and this package's modules."""

    def __init__(self):
        # Set while this thread asks the other finders (one that wraps loaders
        # too may ask this one again); per thread, as imports can be concurrent.
        self._searching = _threading.local()

    def find_spec(self, fullname, path, target=None):
        if _registered or not _watched(fullname) or getattr(self._searching, "on", False):
            return None
        self._searching.on = True
        try:
            for finder in _sys.meta_path:
                if finder is self or not hasattr(finder, "find_spec"):
                    continue
                spec = finder.find_spec(fullname, path, target)
                if spec is not None:
                    if spec.loader is not None and hasattr(spec.loader, "exec_module"):
                        spec.loader = _CallAfterExec(spec.loader)
                    return spec
            return None
        finally:
            self._searching.on = False


if "keras" in _sys.modules:
    _register_all()
if not _registered and not any(isinstance(f, _RegistrationFinder) for f in _sys.meta_path):
    _sys.meta_path.insert(0, _RegistrationFinder())


def __getattr__(name):
    if name in _SUBPACKAGES or name in ("cli", "export", "utils", "testing"):
        return _importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_SUBPACKAGES))


__all__ = [*_SUBPACKAGES, "__version__"]
