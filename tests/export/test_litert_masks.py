"""``to_litert`` under every mask Keras accepts: masked recurrent layers
convert as loops of builtin ops that compute Keras's masking, so left
padding, holes, rows with no step and rows of one step give
``model.predict``'s numbers in ``ai-edge-litert``. Hypothesis draws the masks
and the batch sizes over one converted file."""

import warnings

import keras
import numpy as np
import pytest
from ai_edge_litert.interpreter import Interpreter
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import keras_seqmodels as ks
from keras_seqmodels.export import to_litert
from keras_seqmodels.export.litert_export import run_litert

pytestmark = [pytest.mark.tf_only, pytest.mark.slow]  # one conversion, about a minute
T = 5


@pytest.fixture(scope="module")
def converted(tmp_path_factory):
    ids = keras.Input((T,), dtype="int32", name="ids")
    x = keras.layers.Embedding(9, 3, mask_zero=True)(ids)
    R, C = ks.layers.Recurrent, ks.cells
    outputs = [
        R(C.LSTMCell(4), return_sequences=True)(x),
        R(C.GRUCell(4), go_backwards=True)(x),
        R(C.ElmanCell(4), return_sequences=True, zero_output_for_mask=False)(x),
        keras.layers.LSTM(4, return_sequences=True)(x),
        ks.layers.Bidirectional(R(C.GRUCell(4), return_sequences=True))(x),
    ]
    model = keras.Model(ids, outputs)
    rng = np.random.default_rng(0)
    for w in model.weights:
        w.assign(rng.normal(size=w.shape).astype("float32") * 0.5)
    path = str(tmp_path_factory.mktemp("masks") / "masked.tflite")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "receives a mask ... converts as a loop"
        to_litert(model, path)
    return model, Interpreter(model_path=path)


def compare(model, interpreter, ids):
    got = run_litert(interpreter, ids)
    expected = model.predict(ids, verbose=0)
    for k, (a, b) in enumerate(zip(got, expected)):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=2e-5, err_msg=f"output {k}")


@pytest.mark.parametrize(
    "rows",
    [
        [[0, 0, 3, 4, 5], [0, 0, 0, 0, 6]],  # left padding
        [[3, 0, 4, 0, 5], [0, 6, 0, 7, 0]],  # holes
        [[0, 0, 0, 0, 0], [3, 4, 0, 0, 0]],  # a row with no step
        [[5, 0, 0, 0, 0]],  # one step
    ],
    ids=["left", "holes", "empty_row", "one_step"],
)
def test_named_masks(converted, rows):
    compare(*converted, np.array(rows, "int32"))


@settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck))
@given(mask=st.integers(1, 3).flatmap(lambda b: hnp.arrays(bool, (b, T))),
       seed=st.integers(0, 2**16))  # fmt: skip
def test_any_mask_and_batch(converted, mask, seed):
    ids = np.random.default_rng(seed).integers(1, 9, size=mask.shape)
    compare(*converted, np.where(mask, ids, 0).astype("int32"))


def test_a_batch_of_no_rows_is_refused_clearly(converted):
    with pytest.raises(ValueError, match="run_litert: a batch of 0 rows"):
        run_litert(converted[1], np.zeros((0, T), "int32"))


def test_sequences_of_zero_one_and_more_steps(tmp_path):
    # A fixed batch and a free length: a WHILE loop (GRU) and the fused LSTM
    # read 0 steps as Keras does (the initial state, an empty sequence).
    x = keras.Input((None, 3), batch_size=1)
    outputs = [
        ks.layers.Recurrent(ks.cells.GRUCell(4))(x),
        ks.layers.Recurrent(ks.cells.LSTMCell(4), return_sequences=True)(x),
    ]
    model = keras.Model(x, outputs)
    interpreter = Interpreter(model_path=to_litert(model, str(tmp_path / "free_length.tflite")))
    for steps in (3, 1, 0):
        values = np.random.default_rng(steps).normal(size=(1, steps, 3)).astype("float32")
        got = run_litert(interpreter, values)
        for a, b in zip(got, model(values)):
            b = keras.ops.convert_to_numpy(b)
            assert a.shape == b.shape
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=2e-5)
