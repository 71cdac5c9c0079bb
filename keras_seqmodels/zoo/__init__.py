"""The model zoo: trained models that load with no network.

    >>> import keras_seqmodels as ks
    >>> ks.zoo.list_models()            # doctest: +SKIP
    >>> tagger = ks.zoo.load(NAME)      # doctest: +SKIP
    >>> tagger.predict("The old man the boats .")  # doctest: +SKIP
    ['DET', 'NOUN', 'VERB', 'DET', 'NOUN', 'PUNCT']

``NAME`` is a zoo name (the README's table names the models and what they
do). Each model is one folder of ``keras_seqmodels.zoo.models`` that declares
a ``ModelSpec``; the listing comes from the generated ``index.json``.
"""

from keras_seqmodels.zoo.api import (
    ArtifactError,
    artifact_path,
    asset_path,
    info,
    list_models,
    load_model,
    read_asset,
)
from keras_seqmodels.zoo.model_spec import ModelSpec
from keras_seqmodels.zoo.registry import register_model
from keras_seqmodels.zoo.task import InputError, Task, load

__all__ = [
    "ArtifactError",
    "InputError",
    "ModelSpec",
    "Task",
    "artifact_path",
    "asset_path",
    "info",
    "list_models",
    "load",
    "load_model",
    "read_asset",
    "register_model",
]
