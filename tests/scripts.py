"""Load one of the repository's scripts (an example or a benchmark) as a
module, so that tests can call its functions."""

import importlib.util
import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def load_script(folder, name, module_name=None):
    """The module of ``ROOT/folder/name.py``, executed afresh at each call
    (not cached in ``sys.modules``)."""
    path = os.path.join(ROOT, folder, f"{name}.py")
    spec = importlib.util.spec_from_file_location(module_name or name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
