"""The zoo model ``mnist-renet``: its spec (task, recipe, exporter, card)."""

from keras_seqmodels.zoo.model_spec import ModelSpec

SPEC = ModelSpec(
    name="mnist-renet",
    package=__name__,
    task="keras_seqmodels.zoo.digits:DigitTask",
    exporters={"savedmodel": "keras_seqmodels.export.images:export_image_classifier"},
    serving="'pixels' float32 (batch, 28, 28) of 0-255 -> 'scores', 'class_id'",
)
