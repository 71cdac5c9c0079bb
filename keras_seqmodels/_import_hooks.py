"""One import hook, used twice: to register the package's Keras classes right
after Keras is imported (``keras_seqmodels/__init__.py``) and to hide the
frameworks' native start-up log in the command line (``cli/main.py``).

``install(key, wants, run)`` puts a finder first on ``sys.meta_path`` that,
for a module ``wants(fullname)`` accepts, asks the other finders for its spec
and wraps the loader so that ``run(exec_module, module)`` executes it.
"""

import importlib.abc
import sys
import threading


class _Loader(importlib.abc.Loader):
    """A module's own loader, executed through ``run``; everything else is
    the wrapped loader's."""

    def __init__(self, loader, run):
        self._loader = loader
        self._run = run

    def __getattr__(self, name):
        return getattr(self._loader, name)

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module):
        self._run(self._loader.exec_module, module)


class _Finder(importlib.abc.MetaPathFinder):
    def __init__(self, key, wants, run):
        self.key = key
        self._wants = wants
        self._run = run
        # Set while this thread asks the other finders (one that wraps loaders
        # too may ask this one again); per thread, as imports can be concurrent.
        self._searching = threading.local()

    def find_spec(self, fullname, path, target=None):
        if getattr(self._searching, "on", False) or not self._wants(fullname):
            return None
        self._searching.on = True
        try:
            for finder in sys.meta_path:
                if finder is self or not hasattr(finder, "find_spec"):
                    continue
                spec = finder.find_spec(fullname, path, target)
                if spec is not None:
                    if spec.loader is not None and hasattr(spec.loader, "exec_module"):
                        spec.loader = _Loader(spec.loader, self._run)
                    return spec
            return None
        finally:
            self._searching.on = False


def install(key, wants, run):
    """Insert the hook named ``key`` first on ``sys.meta_path`` (once)."""
    if not any(getattr(f, "key", None) == key for f in sys.meta_path if isinstance(f, _Finder)):
        sys.meta_path.insert(0, _Finder(key, wants, run))
