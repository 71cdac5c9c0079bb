"""A LiteRT file answers every call as ``model.predict`` does.

LiteRT's fused sequence ops keep their state in variable tensors between
calls; ``to_litert`` zeroes them before each call unless ``stateful=True``.
Every check here drives the interpreter with its plain API only
(``resize_tensor_input``, ``allocate_tensors``, ``set_tensor``, ``invoke``),
as an app or a C++ service would, and calls it twice on the same input.
"""

import os

import numpy as np
import pytest

pytestmark = pytest.mark.tf_only

keras = pytest.importorskip("keras")
pytest.importorskip("ai_edge_litert")
if keras.backend.backend() != "tensorflow":
    pytest.skip("LiteRT export needs the TensorFlow backend", allow_module_level=True)

import keras_seqmodels as ks  # noqa: E402
from keras_seqmodels.export import litert_export, litert_runtime  # noqa: E402


def _model(batch_size=None, length=10):
    inputs = keras.Input((length, 4), batch_size=batch_size)
    x = ks.layers.LSTM(8, return_sequences=True)(inputs)
    x = ks.layers.Recurrent(ks.cells.ElmanCell(5), return_sequences=True)(x)
    outputs = keras.layers.Bidirectional(keras.layers.LSTM(6))(x)
    return keras.Model(inputs, outputs)


def _interpreter(path):
    from ai_edge_litert.interpreter import Interpreter

    return Interpreter(model_path=path)


def _calls(interpreter, x, times=2):
    """``times`` plain invocations on ``x``; their outputs."""
    (source,), (target,) = interpreter.get_input_details(), interpreter.get_output_details()
    interpreter.resize_tensor_input(source["index"], x.shape)
    interpreter.allocate_tensors()
    outputs = []
    for _ in range(times):
        interpreter.set_tensor(source["index"], x)
        interpreter.invoke()
        outputs.append(interpreter.get_tensor(target["index"]).copy())
    return outputs


@pytest.mark.parametrize("quantize, tolerance", [(None, 1e-5), ("dynamic", 1e-5),
                                                 ("float16", 2e-3)])  # fmt: skip
def test_every_call_at_every_batch_size_equals_predict(tmp_path, quantize, tolerance):
    model = _model()
    path = litert_export.to_litert(model, str(tmp_path / "m.tflite"), quantize=quantize)
    with open(path, "rb") as f:
        content = f.read()
    ops = litert_export.op_names(content)
    assert ops.count("UNIDIRECTIONAL_SEQUENCE_LSTM") == 3
    assert ops.count("UNIDIRECTIONAL_SEQUENCE_RNN") == 1
    assert litert_runtime.stateful_ops(content) == []
    interpreter = _interpreter(path)
    rng = np.random.default_rng(0)
    for batch in (1, 3, 5, 2):
        x = rng.standard_normal((batch, 10, 4)).astype("float32")
        expected = model.predict(x, verbose=0)
        first, second = _calls(interpreter, x)
        np.testing.assert_allclose(first, expected, atol=tolerance, rtol=tolerance)
        np.testing.assert_array_equal(second, first)


def test_stateful_files_carry_the_state_to_the_next_call(tmp_path):
    model = _model(batch_size=1)
    path = litert_export.to_litert(model, str(tmp_path / "m.tflite"), stateful=True)
    with open(path, "rb") as f:
        assert len(litert_runtime.stateful_ops(f.read())) == 4
    interpreter = _interpreter(path)
    x = np.random.default_rng(1).standard_normal((1, 10, 4)).astype("float32")
    first, second = _calls(interpreter, x)
    np.testing.assert_allclose(first, model.predict(x, verbose=0), atol=1e-5)
    assert np.abs(second - first).max() > 1e-4  # it went on from the first call's state
    interpreter.reset_all_variables()
    np.testing.assert_allclose(_calls(interpreter, x, times=1)[0], first, atol=1e-6)


def test_a_file_without_fused_ops_is_left_as_written(tmp_path):
    model = keras.Sequential([keras.Input((6, 3)), ks.layers.GRU(4)])  # a loop
    path = litert_export.to_litert(model, str(tmp_path / "m.tflite"), batch_size=1)
    with open(path, "rb") as f:
        content = f.read()
    assert "FILL" not in litert_export.op_names(content)
    assert litert_runtime.zero_states_each_call(content) is content


def test_int8_fills_the_states_with_their_zero_points(tmp_path):
    # The int8 LSTM's states are int8 and int16 with zero points: zeroed, every
    # call equals the first call of the stateful file.
    keras.utils.set_random_seed(0)
    inputs = keras.Input((10, 16), batch_size=1)
    outputs = keras.layers.Dense(4)(ks.layers.LSTM(32)(inputs))
    model = keras.Model(inputs, outputs)
    samples = np.random.default_rng(2).normal(size=(64, 10, 16)).astype("float32")
    answers = {}
    for stateful in (False, True):
        path = litert_export.to_litert(
            model, str(tmp_path / f"{stateful}.tflite"), quantize="int8",
            representative_data=samples, stateful=stateful,
        )  # fmt: skip
        with open(path, "rb") as f:
            assert len(litert_runtime.stateful_ops(f.read())) == int(stateful)
        answers[stateful] = _calls(_interpreter(path), samples[:1])
    first, second = answers[False]
    np.testing.assert_array_equal(second, first)
    np.testing.assert_array_equal(first, answers[True][0])
    np.testing.assert_allclose(first, model.predict(samples[:1], verbose=0), atol=5e-2)


@pytest.mark.parametrize("layer", ["gru", "elman"])
def test_int8_of_a_recurrent_loop_is_unrolled_and_runs(tmp_path, layer):
    # TF 2.21's calibrator crashes the process on a WHILE loop; to_litert
    # unrolls the loop for int8 (a fixed length is needed).
    inputs = keras.Input((6, 3), batch_size=1)
    cell = ks.cells.GRUCell(5) if layer == "gru" else ks.cells.ElmanCell(5)
    model = keras.Model(inputs, ks.layers.Recurrent(cell)(inputs))
    samples = np.random.default_rng(3).standard_normal((32, 6, 3)).astype("float32")
    path = litert_export.to_litert(
        model, str(tmp_path / "m.tflite"), quantize="int8", representative_data=samples
    )
    with open(path, "rb") as f:
        assert "WHILE" not in litert_export.op_names(f.read())
    first, second = _calls(_interpreter(path), samples[:1])
    np.testing.assert_array_equal(second, first)
    np.testing.assert_allclose(first, model.predict(samples[:1], verbose=0), atol=0.05)
    free = keras.Input((None, 3), batch_size=1)
    loose = keras.Model(free, ks.layers.Recurrent(cell)(free))
    with pytest.raises(ValueError, match="fix the sequence length in keras.Input"):
        litert_export.to_litert(
            loose, str(tmp_path / "n.tflite"), quantize="int8", representative_data=samples
        )


def test_stateful_must_be_a_bool(tmp_path):
    with pytest.raises(ValueError, match="to_litert: `stateful` must be True or False"):
        litert_export.to_litert(_model(), os.path.join(tmp_path, "m.tflite"), stateful="yes")


def test_float16_with_a_dynamic_batch_stores_the_fused_weights_once(tmp_path):
    # The fused ops read float32 weights; the float16 copies they replace are
    # dropped from the file, so it is about the float32 file's size.
    model = keras.Sequential([keras.Input((10, 32)), ks.layers.LSTM(64)])
    sizes = {}
    for quantize in (None, "float16"):
        path = litert_export.to_litert(model, str(tmp_path / f"{quantize}.tflite"),
                                       quantize=quantize)  # fmt: skip
        sizes[quantize] = os.path.getsize(path)
    assert sizes["float16"] <= 1.05 * sizes[None], sizes
