"""Old path of ``keras_seqmodels.tagging.crf_tagger`` (one release, with a warning)."""

import warnings

warnings.warn(
    "keras_seqmodels.layers.crf_tagger moved to keras_seqmodels.tagging.crf_tagger; "
    "the old path goes in the next release",
    DeprecationWarning,
    stacklevel=2,
)


def __getattr__(name):
    from keras_seqmodels.tagging import crf_tagger

    return getattr(crf_tagger, name)
