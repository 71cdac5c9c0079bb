"""Training continues through NaN/Inf batches and overflowing gradients.

Uses the package's non-finite-gradient handling (``NonFiniteGuard`` and
``NonFiniteGradientLogger`` of ``keras_seqmodels.training``): every step whose
gradient is not finite is skipped (or replaced by a small random step) and
counted. Each epoch of the data below has three poisoned batches out of four:
a NaN in the inputs, an Inf in the inputs, and finite inputs with a target of
3e38, whose squared-error gradient overflows float32.
"""

import keras
import numpy as np
import pytest
from fuzz_record import record

import keras_seqmodels as ks

BATCH, EPOCHS = 8, 3
POISONED_PER_EPOCH = 3


def poisoned_data():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4 * BATCH, 6, 3)).astype("float32")
    y = rng.standard_normal((4 * BATCH, 1)).astype("float32")
    x[BATCH + 2, 3, 1] = np.nan  # batch 1
    x[2 * BATCH + 5, 0, 2] = np.inf  # batch 2
    y[3 * BATCH + 1, 0] = 3e38  # batch 3: finite, but the gradient overflows
    return x, y


def make_model(optimizer):
    keras.utils.set_random_seed(7)
    inputs = keras.Input((6, 3))
    h = ks.layers.Recurrent(ks.cells.LSTMCell(4))(inputs)
    model = keras.Model(inputs, keras.layers.Dense(1)(h))
    # Summed, not averaged: the gradient of the 3e38 target, 2 (p - y),
    # overflows float32 (with a mean it would be a finite 7.5e37, see below).
    model.compile(optimizer=optimizer, loss=keras.losses.MeanSquaredError(reduction="sum"))
    return model


def all_finite(model):
    return all(np.all(np.isfinite(w)) for w in model.get_weights())


class PerBatch(keras.callbacks.Callback):
    """Records, after each batch, the event count and whether weights moved."""

    def __init__(self, guard):
        super().__init__()
        self.guard = guard
        self.rows = []

    def on_train_batch_begin(self, batch, logs=None):
        self._sync()
        self.before = self.model.get_weights()

    def on_train_batch_end(self, batch, logs=None):
        self._sync()
        moved = any(
            not np.array_equal(a, b)
            for a, b in zip(self.before, self.model.get_weights(), strict=True)
        )
        count = int(keras.ops.convert_to_numpy(self.guard.nonfinite_steps))
        self.rows.append((batch, count, moved))

    def _sync(self):
        sync = getattr(self.model, "jax_state_sync", None)
        if sync is not None:
            sync()


@pytest.mark.parametrize("action", ["skip", "random_step"])
def test_training_continues_and_counts_nonfinite_steps(action):
    x, y = poisoned_data()
    guard = ks.training.NonFiniteGuard(
        keras.optimizers.SGD(0.05), action=action, step_norm=0.01, seed=3
    )
    model = make_model(guard)
    per_batch = PerBatch(guard)
    history = model.fit(
        x,
        y,
        batch_size=BATCH,
        epochs=EPOCHS,
        shuffle=False,
        verbose=0,
        callbacks=[ks.training.NonFiniteGradientLogger(), per_batch],
    )
    assert len(history.history["loss"]) == EPOCHS
    assert all_finite(model)
    expected = [POISONED_PER_EPOCH * (e + 1) for e in range(EPOCHS)]
    assert history.history["nonfinite_steps"] == expected
    assert int(keras.ops.convert_to_numpy(guard.nonfinite_steps)) == expected[-1]
    # Each poisoned batch (1, 2, 3) is one event; the clean batch 0 is none.
    counts = [c for _, c, _ in per_batch.rows]
    events = np.diff([0] + counts).tolist()
    assert events == [0, 1, 1, 1] * EPOCHS
    # A skipped step leaves the weights as they were; a random step moves them.
    poisoned_moved = [m for b, _, m in per_batch.rows if b > 0]
    assert all(poisoned_moved) if action == "random_step" else not any(poisoned_moved)
    record("non-finite batches", f"{action}: trained through")
    record("non-finite batches", f"{action}: events counted")

    if action == "skip":
        # Skipping is exact: the same as training on the clean batch alone.
        clean = make_model(keras.optimizers.SGD(0.05))
        clean.fit(
            x[:BATCH],
            y[:BATCH],
            batch_size=BATCH,
            epochs=EPOCHS,
            shuffle=False,
            verbose=0,
        )
        for a, b in zip(model.get_weights(), clean.get_weights(), strict=True):
            np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)


def test_control_without_the_guard_the_weights_are_destroyed():
    x, y = poisoned_data()
    model = make_model(keras.optimizers.SGD(0.05))
    model.fit(x, y, batch_size=BATCH, epochs=1, shuffle=False, verbose=0)
    assert not all_finite(model)


def test_a_huge_finite_gradient_is_bounded_by_the_inner_clipping():
    # Not a non-finite event: a finite gradient of about 1e15 passes the
    # guard; without clipping it throws the weights far away and later
    # steps overflow. The inner optimizer's global_clipnorm bounds the step.
    x, y = poisoned_data()
    x, y = x[:BATCH].copy(), y[:BATCH].copy()
    y[0, 0] = 1e15
    guard = ks.training.NonFiniteGuard(
        keras.optimizers.SGD(0.05, global_clipnorm=1.0), action="skip"
    )
    model = make_model(guard)
    before = model.get_weights()
    model.fit(x, y, batch_size=BATCH, epochs=2, verbose=0)
    assert int(keras.ops.convert_to_numpy(guard.nonfinite_steps)) == 0
    moved = np.sqrt(sum(np.sum((a - b) ** 2) for a, b in zip(before, model.get_weights())))
    assert 0 < moved <= 2 * 0.05 * 1.0 + 1e-6  # two steps of norm <= lr * global_clipnorm
    assert all_finite(model)
    record("non-finite batches", "huge finite gradient: clipped")
