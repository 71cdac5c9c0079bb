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
import warnings


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


def default_export_option(exporter, option):
    """``option`` of the zoo model whose SavedModel exporter is ``exporter``
    (its ``export_options``), or ``None``: the default an exporter falls back
    on when its caller gives no ``option`` (deprecated; pass it)."""
    for model in _specs().values():
        if model.exporters.get("savedmodel") is None or model.export_options is None:
            continue
        if model.exporter("savedmodel") is exporter:
            value = model.default_export_options().get(option)
            if value is not None:
                warnings.warn(
                    f"{exporter.__name__}: without `{option}`, the {option} of the zoo "
                    f"model {model.name!r} is used; pass `{option}=` (this default goes in "
                    "the next release)",
                    DeprecationWarning,
                    stacklevel=3,
                )
                return value
    return None


GENERIC_EXPORTER = "keras_seqmodels.export.generic:export_model"


def exporter_for(name, format="savedmodel", default=None):
    """The export function of zoo model ``name`` for ``format``: the one its
    spec names, else ``default`` (the generic SavedModel exporter if ``None``).

    ``keras_seqmodels.export.exporter_for`` is this function; a zoo task's
    ``export`` and the CLI's ``seqmodels export NAME`` use it.

    Args:
        name: a zoo model name, or ``None`` for the generic exporter.
        format: a key of ``keras_seqmodels.export.FORMATS``.
        default: what to return where the spec names no exporter for ``format``.

    Returns:
        A function ``(model, directory, **options)``; for a model whose spec
        has ``export_options`` (e.g. its shipped vocabulary), its SavedModel
        exporter wrapped to pass them unless the caller gives them.

    Example:

    >>> exporter_for(None).__name__
    'export_model'
    """
    from keras_seqmodels.utils.references import resolve

    found = _specs().get(name)
    exporter = None if found is None else found.exporter(format)
    if exporter is None:
        return resolve(GENERIC_EXPORTER) if default is None else default
    if found.export_options is None or format != "savedmodel":
        return exporter

    @functools.wraps(exporter)
    def with_defaults(model, directory, **options):
        defaults = {k: v for k, v in found.default_export_options().items() if k not in options}
        return exporter(model, directory, **defaults, **options)

    return with_defaults


def package_name(name):
    """Module name of the folder of zoo model ``name``.

    Example:

    >>> package_name(next(iter(specs())))  # doctest: +ELLIPSIS
    'keras_seqmodels.zoo.models....'
    """
    return spec(name).package


def __getattr__(attribute):
    """``MODEL_PACKAGES``, the former hand-kept table (one release, with a warning)."""
    if attribute != "MODEL_PACKAGES":
        raise AttributeError(f"module {__name__!r} has no attribute {attribute!r}")
    warnings.warn(
        "keras_seqmodels.zoo.models.MODEL_PACKAGES is replaced by "
        "keras_seqmodels.zoo.models.specs() (each folder declares its model); "
        "the old name goes in the next release",
        DeprecationWarning,
        stacklevel=2,
    )
    return {name: s.package.rpartition(".")[2] for name, s in _specs().items()}
