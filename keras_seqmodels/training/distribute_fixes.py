"""Corrections for two Keras 3 defects under ``tf.distribute``.

``with distribution_fixes():`` applies both to every Keras optimizer and
model while the block runs and puts Keras back as it was on exit; the recipe
framework's strategy scope enters it, so the recipes get them.
``clip_after_all_reduce(optimizer)`` and ``fix_multi_worker_fit(model)``
apply them to one object; ``install_distribution_fixes()`` to the whole
process, for good.

1. **Clipping before the all-reduce.** Keras's optimizer clips the gradients
   (``clipnorm``, ``global_clipnorm``, ``clipvalue``) in each replica, on that
   replica's share of the gradient, and only then sums the shares across
   replicas. Under ``MirroredStrategy`` with 2 replicas the update is then
   ``clip(g1) + clip(g2)`` instead of ``clip(g1 + g2)``: a global norm of 1
   lets the summed gradient reach norm 2, so clipping is silently weakened.
   ``clip_after_all_reduce`` makes the optimizer sum first and clip the sum,
   which gives the single-device update (``tests/distribute``). It costs one
   extra all-reduce of the gradients per step, and only when clipping is on
   and there is more than one replica.

2. **``fit`` under ``MultiWorkerMirroredStrategy``** fails in Keras 3
   (keras-team/keras#20585): the first batch is "reduced" as one structure
   to build the model symbolically, and the per-step logs (scalars) are
   reduced with ``axis=0``. ``fix_multi_worker_fit`` takes the shapes from the
   local replica's batch and reduces scalar logs over replicas with
   ``axis=None`` (a mean, as Keras intends).

These touch private Keras methods; each function checks that they exist and
raises a clear error if a Keras release renames them.
"""

import contextlib
import functools

from keras_seqmodels import _compat


def _require(obj, name, what):
    if not callable(getattr(obj, name, None)):
        import keras

        raise RuntimeError(
            f"{what}: this Keras ({keras.__version__}) has no `{name}`; the "
            "work-around in keras_seqmodels.training.distribute_fixes needs "
            "updating for it."
        )


def _has_clipping(optimizer):
    return any(
        getattr(optimizer, name, None) for name in ("clipnorm", "global_clipnorm", "clipvalue")
    )


def _clip_summed(optimizer, grads, clip_local):
    """Sum the replicas' gradients, clip the sum, hand back equal shares."""
    import tensorflow as tf

    context = tf.distribute.get_replica_context()
    if not _has_clipping(optimizer) or context is None or context.num_replicas_in_sync == 1:
        return clip_local(grads)
    present = [i for i, g in enumerate(grads) if g is not None]
    summed = context.all_reduce(
        tf.distribute.ReduceOp.SUM, [tf.convert_to_tensor(grads[i]) for i in present]
    )
    clipped = clip_local(list(summed))
    # The optimizer sums the replicas' gradients once more before the update;
    # each replica hands in its equal share of the clipped sum.
    share = 1.0 / context.num_replicas_in_sync
    result = list(grads)
    for i, g in zip(present, clipped):
        result[i] = g * tf.cast(share, g.dtype)
    return result


def clip_after_all_reduce(optimizer):
    """Make ``optimizer`` clip the gradient summed over replicas.

    A ``LossScaleOptimizer`` is fixed through its inner optimizer. Without a
    ``tf.distribute`` strategy of more than one replica, or without clipping,
    the optimizer behaves exactly as before. A no-op once
    ``install_distribution_fixes`` has run (every optimizer is fixed then).

    Args:
        optimizer: a ``keras.optimizers.Optimizer``.

    Returns:
        The same optimizer, modified in place.

    Example:

    >>> import keras
    >>> opt = keras.optimizers.SGD(0.1, global_clipnorm=1.0)
    >>> clip_after_all_reduce(opt) is opt
    True
    """
    inner = getattr(optimizer, "inner_optimizer", None)
    if inner is not None:
        clip_after_all_reduce(inner)
        return optimizer
    if _installed() or getattr(optimizer, "_clips_after_all_reduce", False):
        return optimizer
    _require(optimizer, "_clip_gradients", "clip_after_all_reduce")
    clip_local = optimizer._clip_gradients

    @functools.wraps(clip_local)
    def clip_gradients(grads):
        return _clip_summed(optimizer, grads, clip_local)

    optimizer._clip_gradients = clip_gradients
    optimizer._clips_after_all_reduce = True
    return optimizer


def is_multi_worker(strategy):
    """True for a ``MultiWorkerMirroredStrategy`` spanning several workers."""
    import tensorflow as tf

    if not isinstance(strategy, tf.distribute.MultiWorkerMirroredStrategy):
        return False
    return strategy.extended._in_multi_worker_mode()


def _local_symbolic_build(model, iterator=None, data_batch=None):
    import tensorflow as tf

    strategy = model.distribute_strategy
    if iterator is not None:
        for _, _, it in iterator:
            batch = next(it)
            # Only shapes and dtypes are read: the local replica's batch has
            # them, and no collective op is needed.
            data_batch = tf.nest.map_structure(
                lambda v: strategy.experimental_local_results(v)[0], batch
            )
            break
    with strategy.scope():
        model._symbolic_build(data_batch=data_batch)


def fix_multi_worker_fit(model):
    """Let ``model.fit``/``evaluate`` run under ``MultiWorkerMirroredStrategy``.

    A no-op for other strategies, and once ``install_distribution_fixes`` has
    run.

    Args:
        model: a ``keras.Model`` built in the strategy's scope.

    Returns:
        ``model``, modified in place.

    Example:

    >>> import keras
    >>> model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])
    >>> fix_multi_worker_fit(model) is model
    True
    """
    if _installed() or not is_multi_worker(model.distribute_strategy):
        return model
    _require(model, "_maybe_symbolic_build", "fix_multi_worker_fit")
    _require(model, "_symbolic_build", "fix_multi_worker_fit")
    _install_scalar_log_reduction()
    model._maybe_symbolic_build = functools.partial(_local_symbolic_build, model)
    return model


def _installed():
    TFOptimizer, _, _ = _compat.tensorflow_trainer()
    return getattr(TFOptimizer, "_keras_seqmodels_fixes", False)


def install_distribution_fixes():
    """Apply both fixes to every Keras optimizer and model of this process, for good.

    Idempotent. Behaviour changes only inside a ``tf.distribute`` strategy of
    more than one replica (clipping) or several workers (``fit``). Prefer
    ``with distribution_fixes():``, which undoes them on exit.
    """
    _install()


def _install():
    """Patch Keras; return a function that restores what was patched (a
    no-op when the fixes were already in place)."""
    if _installed():
        return lambda: None
    TFOptimizer, TensorFlowTrainer, trainer = _compat.tensorflow_trainer()
    _require(TFOptimizer, "_clip_gradients", "install_distribution_fixes")
    _require(TensorFlowTrainer, "_maybe_symbolic_build", "install_distribution_fixes")
    _require(TensorFlowTrainer, "_symbolic_build", "install_distribution_fixes")
    clip_local = TFOptimizer._clip_gradients
    symbolic_build = TensorFlowTrainer._maybe_symbolic_build
    # What each class defines itself (an inherited method is not put back on it).
    own = [(TFOptimizer, "_clip_gradients"), (TensorFlowTrainer, "_maybe_symbolic_build")]
    own = [(cls, name, cls.__dict__[name]) for cls, name in own if name in cls.__dict__]
    reduce_original = trainer.reduce_per_replica

    @functools.wraps(clip_local)
    def clip_gradients(self, grads):
        return _clip_summed(self, grads, functools.partial(clip_local, self))

    @functools.wraps(symbolic_build)
    def maybe_symbolic_build(self, iterator=None, data_batch=None):
        if not is_multi_worker(getattr(self, "_distribute_strategy", None)):
            return symbolic_build(self, iterator=iterator, data_batch=data_batch)
        return _local_symbolic_build(self, iterator=iterator, data_batch=data_batch)

    _install_scalar_log_reduction()
    TFOptimizer._clip_gradients = clip_gradients
    TensorFlowTrainer._maybe_symbolic_build = maybe_symbolic_build
    TFOptimizer._keras_seqmodels_fixes = True

    def undo():
        del TFOptimizer._clip_gradients, TensorFlowTrainer._maybe_symbolic_build
        for cls, name, value in own:
            setattr(cls, name, value)
        trainer.reduce_per_replica = reduce_original
        del TFOptimizer._keras_seqmodels_fixes

    return undo


@contextlib.contextmanager
def distribution_fixes():
    """Apply both fixes to every Keras optimizer and model inside the block.

    On exit Keras's methods are as they were before (fixes that were already
    installed, by ``install_distribution_fixes`` or an enclosing block, stay).
    The recipe framework trains inside it.

    Returns:
        A context manager; the fixes apply from entering it to leaving it.

    Example:

    >>> from keras_seqmodels.training.distribute_fixes import fixes_active
    >>> with distribution_fixes():
    ...     fixes_active()
    True
    >>> fixes_active()
    False
    """
    undo = _install()
    try:
        yield
    finally:
        undo()


def fixes_active():
    """Whether the process-wide fixes are in place now."""
    return _installed()


def _install_scalar_log_reduction():
    _, _, trainer = _compat.tensorflow_trainer()
    if getattr(trainer.reduce_per_replica, "_keras_seqmodels_fix", False):
        return
    _require(trainer, "reduce_per_replica", "fix_multi_worker_fit")
    _require(trainer, "_collective_all_reduce_multi_worker", "fix_multi_worker_fit")
    original = trainer.reduce_per_replica

    @functools.wraps(original)
    def reduce_per_replica(values, strategy, reduction):
        if reduction not in ("auto", "mean") or not (
            trainer._collective_all_reduce_multi_worker(strategy)
        ):
            return original(values, strategy, reduction)
        import tensorflow as tf

        def reduce(v):
            if getattr(v, "shape", None) is not None and v.shape.rank == 0:
                return strategy.reduce("MEAN", v, axis=None)
            return original(v, strategy, reduction)

        return tf.nest.map_structure(reduce, values)

    reduce_per_replica._keras_seqmodels_fix = True
    trainer.reduce_per_replica = reduce_per_replica
