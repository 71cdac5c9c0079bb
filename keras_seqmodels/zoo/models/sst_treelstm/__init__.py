"""The zoo model ``sst-treelstm``: its spec (task, recipe, exporter, card)."""

from keras_seqmodels.zoo.model_spec import ModelSpec

SPEC = ModelSpec(
    name="sst-treelstm",
    package=__name__,
    task=".task:SentimentTask",
    exporters={"savedmodel": "keras_seqmodels.export.trees:export_sentiment_savedmodel"},
    serving="'trees' bracketed strings -> 'root_class'",
    cli_defaults=("sentiment",),
)
