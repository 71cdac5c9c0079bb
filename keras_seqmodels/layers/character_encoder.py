"""Old path of ``keras_seqmodels.tagging.character_encoder`` (one release, with a warning)."""

import warnings

warnings.warn(
    "keras_seqmodels.layers.character_encoder moved to keras_seqmodels.tagging.character_encoder; "
    "the old path goes in the next release",
    DeprecationWarning,
    stacklevel=2,
)


def __getattr__(name):
    from keras_seqmodels.tagging import character_encoder

    return getattr(character_encoder, name)
