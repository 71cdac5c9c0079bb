"""Old path of ``keras_seqmodels.tagging.sentence_vectorizer`` (one release, with a warning)."""

import warnings

warnings.warn(
    "keras_seqmodels.layers.sentence_vectorizer moved to "
    "keras_seqmodels.tagging.sentence_vectorizer; "
    "the old path goes in the next release",
    DeprecationWarning,
    stacklevel=2,
)


def __getattr__(name):
    from keras_seqmodels.tagging import sentence_vectorizer

    return getattr(sentence_vectorizer, name)
