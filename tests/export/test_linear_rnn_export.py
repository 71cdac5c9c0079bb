"""Export of the ``keras_seqmodels.linear_rnn`` layers (MinGRU, MinLSTM, LRU,
RGLRU, HawkBlock, SelectiveSSM).

LiteRT: each layer is converted with builtin ops only (its scan a ``WHILE``
loop without tensor lists, ``scan.TFExportScan``) and run in ai-edge-litert
against ``model.predict`` at a dynamic batch (resized to 3 rows); one
fixed-batch, masked model and one of unknown length as well. Tolerance
``atol=1e-5, rtol=1e-5`` (float32; measured differences up to 4e-7).
"""

import os

import keras
import numpy as np
import pytest

import keras_seqmodels as ks
from keras_seqmodels import export

pytestmark = pytest.mark.tf_only  # the LiteRT converter runs on TensorFlow
interpreter_module = pytest.importorskip("ai_edge_litert.interpreter")

T, F, UNITS = 7, 5, 5  # RGLRU is elementwise: its input width is its width
ATOL = RTOL = 1e-5

LAYERS = {
    "MinGRU": lambda **kw: ks.linear_rnn.MinGRU(UNITS, **kw),
    "MinLSTM": lambda **kw: ks.linear_rnn.MinLSTM(UNITS, **kw),
    "LRU": lambda **kw: ks.linear_rnn.LRU(UNITS, **kw),
    "RGLRU": lambda **kw: ks.linear_rnn.RGLRU(UNITS, **kw),
    "HawkBlock": lambda **kw: ks.linear_rnn.HawkBlock(UNITS, **kw),
    "SelectiveSSM": lambda **kw: ks.linear_rnn.SelectiveSSM(UNITS, **kw),
}


def _inputs(batch, length=T, seed=0):
    return np.random.default_rng(seed).normal(size=(batch, length, F)).astype("float32")


def _run_litert(path, x):
    interpreter = interpreter_module.Interpreter(model_path=path)
    ops = [op["op_name"] for op in interpreter._get_ops_details()]
    detail = interpreter.get_input_details()[0]
    if tuple(detail["shape"]) != x.shape:
        interpreter.resize_tensor_input(detail["index"], x.shape)
    interpreter.allocate_tensors()
    interpreter.set_tensor(detail["index"], x)
    interpreter.invoke()
    return interpreter.get_tensor(interpreter.get_output_details()[0]["index"]), ops


def _assert_builtin_loop(ops):
    assert "WHILE" in ops, ops
    assert all(n.isupper() and not n.startswith("Flex") for n in ops), ops
    assert not any("TENSOR_LIST" in n or "CUSTOM" in n for n in ops), ops


@pytest.mark.parametrize("name", sorted(LAYERS))
def test_litert_dynamic_batch(name, tmp_path):
    model = keras.Sequential([keras.Input((T, F)), LAYERS[name](return_sequences=True)])
    x = _inputs(3)
    expected = model.predict(x, verbose=0)
    path = export.to_litert(model, os.path.join(tmp_path, f"{name}.tflite"))
    got, ops = _run_litert(path, x)
    _assert_builtin_loop(ops)
    np.testing.assert_allclose(got, expected, rtol=RTOL, atol=ATOL)


def test_litert_fixed_batch_masked_last_output(tmp_path):
    # Right padding, then a Dense layer on the last unmasked step's output.
    model = keras.Sequential(
        [
            keras.Input((T, F), batch_size=2),
            keras.layers.Masking(0.0),
            ks.linear_rnn.MinGRU(UNITS),
            keras.layers.Dense(2),
        ]
    )
    x = _inputs(2)
    x[0, 4:] = 0.0
    expected = model.predict(x, verbose=0)
    path = export.to_litert(model, os.path.join(tmp_path, "masked.tflite"))
    got, ops = _run_litert(path, x)
    _assert_builtin_loop(ops)
    np.testing.assert_allclose(got, expected, rtol=RTOL, atol=ATOL)


def test_litert_unknown_length(tmp_path):
    # Batch and length unknown in the file: the loop runs to the length given.
    model = keras.Sequential(
        [keras.Input((None, F)), ks.linear_rnn.MinLSTM(UNITS, return_sequences=True)]
    )
    path = export.to_litert(model, os.path.join(tmp_path, "any_length.tflite"))
    for batch, length in ((1, 3), (2, 11)):
        x = _inputs(batch, length, seed=length)
        got, ops = _run_litert(path, x)
        _assert_builtin_loop(ops)
        np.testing.assert_allclose(got, model.predict(x, verbose=0), rtol=RTOL, atol=ATOL)
