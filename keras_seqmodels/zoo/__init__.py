"""The model zoo: trained models that load with no network.

    >>> import keras_seqmodels as ks
    >>> ks.zoo.list_models()            # doctest: +SKIP
    >>> model = ks.zoo.load("ud-ewt-upos")  # doctest: +SKIP
"""

from keras_seqmodels.zoo.api import (
    ArtifactError,
    artifact_path,
    asset_path,
    info,
    list_models,
    load,
    recipe_path,
)
from keras_seqmodels.zoo.registry import register_model

__all__ = [
    "ArtifactError",
    "artifact_path",
    "asset_path",
    "info",
    "list_models",
    "load",
    "recipe_path",
    "register_model",
]
