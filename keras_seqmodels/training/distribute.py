"""Choosing a ``tf.distribute`` strategy by name, for recipes and the CLI.

Recipes build their model, optimizer and dataset under
``get_strategy(name).scope()`` and batch with the global batch size; tf.data
auto-shards the dataset over replicas (the recipe framework's
``keras_seqmodels.zoo.framework.distribution.strategy_scope`` does all of
this, inside ``distribution_fixes()``).

TPU (written, untested here: this project has no TPU): ``get_strategy("tpu",
tpu_address=...)`` resolves the TPU (``TPUClusterResolver``: a name, a
``grpc://`` address, or ``None``/``"local"`` on a TPU VM), connects to it and
initialises the TPU system. XLA compiles the training step for fixed shapes,
so recipes compile with ``jit_compile=True``, batch with
``drop_remainder=True`` and pad sequences to fixed lengths or length buckets
(``DistributedSetup.batch(padded_shapes=...)`` / ``bucket_batch``).
"""

STRATEGIES = ("default", "mirrored", "multi-worker", "tpu")


def get_strategy(name="default", tpu_address=None):
    """Return a ``tf.distribute.Strategy`` for ``name``.

    Args:
        name: ``"default"`` (one device), ``"mirrored"`` (all local GPUs, or,
            without GPUs, all logical CPU devices), ``"multi-worker"`` (the
            cluster of ``TF_CONFIG``; every worker runs the same command), or
            ``"tpu"`` (untested here: needs a TPU runtime).
        tpu_address: TPU name or address for ``"tpu"``.

    Returns:
        A ``tf.distribute.Strategy``; build and compile the model inside its
        ``scope()``, and train inside ``distribution_fixes()``
        (``keras_seqmodels.training.distribute_fixes``: Keras clips each
        replica's gradient before summing them, and its ``fit`` fails under
        ``MultiWorkerMirroredStrategy``); the recipe framework does both.

    Example:

    >>> strategy = get_strategy("default")
    >>> strategy.num_replicas_in_sync
    1
    """
    import tensorflow as tf

    if name not in STRATEGIES:
        raise ValueError(
            f"get_strategy: `name` must be one of {list(STRATEGIES)}. Received: name={name!r}"
        )
    if name == "default":
        return tf.distribute.get_strategy()
    if name == "mirrored":
        if tf.config.list_logical_devices("GPU"):
            return tf.distribute.MirroredStrategy()
        # MirroredStrategy() alone takes only CPU:0 on a machine without GPUs.
        cpus = [d.name for d in tf.config.list_logical_devices("CPU")]
        return tf.distribute.MirroredStrategy(cpus)
    if name == "multi-worker":
        return tf.distribute.MultiWorkerMirroredStrategy()
    resolver = tf.distribute.cluster_resolver.TPUClusterResolver(tpu=tpu_address)
    tf.config.experimental_connect_to_cluster(resolver)
    tf.tpu.experimental.initialize_tpu_system(resolver)
    return tf.distribute.TPUStrategy(resolver)
