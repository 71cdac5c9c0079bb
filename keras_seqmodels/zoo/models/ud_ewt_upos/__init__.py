"""The zoo model ``ud-ewt-upos``: its spec (task, recipe, exporter, card)."""

from keras_seqmodels.zoo.model_spec import ModelSpec

SPEC = ModelSpec(
    name="ud-ewt-upos",
    package=__name__,
    task=".task:TaggingTask",
    exporters={"savedmodel": "keras_seqmodels.export.tagging:export_tagger"},
    serving="'text' raw strings -> 'tokens', 'tags' (tokenised as `seqmodels tag` does)",
    cli_defaults=("tag",),
)
