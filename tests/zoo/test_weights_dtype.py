"""Weights stored in half precision (`keras_seqmodels.utils.weights_dtype`),
and `seqmodels train NAME --weights-dtype float16`, which packages with it."""

import os
import zipfile

import keras
import numpy as np
import pytest

import keras_seqmodels as ks
from keras_seqmodels.utils.weights_dtype import store_weights_as
from keras_seqmodels.zoo import framework


def _lstm_model(scale=1.0):
    model = keras.Sequential(
        [
            keras.Input((None, 3)),
            ks.layers.Recurrent(ks.cells.LSTMCell(16), return_sequences=True),
            keras.layers.Dense(5),
        ]
    )
    rng = np.random.default_rng(0)
    model.set_weights([scale * rng.normal(size=w.shape) for w in model.get_weights()])
    return model


def test_half_weights_load_as_float32_rounded_to_float16(tmp_path):
    model = _lstm_model()
    path = str(tmp_path / "m.keras")
    model.save(path)
    full, mode = os.path.getsize(path), os.stat(path).st_mode
    assert store_weights_as(path, "float16") == len(model.weights)
    assert os.path.getsize(path) < 0.75 * full
    assert os.stat(path).st_mode == mode  # readable as before, not a temporary's 0600
    loaded = keras.saving.load_model(path)
    assert {v.dtype for v in loaded.weights} == {"float32"}
    for stored, original in zip(loaded.get_weights(), model.get_weights()):
        np.testing.assert_array_equal(stored, original.astype("float16").astype("float32"))
        assert not np.array_equal(stored, original)  # the rounding happened
    x = np.random.default_rng(1).normal(size=(2, 7, 3)).astype("float32")
    np.testing.assert_allclose(loaded.predict(x, verbose=0), model.predict(x, verbose=0),
                               atol=5e-3)  # fmt: skip


def test_float32_leaves_a_float32_file_as_it_was(tmp_path):
    path = str(tmp_path / "m.keras")
    model = _lstm_model()
    model.save(path)
    assert store_weights_as(path, "float32") == 0
    for stored, original in zip(keras.saving.load_model(path).get_weights(), model.get_weights()):
        np.testing.assert_array_equal(stored, original)


def test_refusals_name_the_cause(tmp_path):
    path = str(tmp_path / "m.keras")
    _lstm_model(scale=1e5).save(path)
    before = open(path, "rb").read()
    with pytest.raises(ValueError, match="beyond float16's range"):
        store_weights_as(path, "float16")
    assert open(path, "rb").read() == before  # a refused file is not touched
    with pytest.raises(ValueError, match="dtype must be one of"):
        store_weights_as(path, "bfloat17")
    other = tmp_path / "other.keras"
    with zipfile.ZipFile(other, "w") as archive:
        archive.writestr("config.json", "{}")
    with pytest.raises(ValueError, match="holds no model.weights.h5"):
        store_weights_as(str(other), "float16")


def _load_data(data_dir, split, smoke, config):
    rng = np.random.default_rng(["train", "validation", "test"].index(split))
    x = rng.normal(size=(32, 3)).astype("float32")
    return x, (x.sum(-1, keepdims=True) > 0).astype("float32")


def _build(config):
    return keras.Sequential([keras.Input((3,)), keras.layers.Dense(4), keras.layers.Dense(1)])


def _compile(config):
    return dict(optimizer=keras.optimizers.SGD(0.1),
                loss=keras.losses.BinaryCrossentropy(from_logits=True))  # fmt: skip


HALF = framework.Recipe(name="half", config={"epochs": 1, "batch_size": 8}, build_model=_build,
                        load_data=_load_data, compile_options=_compile,
                        evaluate=lambda model, data, config: {"loss": 0.0})  # fmt: skip


def test_train_packages_half_weights_on_request(tmp_path):
    runs = {}
    for dtype in ("float32", "float16"):
        work = tmp_path / dtype
        framework.main(HALF, "train", ["--work-dir", str(work), "--verbose", "0",
                                       "--weights-dtype", dtype])  # fmt: skip
        with zipfile.ZipFile(work / "half.keras") as archive:
            runs[dtype] = archive.read("model.weights.h5")
        loaded = keras.saving.load_model(str(work / "half.keras"))
        assert {v.dtype for v in loaded.weights} == {"float32"}
    import io

    import h5py

    def dtypes(blob):
        found = set()
        with h5py.File(io.BytesIO(blob), "r") as f:
            f.visititems(lambda n, d: found.add(str(d.dtype)) if hasattr(d, "dtype") else None)
        return found

    assert dtypes(runs["float32"]) == {"float32"}
    assert dtypes(runs["float16"]) == {"float16"}
