"""A quantized LiteRT file's answers checked against ``model.predict`` on a
few representative samples: a file far off warns, or with ``strict=True``
is refused and not written."""

import os
import warnings

import keras
import numpy as np
import pytest

import keras_seqmodels as ks
from keras_seqmodels.export import checks, to_litert
from keras_seqmodels.export.litert_export import run_litert

pytestmark = pytest.mark.tf_only


def samples():
    return np.random.default_rng(0).normal(size=(64, 10, 3)).astype("float32")


def lstm_and_dense(merge):
    """An LSTM's output merged with a Dense branch, then a Dense head."""
    keras.utils.set_random_seed(1)
    inputs = keras.Input((10, 3), name="x")
    h = ks.layers.Recurrent(ks.cells.LSTMCell(8), name="lstm")(inputs)
    d = keras.layers.Dense(8, name="branch")(keras.layers.Flatten()(inputs))
    return keras.Model(inputs, keras.layers.Dense(4, name="head")(merge()([h, d])))


def answer_warnings(model, path, **options):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        to_litert(model, path, **options)
    return [str(w.message) for w in caught if "answers" in str(w.message)]


def test_int8_concatenate_file_warns_with_error_and_alternatives(tmp_path):
    path = str(tmp_path / "m.tflite")
    found = answer_warnings(
        lstm_and_dense(keras.layers.Concatenate), path, quantize="int8",
        representative_data=samples(),
    )  # fmt: skip
    assert len(found) == 1, found
    message = found[0]
    error = float(message.split("largest error of ")[1].split("%")[0]) / 100
    assert error > checks.MAX_QUANTIZED_ERROR
    assert f"{checks.MAX_QUANTIZED_ERROR:.0%} allowed" in message
    assert "quantize='dynamic', or float32" in message
    assert os.path.exists(path)  # a warning: the file is still written


def test_int8_concatenate_file_refused_with_strict(tmp_path):
    path = str(tmp_path / "m.tflite")
    with pytest.raises(ValueError, match=r"strict=True.*largest error of .*allowed"):
        to_litert(
            lstm_and_dense(keras.layers.Concatenate), path, quantize="int8",
            representative_data=samples(), strict=True,
        )  # fmt: skip
    assert not os.listdir(tmp_path)


@pytest.mark.parametrize("merge", [None, keras.layers.Add])
def test_int8_file_close_to_model_has_no_warning(tmp_path, merge):
    if merge is None:
        keras.utils.set_random_seed(1)
        model = keras.Sequential(
            [keras.Input((10, 3)), ks.layers.Recurrent(ks.cells.LSTMCell(8)), keras.layers.Dense(4)]
        )
    else:
        model = lstm_and_dense(merge)
    x = samples()
    rows = checks.check_rows(x)
    path = str(tmp_path / "m.tflite")
    assert answer_warnings(model, path, quantize="int8", representative_data=x) == []
    content = open(path, "rb").read()
    error = checks.quantized_error(content, model, rows, run_litert)
    assert error <= checks.MAX_QUANTIZED_ERROR / 4  # measured about 1%


def test_check_rows_bounded_for_arrays_and_callables():
    x = samples()
    assert checks.check_rows(x)[0].shape == (checks.CHECKED_ROWS, 10, 3)
    assert checks.check_rows([x[:5], x[:5]])[1].shape == (5, 10, 3)
    batches = checks.check_rows(lambda: ([x[i : i + 4]] for i in range(0, 64, 4)))
    np.testing.assert_array_equal(batches[0], x[: checks.CHECKED_ROWS])
    assert checks.check_rows(None) is None
    assert checks.check_rows(lambda: iter(())) is None


def test_int8_two_input_concatenate_warns(tmp_path):
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(64, 10, 3)), rng.normal(size=(64, 5))
    keras.utils.set_random_seed(1)
    a, b = keras.Input((10, 3), name="x"), keras.Input((5,), name="y")
    h = ks.layers.Recurrent(ks.cells.LSTMCell(8))(a)
    merged = keras.layers.Concatenate()([h, keras.layers.Dense(8)(b)])
    model = keras.Model([a, b], keras.layers.Dense(4)(merged))
    found = answer_warnings(
        model, str(tmp_path / "m.tflite"), quantize="int8",
        representative_data=[x.astype("float32"), y.astype("float32")],
    )  # fmt: skip
    assert len(found) == 1 and "over the 10% allowed" in found[0], found
