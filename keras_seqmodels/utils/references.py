"""``"module:attribute"`` references, resolved on use.

The zoo's specs and the export formats name code as strings so that reading
them imports neither Keras nor TensorFlow; ``resolve`` imports the module
when the object is needed.
"""

import importlib


def resolve(reference, package=None):
    """The object a ``"module:attribute"`` string names (a callable is returned as is).

    Args:
        reference: ``"module:attribute"`` (``"module"`` alone names the
            module), or an object, returned unchanged.
        package: the package a relative module (starting with ``.``) is
            relative to.

    Example:

    >>> resolve("os.path:join").__name__
    'join'
    """
    if not isinstance(reference, str):
        return reference
    module, _, attribute = reference.partition(":")
    loaded = importlib.import_module(module, package)
    return getattr(loaded, attribute) if attribute else loaded
