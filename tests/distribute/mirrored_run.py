"""Trains the same small LSTM model on 1 device and on 2 mirrored replicas.

Run by test_mirrored.py in its own process: the 2 logical CPU devices must be
configured before TensorFlow starts, which would disturb other tests.

    python tests/distribute/mirrored_run.py OUT.npz
"""

import contextlib
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ["KERAS_BACKEND"] = "tensorflow"

import tensorflow as tf  # noqa: E402

_cpu = tf.config.list_physical_devices("CPU")[0]
tf.config.set_logical_device_configuration(_cpu, [tf.config.LogicalDeviceConfiguration()] * 2)

import keras  # noqa: E402
import numpy as np  # noqa: E402

import keras_seqmodels as ks  # noqa: E402
from keras_seqmodels.zoo.framework.distribution import strategy_scope  # noqa: E402

GLOBAL_BATCH = 16


def data():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 6, 3)).astype("float32")
    y = (3.0 * rng.standard_normal((64, 1))).astype("float32")
    return x, y


def build():
    keras.utils.set_random_seed(0)
    inputs = keras.Input((6, 3))
    hidden = ks.layers.Recurrent(ks.cells.LSTMCell(8))(inputs)
    return keras.Model(inputs, keras.layers.Dense(1)(hidden))


def train(strategy, optimizer, epochs, fixes=True, steps=None):
    """``fixes``: compile with ``dist.compile`` (the fixes on this one
    optimizer), else plain ``model.compile`` and ``fit`` inside
    ``distribution_fixes()``, as the recipe framework trains."""
    x, y = data()
    block = contextlib.nullcontext() if fixes else ks.training.distribution_fixes()
    with block, strategy_scope(strategy=strategy, batch_size=GLOBAL_BATCH) as dist:
        model = build()
        initial = [w.copy() for w in model.get_weights()]
        optimizer = keras.optimizers.get(optimizer)
        if fixes:
            dist.compile(model, optimizer=optimizer, loss="mse")
        else:
            model.compile(optimizer=optimizer, loss="mse")
        dataset = dist.batch(tf.data.Dataset.from_tensor_slices((x, y)))
        history = model.fit(
            dataset, epochs=epochs, steps_per_epoch=steps, verbose=0, shuffle=False
        )
    return dist.num_replicas, history.history["loss"], initial, model.get_weights()


def first_gradient_norm():
    """Norm of the gradient of the first global batch (no clipping)."""
    x, y = data()
    model = build()
    with tf.GradientTape() as tape:
        loss = keras.losses.mean_squared_error(y[:GLOBAL_BATCH], model(x[:GLOBAL_BATCH]))
        loss = tf.reduce_mean(loss)
    grads = tape.gradient(loss, model.trainable_variables)
    return float(tf.linalg.global_norm(grads))


def main(out_path):
    results = {}
    runs = {
        # name: (optimizer config, epochs, compile with dist.compile or model.compile)
        "plain": (dict(class_name="SGD", config=dict(learning_rate=0.05)), 3, True),
        "global_clipnorm": (
            dict(class_name="SGD", config=dict(learning_rate=1.0, global_clipnorm=0.1)),
            1,
            True,
        ),
        "clipnorm": (
            dict(class_name="SGD", config=dict(learning_rate=1.0, clipnorm=0.05)),
            1,
            True,
        ),
        "global_clipnorm_compile": (
            dict(class_name="SGD", config=dict(learning_rate=1.0, global_clipnorm=0.1)),
            1,
            False,
        ),
    }
    for name, (optimizer, epochs, fixes) in runs.items():
        for label, strategy in (("one", "default"), ("two", "mirrored")):
            # The clipping runs take one step: the update itself is compared.
            steps = None if name == "plain" else 1
            replicas, losses, initial, weights = train(strategy, optimizer, epochs, fixes, steps)
            results[f"{name}/{label}/replicas"] = np.asarray(replicas)
            results[f"{name}/{label}/loss"] = np.asarray(losses)
            for i, (w0, w1) in enumerate(zip(initial, weights)):
                results[f"{name}/{label}/initial/{i}"] = w0
                results[f"{name}/{label}/final/{i}"] = w1
    results["first_gradient_norm"] = np.asarray(first_gradient_norm())
    np.savez(out_path, **results)


if __name__ == "__main__":
    main(sys.argv[1])
