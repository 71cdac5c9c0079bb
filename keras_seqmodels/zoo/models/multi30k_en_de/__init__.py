"""The zoo model ``multi30k-en-de``: its spec (task, recipe, exporter, card)."""

from keras_seqmodels.zoo.model_spec import ModelSpec

SPEC = ModelSpec(
    name="multi30k-en-de",
    package=__name__,
    task=".task:TranslationTask",
    exporters={"savedmodel": "keras_seqmodels.export.translation:export_translator"},
    serving="'inputs' (batch,) texts -> 'translations', 'unknown_rate', 'confidence', "
    "'unfamiliar', 'not_carried'",
    cli_defaults=("translate", "plot attention"),
)
