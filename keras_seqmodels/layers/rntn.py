"""Old path of ``keras_seqmodels.trees.rntn`` (one release, with a warning)."""

import warnings

warnings.warn(
    "keras_seqmodels.layers.rntn moved to keras_seqmodels.trees.rntn; "
    "the old path goes in the next release",
    DeprecationWarning,
    stacklevel=2,
)


def __getattr__(name):
    from keras_seqmodels.trees import rntn

    return getattr(rntn, name)
