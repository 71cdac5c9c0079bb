"""keras.callbacks.TensorBoard works with the package's layers after the plain install."""

import glob

import keras
import numpy as np

import keras_seqmodels as ks


def _scalars(log_dir):
    """{tag: [values]} of every event file under ``log_dir`` (TensorBoard's reader)."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    from tensorboard.util import tensor_util

    found = {}
    for path in glob.glob(f"{log_dir}/**/events.out.tfevents.*", recursive=True):
        acc = EventAccumulator(path, size_guidance={"tensors": 0, "scalars": 0})
        acc.Reload()
        for tag in acc.Tags()["tensors"]:
            values = [tensor_util.make_ndarray(e.tensor_proto) for e in acc.Tensors(tag)]
            # Keras also logs the model's config as a string tensor: scalars only.
            found.setdefault(tag, []).extend(
                float(v) for v in values if v.ndim == 0 and v.dtype.kind == "f"
            )
        for tag in acc.Tags()["scalars"]:
            found.setdefault(tag, []).extend(e.value for e in acc.Scalars(tag))
    return found


def test_tensorboard_callback_writes_loss(tmp_path):
    rng = np.random.default_rng(0)
    x = rng.integers(1, 20, (16, 6))
    y = rng.integers(0, 3, (16, 6))
    inputs = keras.Input((None,), dtype="int32")
    h = keras.layers.Embedding(20, 8, mask_zero=True)(inputs)
    h = ks.layers.Bidirectional(ks.layers.Recurrent(ks.cells.LSTMCell(4), return_sequences=True))(h)
    model = keras.Model(inputs, keras.layers.Dense(3)(h))
    model.compile("adam", keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    log_dir = str(tmp_path / "logs")
    history = model.fit(
        x, y, epochs=1, batch_size=8, verbose=0,
        callbacks=[keras.callbacks.TensorBoard(log_dir=log_dir)],
    )
    assert glob.glob(f"{log_dir}/train/events.out.tfevents.*")
    scalars = _scalars(log_dir)
    loss_tags = [tag for tag in scalars if tag.endswith("loss")]
    assert loss_tags, f"no loss scalar among {sorted(scalars)}"
    logged = scalars[loss_tags[0]][-1]
    np.testing.assert_allclose(logged, history.history["loss"][-1], rtol=1e-5)
