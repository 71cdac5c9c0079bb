"""One worker of a 2-worker MultiWorkerMirroredStrategy run on 127.0.0.1.

Started twice by test_multi_worker.py (``TF_CONFIG`` set by the test):

    python tests/distribute/multi_worker_run.py OUT_DIR

Each worker trains the same small LSTM model for 2 epochs of 4 steps with
the global batch split over the 2 workers, then writes its weights and loss
curve to OUT_DIR/worker<i>.npz; the chief also saves OUT_DIR/model.keras
(the other worker saves to a private folder, as ``checkpoint_path`` says).
"""

import json
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ["KERAS_BACKEND"] = "tensorflow"

import keras  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

import keras_seqmodels as ks  # noqa: E402
from keras_seqmodels.zoo.framework.distribution import strategy_scope  # noqa: E402


def main(out_dir):
    task = json.loads(os.environ["TF_CONFIG"])["task"]["index"]
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 6, 3)).astype("float32")
    y = (3.0 * rng.standard_normal((64, 1))).astype("float32")
    with strategy_scope(strategy="multi-worker", batch_size=16) as dist:
        keras.utils.set_random_seed(0)
        inputs = keras.Input((6, 3))
        hidden = ks.layers.Recurrent(ks.cells.LSTMCell(8))(inputs)
        model = keras.Model(inputs, keras.layers.Dense(1)(hidden))
        initial = model.get_weights()
        dist.compile(
            model,
            optimizer=keras.optimizers.SGD(0.05, global_clipnorm=1.0),
            loss="mse",
        )
        dataset = dist.batch(tf.data.Dataset.from_tensor_slices((x, y)))
    history = model.fit(dataset, epochs=2, verbose=0)
    model.save(dist.checkpoint_path(os.path.join(out_dir, "model.keras")))
    arrays = {f"weight{i}": w for i, w in enumerate(model.get_weights())}
    arrays.update({f"initial{i}": w for i, w in enumerate(initial)})
    np.savez(
        os.path.join(out_dir, f"worker{task}.npz"),
        loss=np.asarray(history.history["loss"]),
        replicas=np.asarray(dist.num_replicas),
        is_chief=np.asarray(dist.is_chief),
        prediction=np.asarray(model.predict(x[:4], verbose=0)),
        **arrays,
    )


if __name__ == "__main__":
    main(sys.argv[1])
