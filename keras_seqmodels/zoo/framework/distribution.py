"""The distribution a recipe trains under, on TensorFlow or JAX.

TensorFlow: ``tf.distribute`` by ``--strategy`` (``default``, ``mirrored``,
``multi-worker``, ``tpu``) through ``training.recipe_utils``, inside
``distribution_fixes()`` (clipping and multi-worker ``fit``). JAX: ``keras.distribution``; every
strategy but ``default`` is ``DataParallel`` over the local devices
(``multi-worker`` first calls ``keras.distribution.initialize()``, ``tpu``
takes the TPU devices). ``--batch-size`` is the global batch on both.
"""

import contextlib

import keras

from keras_seqmodels.training import recipe_utils


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
    from keras_seqmodels.training.distribute import get_strategy

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
            recipe_utils.strategy_scope(args, strategy=strategy) as tf_setup,
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
