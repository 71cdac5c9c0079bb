"""``ModelSpec``: everything the package needs to know about one zoo model.

Each folder ``keras_seqmodels/zoo/models/<folder>/`` declares one, as
``SPEC`` in its ``__init__.py``; ``keras_seqmodels.zoo.models.specs()`` finds
the folders (``pkgutil``) and reads them. As torchvision's
``@register_model`` keeps a model's weights, transforms and metadata in one
object, the spec names the model's recipe, task class, exporters, the CLI
commands it is the default model of, and its card, so code outside the
folder never names the model. What a registered model's artifact is (file,
SHA-256, metrics) stays in the generated ``zoo/index.json``.

References to code are ``"module:attribute"`` strings (a module starting with
``.`` is relative to the folder), resolved on use: reading the specs imports
neither Keras nor TensorFlow.
"""

import dataclasses
from types import MappingProxyType

from keras_seqmodels.utils.references import resolve

__all__ = ["ModelSpec", "resolve"]


@dataclasses.dataclass(frozen=True)
class ModelSpec:
    """The declaration of one zoo model, made once in its folder.

    Args:
        name: the zoo name (``seqmodels zoo list``), e.g. ``"my-model"``.
        package: the folder's module (pass ``__name__``).
        task: its ``Task`` subclass, ``"module:Class"`` (default: the
            generic ``keras_seqmodels.zoo.Task``).
        recipe: its recipe module (default ``".recipe"``; ``None``: none).
        exporters: ``{format: "module:function"}``, the writer
            ``keras_seqmodels.export.write`` uses for this model and a format
            of ``keras_seqmodels.export.FORMATS`` instead of the lookup by
            model type: ``(model, path, **options) -> path`` (e.g. a
            SavedModel signature of its own, or the id-level part of a
            string-in model for ``"onnx"``).
        export_options: ``"module:function"``, ``(name) -> dict``: options
            its SavedModel writer needs beyond the model (e.g. the shipped
            vocabulary), read from its assets; a zoo task passes them
            (``Task.export_options``).
        serving: one line on its SavedModel signature, for ``seqmodels
            export --help`` (e.g. ``"'pixels' float32 -> 'class_id'"``).
        cli_defaults: the commands whose ``--model`` defaults to it (e.g.
            ``("translate", "plot attention")``; a command has at most one).
        card: its card, relative to the repository root (default
            ``zoo/<name>/card.md``).
        shipped: whether a trained artifact ships in ``zoo/index.json``
            (default ``True``). ``False`` declares a recipe-only model:
            ``seqmodels train NAME`` trains it, but it is left out of
            ``list_models()`` and the zoo tables, and loading it without a
            file of one's own (``zoo.load``, ``seqmodels evaluate NAME``
            without ``--model``) raises a one-line error saying so.

    Example:

    >>> spec = ModelSpec("my-model", package="my_models.my_model")
    >>> spec.card, spec.recipe, spec.exporter("savedmodel")
    ('zoo/my-model/card.md', '.recipe', None)
    """

    name: str
    package: str
    task: str | None = None
    recipe: str | None = ".recipe"
    exporters: dict = dataclasses.field(default_factory=dict)
    export_options: str | None = None
    serving: str = ""
    cli_defaults: tuple = ()
    card: str = ""
    shipped: bool = True

    def __post_init__(self):
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(
                f"ModelSpec: `name` must be a non-empty string. Received: {self.name!r}"
            )
        if not self.card:
            object.__setattr__(self, "card", f"zoo/{self.name}/card.md")
        object.__setattr__(self, "exporters", MappingProxyType(dict(self.exporters)))
        object.__setattr__(self, "cli_defaults", tuple(self.cli_defaults))

    def task_class(self):
        """The model's ``Task`` subclass (the generic ``Task`` if it names none)."""
        if self.task is None:
            from keras_seqmodels.zoo.task import Task

            return Task
        return resolve(self.task, self.package)

    def recipe_module(self):
        """The model's recipe module, or ``None`` if it has none."""
        return None if self.recipe is None else resolve(self.recipe, self.package)

    def exporter(self, format="savedmodel"):
        """The model's own exporter for ``format``, or ``None`` (the generic one applies)."""
        reference = self.exporters.get(format)
        return None if reference is None else resolve(reference, self.package)

    def default_export_options(self):
        """The options its exporters need beyond the model (``{}`` if none)."""
        if self.export_options is None:
            return {}
        return dict(resolve(self.export_options, self.package)(self.name))
