"""Zoo models as importable code, one folder per model, found by walking this package.

Each folder (a valid Python identifier, e.g. the zoo name with underscores)
holds the model's code (``task.py``: raw input in, plain Python answer out;
``recipe.py``: hooks for the recipe framework; ``config.py``, ``network.py``)
and declares the model once, as ``SPEC = ModelSpec(...)`` in its
``__init__.py`` (``keras_seqmodels.zoo.model_spec``); variants that share the
folder's code (another size of the same network, as keras-hub's presets of
one architecture) are declared there together, as ``SPECS = (ModelSpec(...),
...)``. Adding a zoo model is adding a folder (or a variant to its folder):
nothing outside it names the model.
"""

import functools
import importlib
import pkgutil


@functools.cache
def _specs():
    found = {}
    for module_info in pkgutil.iter_modules(__path__, __name__ + "."):
        if not module_info.ispkg:
            continue
        module = importlib.import_module(module_info.name)
        declared = getattr(module, "SPECS", None)
        if declared is None and getattr(module, "SPEC", None) is not None:
            declared = (module.SPEC,)
        if not declared:
            raise TypeError(
                f"keras_seqmodels.zoo.models: the folder {module_info.name} declares no SPEC; "
                "add `SPEC = ModelSpec(...)` to its __init__.py (`SPECS = (...)` for "
                "variants sharing its code)"
            )
        for spec in declared:
            if spec.package != module_info.name:
                raise ValueError(
                    f"keras_seqmodels.zoo.models: the folder {module_info.name} declares "
                    f"{spec.name!r} with package={spec.package!r}; pass package=__name__"
                )
            if spec.name in found:
                raise ValueError(
                    f"keras_seqmodels.zoo.models: {found[spec.name].package} and "
                    f"{spec.package} both declare the zoo model {spec.name!r}"
                )
            found[spec.name] = spec
    return dict(sorted(found.items()))


def specs():
    """``{name: ModelSpec}`` of every model folder, sorted by name.

    Example:

    >>> all(spec.name == name for name, spec in specs().items())
    True
    """
    return dict(_specs())


def spec(name):
    """The ``ModelSpec`` of zoo model ``name``.

    Raises:
        KeyError: no folder declares ``name`` (the message lists those that do).
    """
    found = _specs()
    if name not in found:
        raise KeyError(
            f"keras_seqmodels.zoo: no model folder declares {name!r}. "
            f"Declared: {', '.join(found) or '(none)'}"
        )
    return found[name]


def spec_of_package(package):
    """The (first) ``ModelSpec`` declared by the folder ``package`` (a module name), or ``None``."""
    return next((s for s in _specs().values() if s.package == package), None)


def default_model(command):
    """The zoo model whose spec names ``command`` in its ``cli_defaults``.

    Example:

    >>> default_model("translate") in specs()
    True

    Raises:
        LookupError: no model, or more than one, claims ``command``.
    """
    names = [s.name for s in _specs().values() if command in s.cli_defaults]
    if len(names) != 1:
        raise LookupError(
            f"keras_seqmodels.zoo: {len(names)} zoo models ({', '.join(names) or 'none'}) "
            f"are the default of `seqmodels {command}`; exactly one must be"
        )
    return names[0]


def package_name(name):
    """Module name of the folder of zoo model ``name``.

    Example:

    >>> package_name(next(iter(specs())))  # doctest: +ELLIPSIS
    'keras_seqmodels.zoo.models....'
    """
    return spec(name).package
