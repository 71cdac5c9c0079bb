"""The recipes' common options and distributed setup
(``keras_seqmodels.zoo.framework.arguments`` and ``.distribution``) on one
device (no subprocess)."""

import argparse

import keras
import numpy as np
import pytest

import keras_seqmodels as ks
from keras_seqmodels.training import get_strategy
from keras_seqmodels.zoo.framework.arguments import add_common_arguments
from keras_seqmodels.zoo.framework.distribution import DistributedSetup, strategy_scope

pytestmark = pytest.mark.tf_only


def parse(*argv):
    parser = argparse.ArgumentParser()
    add_common_arguments(parser, epochs=3, batch_size=8)
    return parser.parse_args(list(argv))


def test_common_arguments_defaults_and_choices(capsys):
    args = parse()
    assert (args.epochs, args.batch_size, args.strategy) == (3, 8, "default")
    assert args.precision == "float32" and args.tpu is None
    args = parse("--strategy", "mirrored", "--batch-size", "64", "--epochs", "1")
    assert (args.strategy, args.batch_size, args.epochs) == ("mirrored", 64, 1)
    for bad in (["--strategy", "gpu"], ["--batch-size", "0"], ["--epochs", "x"]):
        with pytest.raises(SystemExit):
            parse(*bad)
    assert "invalid" in capsys.readouterr().err


def test_unknown_strategy_name():
    with pytest.raises(ValueError, match="Received: name='gpu'"):
        get_strategy("gpu")


class TwoReplicas:
    """Stands in for a strategy with 2 replicas (only what the setup reads)."""

    num_replicas_in_sync = 2
    cluster_resolver = None


def test_global_batch_must_split_evenly():
    setup = DistributedSetup(TwoReplicas(), 64)
    assert (setup.global_batch_size, setup.per_replica_batch_size) == (64, 32)
    with pytest.raises(ValueError, match="multiple of the number of replicas"):
        DistributedSetup(TwoReplicas(), 33)


def test_batch_sets_data_sharding_and_global_batch():
    import tensorflow as tf

    with strategy_scope(parse("--batch-size", "4")) as dist:
        assert dist.num_replicas == 1 and dist.is_chief and not dist.is_tpu
        data = dist.batch(tf.data.Dataset.range(10))
    assert (
        data.options().experimental_distribute.auto_shard_policy
        == tf.data.experimental.AutoShardPolicy.DATA
    )
    assert [len(b) for b in data.as_numpy_iterator()] == [4, 4, 2]
    # padded to a fixed length, last partial batch dropped
    ragged = tf.data.Dataset.from_generator(
        lambda: ([1] * n for n in (1, 2, 3, 4, 5)),
        output_signature=tf.TensorSpec([None], tf.int32),
    )
    with strategy_scope(strategy="default", batch_size=2) as dist:
        padded = dist.batch(ragged, padded_shapes=[6], drop_remainder=True)
    shapes = [b.shape for b in padded.as_numpy_iterator()]
    assert shapes == [(2, 6), (2, 6)]


def test_bucket_batch_gives_static_bucket_shapes():
    import tensorflow as tf

    lengths = list(range(1, 21)) * 2
    ragged = tf.data.Dataset.from_generator(
        lambda: (np.arange(1, n + 1, dtype="int32") for n in lengths),
        output_signature=tf.TensorSpec([None], tf.int32),
    )
    with strategy_scope(strategy="default", batch_size=4) as dist:
        data = dist.bucket_batch(ragged, lambda x: tf.shape(x)[0], [8, 16])
    batches = list(data.as_numpy_iterator())
    assert batches and {b.shape for b in batches} <= {(4, 8), (4, 16)}
    # Every kept sequence sits in the smallest bucket that holds it.
    for b in batches:
        longest = int((b > 0).sum(axis=1).max())
        assert b.shape[1] == (8 if longest <= 8 else 16)
    # Lengths 17..20 (8 sequences) are dropped; 32 remain, in full batches.
    assert sum(len(b) for b in batches) == 32


def test_precision_option_sets_the_policy():
    previous = keras.config.dtype_policy()
    try:
        with strategy_scope(parse("--precision", "mixed_bfloat16")):
            pass
        assert keras.config.dtype_policy().name == "mixed_bfloat16"
    finally:
        keras.config.set_dtype_policy(previous)


def test_distribution_fixes_are_undone_on_exit():
    from keras_seqmodels import _compat
    from keras_seqmodels.training import distribute_fixes

    optimizer_class, trainer_class, trainer = _compat.tensorflow_trainer()
    before = (
        optimizer_class._clip_gradients,
        trainer_class._maybe_symbolic_build,
        trainer.reduce_per_replica,
        dict(optimizer_class.__dict__).keys(),
    )
    assert not distribute_fixes.fixes_active()
    with ks.training.distribution_fixes():
        assert distribute_fixes.fixes_active()
        assert optimizer_class._clip_gradients is not before[0]
        assert trainer_class._maybe_symbolic_build is not before[1]
        with ks.training.distribution_fixes():  # nested: the outer block's stay
            pass
        assert distribute_fixes.fixes_active()
    assert not distribute_fixes.fixes_active()
    after = (
        optimizer_class._clip_gradients,
        trainer_class._maybe_symbolic_build,
        trainer.reduce_per_replica,
        dict(optimizer_class.__dict__).keys(),
    )
    assert after == before


def test_get_strategy_changes_nothing_process_wide():
    from keras_seqmodels.training import distribute_fixes

    get_strategy("mirrored")
    assert not distribute_fixes.fixes_active()
