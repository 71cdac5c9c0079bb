"""The model zoo: trained models that load with no network.

    >>> import keras_seqmodels as ks
    >>> ks.zoo.list_models()            # doctest: +SKIP
    >>> tagger = ks.zoo.load("ud-ewt-upos")  # doctest: +SKIP
    >>> tagger.predict("The old man the boats .")  # doctest: +SKIP
    ['DET', 'NOUN', 'VERB', 'DET', 'NOUN', 'PUNCT']
"""

from keras_seqmodels.zoo.api import (
    ArtifactError,
    artifact_path,
    asset_path,
    info,
    list_models,
    load,
    load_model,
    read_asset,
)
from keras_seqmodels.zoo.registry import register_model
from keras_seqmodels.zoo.task import InputError, Task

__all__ = [
    "ArtifactError",
    "InputError",
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
