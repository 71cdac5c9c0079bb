"""Old path of ``keras_seqmodels.tagging.crf`` (one release, with a warning)."""

import warnings

warnings.warn(
    "keras_seqmodels.layers.crf moved to keras_seqmodels.tagging.crf; "
    "the old path goes in the next release",
    DeprecationWarning,
    stacklevel=2,
)


def __getattr__(name):
    from keras_seqmodels.tagging import crf

    return getattr(crf, name)
