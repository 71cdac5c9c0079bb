"""The zoo models ``pixel-mnist`` (sequential pixel MNIST) and
``pixel-mnist-permuted`` (permuted pixel MNIST): one network, task and recipe,
pixels read in raster order or in a fixed permutation; their specs (task,
recipe, exporter, card)."""

from keras_seqmodels.zoo.model_spec import ModelSpec

_SHARED = dict(
    package=__name__,
    task="keras_seqmodels.zoo.digits:DigitTask",
    exporters={"savedmodel": "keras_seqmodels.export.images:export_image_classifier"},
    serving="'pixels' float32 (batch, 28, 28) of 0-255 -> 'scores', 'class_id'",
)
SPECS = (
    ModelSpec(name="pixel-mnist", **_SHARED),
    ModelSpec(name="pixel-mnist-permuted", recipe=".permuted_recipe", **_SHARED),
)
