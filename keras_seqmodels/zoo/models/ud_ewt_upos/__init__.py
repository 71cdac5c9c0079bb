"""The zoo model ``ud-ewt-upos``: its spec (task, recipe, exporter, card)."""

from keras_seqmodels.zoo.model_spec import ModelSpec

SPEC = ModelSpec(
    name="ud-ewt-upos",
    package=__name__,
    task=".task:TaggingTask",
    exporters={
        "savedmodel": "keras_seqmodels.export.tagging:export_tagger",
        "onnx": ".deploy:to_onnx",  # the emission network (ids in, tag scores out)
        "litert": ".deploy:to_litert",  # the emission network, 64 word positions
    },
    serving="'text' raw strings -> 'tokens', 'tags' (tokenised as `seqmodels tag` does)",
    cli_defaults=("tag",),
)
