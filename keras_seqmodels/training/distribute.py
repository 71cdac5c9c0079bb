"""Choosing a ``tf.distribute`` strategy by name, for recipes and the CLI.

Recipes build their model, optimizer and dataset under
``get_strategy(name).scope()`` and batch with the global batch size; tf.data
auto-shards the dataset over replicas.
"""

STRATEGIES = ("default", "mirrored", "multi-worker", "tpu")


def get_strategy(name="default", tpu_address=None):
    """Return a ``tf.distribute.Strategy`` for ``name``.

    Args:
        name: ``"default"`` (one device), ``"mirrored"`` (all local GPUs, or
            the logical CPU devices), ``"multi-worker"`` (reads ``TF_CONFIG``),
            or ``"tpu"`` (untested here: needs a TPU runtime).
        tpu_address: TPU name or address for ``"tpu"``.
    """
    import tensorflow as tf

    if name not in STRATEGIES:
        raise ValueError(
            f"get_strategy: `name` must be one of {list(STRATEGIES)}. Received: name={name!r}"
        )
    if name == "default":
        return tf.distribute.get_strategy()
    if name == "mirrored":
        return tf.distribute.MirroredStrategy()
    if name == "multi-worker":
        return tf.distribute.MultiWorkerMirroredStrategy()
    resolver = tf.distribute.cluster_resolver.TPUClusterResolver(tpu=tpu_address)
    tf.config.experimental_connect_to_cluster(resolver)
    tf.tpu.experimental.initialize_tpu_system(resolver)
    return tf.distribute.TPUStrategy(resolver)
