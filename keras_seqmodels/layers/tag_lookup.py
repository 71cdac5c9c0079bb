"""Old path of ``keras_seqmodels.tagging.tag_lookup`` (one release, with a warning)."""

import warnings

warnings.warn(
    "keras_seqmodels.layers.tag_lookup moved to keras_seqmodels.tagging.tag_lookup; "
    "the old path goes in the next release",
    DeprecationWarning,
    stacklevel=2,
)


def __getattr__(name):
    from keras_seqmodels.tagging import tag_lookup

    return getattr(tag_lookup, name)
