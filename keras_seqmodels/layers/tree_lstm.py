"""Old path of ``keras_seqmodels.trees.tree_lstm`` (one release, with a warning)."""

import warnings

warnings.warn(
    "keras_seqmodels.layers.tree_lstm moved to keras_seqmodels.trees.tree_lstm; "
    "the old path goes in the next release",
    DeprecationWarning,
    stacklevel=2,
)


def __getattr__(name):
    from keras_seqmodels.trees import tree_lstm

    return getattr(tree_lstm, name)
