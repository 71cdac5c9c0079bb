"""Old path of what every zoo recipe shares (one release, with a warning).

The options every recipe takes (``add_common_arguments``,
``default_data_dir``, ``PRECISIONS``) are in
``keras_seqmodels.zoo.framework.arguments``; the distributed setup
(``strategy_scope``, ``DistributedSetup``) in
``keras_seqmodels.zoo.framework.distribution``.
"""

import warnings

warnings.warn(
    "keras_seqmodels.training.recipe_utils moved to "
    "keras_seqmodels.zoo.framework.arguments (add_common_arguments, default_data_dir, "
    "PRECISIONS) and keras_seqmodels.zoo.framework.distribution (strategy_scope, "
    "DistributedSetup); the old path goes in the next release",
    DeprecationWarning,
    stacklevel=2,
)


def __getattr__(name):
    from keras_seqmodels.zoo.framework import arguments, distribution

    for module in (distribution, arguments):
        if hasattr(module, name):
            return getattr(module, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
