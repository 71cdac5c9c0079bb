"""The zoo model ``ntm-copy``: its spec (task, recipe, exporter, card)."""

from keras_seqmodels.zoo.model_spec import ModelSpec

SPEC = ModelSpec(
    name="ntm-copy",
    package=__name__,
    task=".task:CopyTask",
    exporters={"savedmodel": "keras_seqmodels.export.copy_task:export_copy_model"},
    serving="'bits' float32 (batch, length, 8) -> 'copy', 'logits'",
    cli_defaults=("plot ntm",),
)
