"""The distribution a recipe trains under, on TensorFlow or JAX.

TensorFlow: ``tf.distribute`` by ``--strategy`` (``default``, ``mirrored``,
``multi-worker``, ``tpu``) through ``strategy_scope``, inside
``distribution_fixes()`` (clipping and multi-worker ``fit``). JAX: ``keras.distribution``; every
strategy but ``default`` is ``DataParallel`` over the local devices
(``multi-worker`` first calls ``keras.distribution.initialize()``, ``tpu``
takes the TPU devices). ``--batch-size`` is the global batch on both.

``strategy_scope`` is the TensorFlow part, usable in a script of one's own::

    parser = argparse.ArgumentParser()
    arguments.add_common_arguments(parser, epochs=10, batch_size=64)
    args = parser.parse_args(argv)
    with strategy_scope(args) as dist:
        model = build_model()
        dist.compile(model, optimizer=keras.optimizers.Adam(1e-3),
                     loss="sparse_categorical_crossentropy")
        train = dist.batch(train_examples, shuffle_buffer=10_000, seed=0)
    model.fit(train, epochs=args.epochs)

``--batch-size`` is the *global* batch: ``tf.distribute`` splits each batch
over the replicas (``dist.per_replica_batch_size`` each), so one step sees the
same examples and, with the loss averaged over the global batch (Keras's
default), gives the same update on 1 or N replicas.
"""

import contextlib
import os

import keras

from keras_seqmodels.training.distribute import get_strategy
from keras_seqmodels.training.distribute_fixes import (
    clip_after_all_reduce,
    fix_multi_worker_fit,
    is_multi_worker,
)
from keras_seqmodels.zoo.framework.arguments import PRECISIONS


class Setup:
    """How to compile and batch for the current backend and strategy."""

    def __init__(self, tf_setup=None, batch_size=32):
        self.tf_setup = tf_setup
        self.batch_size = batch_size

    def compile(self, model, **kwargs):
        if self.tf_setup is not None:
            return self.tf_setup.compile(model, **kwargs)
        model.compile(**kwargs)
        return model

    def fit_inputs(self, data, shuffle=False, seed=None):
        """``fit`` keyword arguments for a data tuple or a dataset.

        ``shuffle`` reaches ``fit`` only with in-memory arrays, which ``fit``
        batches; a ``tf.data.Dataset`` or ``PyDataset`` orders its own
        batches and gets ``shuffle=False`` (``fit``'s default, True, makes
        Keras warn for a ``tf.data.Dataset`` and reorder a ``PyDataset``'s
        batches)."""
        if not isinstance(data, tuple):
            return {"x": data, "shuffle": False}
        if self.tf_setup is not None:
            import tensorflow as tf

            dataset = tf.data.Dataset.from_tensor_slices(data)
            buffer = len(data[0]) if shuffle else 0
            batches = self.tf_setup.batch(dataset, shuffle_buffer=buffer, seed=seed)
            return {"x": batches, "shuffle": False}
        names = ("x", "y", "sample_weight")
        return dict(zip(names, data), batch_size=self.batch_size, shuffle=shuffle)

    def validation_data(self, data):
        """``fit``'s ``validation_data`` (batched like the training data)."""
        if isinstance(data, tuple) and self.tf_setup is not None:
            return self.fit_inputs(data)["x"]
        return data


def create(args):
    """The ``tf.distribute`` strategy of ``args.strategy``, made now.

    Call it before any TensorFlow operation of the process runs (data
    loading, ``set_random_seed``): ``MultiWorkerMirroredStrategy`` configures
    the collective operations of the eager context, which TensorFlow allows
    only before that context starts ("Collective ops must be configured at
    program startup"). ``None`` on other backends (``scope`` then sets up
    ``keras.distribution``)."""
    if keras.backend.backend() != "tensorflow":
        return None
    return get_strategy(args.strategy, tpu_address=getattr(args, "tpu", None))


@contextlib.contextmanager
def scope(args, strategy=None):
    """Set the precision, enter the strategy (``strategy``, made by
    ``create``, or one made from ``args`` now); yield a ``Setup``."""
    backend = keras.backend.backend()
    if backend == "tensorflow":
        from keras_seqmodels.training.distribute_fixes import distribution_fixes

        # Keras's clipping and multi-worker fit corrected while the recipe
        # trains, and put back as they were when it is done.
        with (
            distribution_fixes(),
            strategy_scope(args, strategy=strategy) as tf_setup,
        ):
            yield Setup(tf_setup, args.batch_size)
        return
    keras.config.set_dtype_policy(args.precision)
    if args.strategy == "default":
        yield Setup(None, args.batch_size)
        return
    if backend != "jax":
        raise ValueError(
            f"--strategy {args.strategy} needs the TensorFlow or JAX backend. "
            f"Received: KERAS_BACKEND={backend!r}"
        )
    if args.strategy == "multi-worker":
        keras.distribution.initialize()
    devices = keras.distribution.list_devices("tpu" if args.strategy == "tpu" else None)
    if args.batch_size % len(devices):
        raise ValueError(
            f"The global batch size must be a multiple of the number of devices "
            f"({len(devices)}). Received: batch_size={args.batch_size}"
        )
    previous = keras.distribution.distribution()
    keras.distribution.set_distribution(keras.distribution.DataParallel(devices=devices))
    try:
        yield Setup(None, args.batch_size)
    finally:
        keras.distribution.set_distribution(previous)


class DistributedSetup:
    """A strategy with the global batch size, and helpers that use both.

    Made by ``strategy_scope``; see the module docstring.

    Attributes:
        strategy: the ``tf.distribute.Strategy``.
        global_batch_size: examples per step over all replicas.
        per_replica_batch_size: examples per step on each replica.
        num_replicas: ``strategy.num_replicas_in_sync``.
        is_chief: whether this process writes checkpoints and artifacts.
        is_tpu: whether the strategy is a ``TPUStrategy``.
    """

    def __init__(self, strategy, global_batch_size):
        import tensorflow as tf

        self.strategy = strategy
        self.num_replicas = strategy.num_replicas_in_sync
        if global_batch_size % self.num_replicas:
            raise ValueError(
                f"The global batch size must be a multiple of the number of "
                f"replicas ({self.num_replicas}) so every replica gets the "
                f"same share. Received: batch_size={global_batch_size}"
            )
        self.global_batch_size = int(global_batch_size)
        self.per_replica_batch_size = self.global_batch_size // self.num_replicas
        self.is_tpu = isinstance(strategy, tf.distribute.TPUStrategy)
        self.is_chief = _is_chief(strategy)

    def compile(self, model, optimizer, jit_compile="auto", **compile_kwargs):
        """``model.compile`` with the distribution fixes applied.

        Clipping set on ``optimizer`` acts on the gradient summed over
        replicas (``clip_after_all_reduce``); ``fit`` works under
        ``MultiWorkerMirroredStrategy`` (``fix_multi_worker_fit``); on a TPU
        the step is compiled with XLA (``jit_compile=True``).
        """
        import keras

        optimizer = keras.optimizers.get(optimizer)
        if self.is_tpu and jit_compile == "auto":
            jit_compile = True
        model.compile(optimizer=optimizer, jit_compile=jit_compile, **compile_kwargs)
        # compile() may wrap the optimizer (LossScaleOptimizer for float16).
        clip_after_all_reduce(model.optimizer)
        fix_multi_worker_fit(model)
        return model

    def batch(
        self,
        dataset,
        shuffle_buffer=0,
        seed=None,
        drop_remainder=None,
        padded_shapes=None,
        padding_values=None,
    ):
        """Batch an unbatched ``tf.data.Dataset`` with the global batch size.

        Shuffles first if ``shuffle_buffer`` > 0, pads to ``padded_shapes``
        when given (``padded_batch``; on a TPU give fixed lengths, e.g.
        ``([64], [64])``, so every batch has one static shape, or use
        ``bucket_batch``), drops the last partial batch on a TPU (static
        batch dimension) unless ``drop_remainder`` says otherwise, sets
        auto-sharding by data (each worker keeps every N-th batch, which
        works for in-memory and file-backed sets alike) and prefetches.
        """
        import tensorflow as tf

        if shuffle_buffer:
            dataset = dataset.shuffle(shuffle_buffer, seed=seed)
        if drop_remainder is None:
            drop_remainder = self.is_tpu
        if padded_shapes is not None:
            dataset = dataset.padded_batch(
                self.global_batch_size,
                padded_shapes=padded_shapes,
                padding_values=padding_values,
                drop_remainder=drop_remainder,
            )
        else:
            dataset = dataset.batch(self.global_batch_size, drop_remainder=drop_remainder)
        return self.shard_options(dataset).prefetch(tf.data.AUTOTUNE)

    def shard_options(self, dataset):
        """Set ``AutoShardPolicy.DATA`` on a batched dataset (no copy)."""
        import tensorflow as tf

        options = tf.data.Options()
        options.experimental_distribute.auto_shard_policy = (
            tf.data.experimental.AutoShardPolicy.DATA
        )
        return dataset.with_options(options)

    def bucket_batch(self, dataset, length_fn, boundaries, padding_values=None):
        """Batch by length buckets, each padded to its bucket's boundary.

        For TPUs and XLA: every batch has one of ``len(boundaries)`` shapes,
        so the step compiles that many times rather than once per length.
        ``boundaries`` are the bucket's longest lengths (e.g. ``[16, 32,
        64]``); longer sequences are dropped. Full batches only.
        """
        import tensorflow as tf

        boundaries = sorted(int(b) for b in boundaries)
        dataset = dataset.filter(lambda *e: length_fn(*e) <= boundaries[-1])
        dataset = dataset.bucket_by_sequence_length(
            element_length_func=length_fn,
            # Bucket i holds lengths < b_i + 1 and is padded to b_i.
            bucket_boundaries=[b + 1 for b in boundaries],
            bucket_batch_sizes=[self.global_batch_size] * (len(boundaries) + 1),
            padding_values=padding_values,
            pad_to_bucket_boundary=True,
            drop_remainder=True,
        )
        return self.shard_options(dataset).prefetch(tf.data.AUTOTUNE)

    def checkpoint_path(self, path):
        """Where this worker writes ``path``: the path itself on the chief,
        a worker-private folder elsewhere (every worker must save, since
        saving may run collective ops, but only the chief's copy is kept)."""
        if self.is_chief:
            return path
        task = self.strategy.cluster_resolver.task_id
        folder = os.path.join(os.path.dirname(os.path.abspath(path)), f".worker{task}")
        os.makedirs(folder, exist_ok=True)
        return os.path.join(folder, os.path.basename(path))


def _is_chief(strategy):
    resolver = getattr(strategy, "cluster_resolver", None)
    if resolver is None or not is_multi_worker(strategy):
        return True
    task_type, task_id = resolver.task_type, resolver.task_id
    if task_type == "chief":
        return True
    spec = resolver.cluster_spec().as_dict()
    return task_type == "worker" and task_id == 0 and "chief" not in spec


@contextlib.contextmanager
def strategy_scope(args=None, strategy=None, batch_size=None):
    """Enter ``strategy.scope()`` and yield a ``DistributedSetup``.

    Args:
        args: parsed arguments from a parser set up by
            ``add_common_arguments`` (reads ``strategy``, ``tpu``,
            ``batch_size`` and ``precision``).
        strategy: a strategy name or ``tf.distribute.Strategy``, instead of
            ``args.strategy``.
        batch_size: the global batch size, instead of ``args.batch_size``.

    Build the model, the optimizer (``dist.compile``) and the datasets
    (``dist.batch``) inside the ``with`` block, so variables are mirrored.
    """
    import keras

    strategy = strategy if strategy is not None else getattr(args, "strategy", "default")
    if isinstance(strategy, str):
        strategy = get_strategy(strategy, tpu_address=getattr(args, "tpu", None))
    if batch_size is None:
        batch_size = getattr(args, "batch_size", None)
    if batch_size is None:
        raise ValueError("strategy_scope: give `batch_size` or `args` with `batch_size`.")
    precision = getattr(args, "precision", None)
    if precision is not None:
        if precision not in PRECISIONS:
            raise ValueError(
                f"strategy_scope: `precision` must be one of {list(PRECISIONS)}. "
                f"Received: precision={precision!r}"
            )
        keras.config.set_dtype_policy(precision)
    setup = DistributedSetup(strategy, batch_size)
    with strategy.scope():
        yield setup
