"""Old path of ``keras_seqmodels.data.multi30k`` (one release, with a warning)."""

import warnings

warnings.warn(
    "keras_seqmodels.seq2seq.multi30k moved to keras_seqmodels.data.multi30k; "
    "the old path goes in the next release",
    DeprecationWarning,
    stacklevel=2,
)


def __getattr__(name):
    from keras_seqmodels.data import multi30k

    return getattr(multi30k, name)
