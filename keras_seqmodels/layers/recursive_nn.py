"""Old path of ``keras_seqmodels.trees.recursive_nn`` (one release, with a warning)."""

import warnings

warnings.warn(
    "keras_seqmodels.layers.recursive_nn moved to keras_seqmodels.trees.recursive_nn; "
    "the old path goes in the next release",
    DeprecationWarning,
    stacklevel=2,
)


def __getattr__(name):
    from keras_seqmodels.trees import recursive_nn

    return getattr(recursive_nn, name)
