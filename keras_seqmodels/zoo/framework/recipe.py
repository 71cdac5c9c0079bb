"""``Recipe``: what one zoo model adds to the framework (hooks, no loop)."""

import dataclasses
from collections.abc import Callable


@dataclasses.dataclass(frozen=True)
class Recipe:
    """The hooks of one zoo model; the framework trains, selects, resumes,
    evaluates, exports and registers it (``keras_seqmodels.zoo.framework``).

    Unlike a Keras ``Model`` subclass or a keras-hub preset, a recipe holds no
    state and no training loop: ``seqmodels train NAME`` builds the network
    from ``build_model(config)``, compiles it from ``compile(config)`` and
    runs ``model.fit`` on ``load_data(...)`` under the chosen distribution.

    Attributes:
        name: the zoo name (``ModelSpec.name`` of the model's folder).
        config: defaults of the model's options; each key becomes an option
            ``--key`` (underscores as hyphens) of ``seqmodels train`` and
            ``seqmodels evaluate``. ``epochs``, ``batch_size`` and ``seed``
            set the defaults of the common options of those names.
        build_model: ``(config) -> keras.Model``, uncompiled.
        load_data: ``(data_dir, split, smoke, config) -> data`` for ``split``
            in ``"train"``, ``"validation"``, ``"test"``: a tuple of NumPy
            arrays ``(x, y)`` or ``(x, y, sample_weight)`` (batched by the
            framework), or a batched ``keras.utils.PyDataset``. With
            ``smoke`` a few examples (generated or from a fixture) and
            ``data_dir`` may be ``None``.
        compile_options: ``(config) -> dict`` of ``model.compile`` arguments.
        evaluate: ``(model, data, config) -> dict`` of metrics on one split
            (``config["split"]`` names it).
        evaluation_data: optional ``(data_dir, split, smoke, config) -> data``
            that ``evaluate`` gets, where it differs from ``load_data``'s.
        monitor: ``(log key, "min" or "max")`` that selects the checkpoint on
            the validation split, e.g. ``("val_accuracy", "max")``.
        data_subdir: the model's folder under ``--data-dir``.
        callbacks: optional ``(config, work_dir, train) -> list`` of
            callbacks run before the checkpoint's (so one may put the
            monitored key into the logs, or grow a curriculum of ``train``).
        prepare: optional ``(model, train, config, work_dir)`` run once before
            ``fit`` (e.g. pre-training embeddings).
        package: optional ``(model, config) -> keras.Model``: the shipped
            model made from the selected one (e.g. the vocabularies, the
            tokenizer and the decoder put around an id-level network); saved
            as ``<work-dir>/<name>.keras``, which ``evaluate --model`` takes.
        combine: optional ``(models, config) -> keras.Model``: one model
            from several packaged ones (an ensemble); ``train --ensemble K``
            selects its members greedily on the validation split
            (``framework.ensemble``).
        tie_break: optional ``(metric key, "min" or "max")`` of ``evaluate``
            that decides between ensemble candidates with an equal selection
            metric, e.g. ``("nll", "min")`` when the metric is an error rate
            over a few thousand questions.
        task, data, card: what registration records in the zoo index.
    """

    name: str
    config: dict
    build_model: Callable
    load_data: Callable
    compile_options: Callable
    evaluate: Callable
    evaluation_data: Callable | None = None
    monitor: tuple = ("val_loss", "min")
    data_subdir: str | None = None
    callbacks: Callable | None = None
    prepare: Callable | None = None
    package: Callable | None = None
    combine: Callable | None = None
    tie_break: tuple | None = None
    task: str = ""
    data: str = ""
    card: str = ""

    @classmethod
    def from_module(cls, module, spec=None):
        """The recipe a module spells out by convention: constants ``CONFIG``,
        ``MONITOR``, ``DATA_SUBDIR``, ``TASK``, ``DATA``, optional ``TIE_BREAK``
        (``NAME`` and ``CARD``
        default to the name and card of ``spec``, else of its folder's
        ``ModelSpec``)
        and functions named as the fields (``build_model``, ``load_data``,
        ``compile_options``, ``evaluate``, optional ``evaluation_data``,
        ``callbacks``, ``prepare``, ``package``, ``combine``)."""
        from keras_seqmodels.zoo.models import spec_of_package

        folder = module.__name__.rpartition(".")[0]
        spec = spec or spec_of_package(folder)
        if spec is None:
            name = folder.rpartition(".")[2]
            values = {"name": name, "card": f"zoo/{name}/card.md"}
        else:
            values = {"name": spec.name, "card": spec.card}
        for field in dataclasses.fields(cls):
            key = field.name.upper() if field.name in _CONSTANTS else field.name
            if hasattr(module, key):
                values[field.name] = getattr(module, key)
        missing = [
            f.name
            for f in dataclasses.fields(cls)
            if f.default is dataclasses.MISSING and f.name not in values
        ]
        if missing:
            raise ValueError(f"Recipe.from_module: {module.__name__} lacks {missing}.")
        return cls(**values)


_CONSTANTS = ("name", "config", "monitor", "data_subdir", "tie_break", "task", "data", "card")
