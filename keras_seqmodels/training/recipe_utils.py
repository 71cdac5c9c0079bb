"""What every zoo recipe shares: command-line options and distributed setup.

A recipe's ``main(argv)`` does::

    parser = argparse.ArgumentParser()
    recipe_utils.add_common_arguments(parser, epochs=10, batch_size=64)
    args = parser.parse_args(argv)
    with recipe_utils.strategy_scope(args) as dist:
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

from keras_seqmodels.training.distribute import STRATEGIES, get_strategy
from keras_seqmodels.training.distribute_fixes import (
    clip_after_all_reduce,
    fix_multi_worker_fit,
    is_multi_worker,
)

PRECISIONS = ("float32", "mixed_float16", "mixed_bfloat16")


def default_data_dir():
    """``../shared/data`` beside the checkout when it exists, else ``None``."""
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(os.path.dirname(here))
    candidate = os.path.join(os.path.dirname(root), "shared", "data")
    return candidate if os.path.isdir(candidate) else None


def add_common_arguments(parser, epochs=10, batch_size=32, data_dir=None, epochs_help=None):
    """Add the options every recipe takes to an ``argparse`` parser.

    ``--data-dir``, ``--epochs``, ``--batch-size`` (global, over all
    replicas), ``--strategy {default,mirrored,multi-worker,tpu}``, ``--tpu``
    (TPU name or address) and ``--precision {float32,mixed_float16,
    mixed_bfloat16}``. ``--epochs`` must be positive, or with
    ``epochs_help`` (what 0 means, shown in ``--help``) at least 0.
    Returns the parser.
    """
    parser.add_argument(
        "--data-dir",
        default=data_dir or default_data_dir(),
        help="folder of the shared data sets (default: $KERAS_SEQMODELS_DATA, else "
        "shared/data beside the checkout's folder, where it exists)",
    )
    if epochs_help is None:
        parser.add_argument("--epochs", type=_positive_int, default=epochs)
    else:
        parser.add_argument("--epochs", type=_count, default=epochs, help=epochs_help)
    parser.add_argument(
        "--batch-size",
        type=_positive_int,
        default=batch_size,
        help="global batch size, split over the replicas",
    )
    parser.add_argument(
        "--strategy",
        choices=STRATEGIES,
        default="default",
        help="tf.distribute strategy: one device, all local devices, the "
        "workers of TF_CONFIG, or a TPU (untested here)",
    )
    parser.add_argument("--tpu", default=None, help="TPU name or address")
    parser.add_argument("--precision", choices=PRECISIONS, default="float32")
    return parser


def _positive_int(text):
    return _integer_at_least(text, 1, "a positive integer")


def _count(text):
    return _integer_at_least(text, 0, "an integer >= 0")


def _integer_at_least(text, low, expected):
    import argparse

    try:
        value = int(text)
    except ValueError:
        value = low - 1
    if value < low:
        raise argparse.ArgumentTypeError(f"must be {expected}. Received: {text!r}")
    return value


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
