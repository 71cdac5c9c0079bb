"""What ``to_litert`` checks before it builds and says after: representative
data against the model's inputs, unrolled loops bounded before tracing,
options that did not take effect (read from the written file) as warnings
naming the weights, or errors with ``strict=True``."""

import os
import re
import subprocess
import sys
import textwrap
import warnings

import keras
import numpy as np
import pytest
import tensorflow as tf
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import keras_seqmodels as ks
from keras_seqmodels.export import checks, to_litert

pytestmark = pytest.mark.tf_only


def lstm_model(units=16, features=3, head=4):
    inputs = keras.Input((10, features), name="x")
    x = ks.layers.Recurrent(ks.cells.LSTMCell(units), return_sequences=True, name="lstm")(inputs)
    return keras.Model(inputs, keras.layers.Dense(head, name="head")(x))


def export_warnings(model, path, **options):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        to_litert(model, str(path), **options)
    return [str(w.message) for w in caught if str(w.message).startswith("to_litert:")]


# Representative data -----------------------------------------------------------

SPECS = [tf.TensorSpec((None, 10, 3), tf.float32, name="input_0")]


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(shape=st.lists(st.integers(0, 12), min_size=1, max_size=5))
def test_representative_shapes_are_checked_before_conversion(shape):
    data = np.zeros(shape, "float32")
    fits = len(shape) == 3 and shape[0] >= 1 and shape[1:] == [10, 3]
    if fits:
        assert checks.check_representative(data, SPECS, ["x"])[0].shape == tuple(shape)
    else:
        with pytest.raises(ValueError, match=r"input 'x' has shape .*\(samples, 10, 3\)"):
            checks.check_representative(data, SPECS, ["x"])


def test_the_two_reported_mistakes_name_the_fix():
    with pytest.raises(ValueError, match=r"\(64, 1, 10, 3\), one axis more .* drop axis 1"):
        checks.check_representative(np.zeros((64, 1, 10, 3)), SPECS, ["x"])
    with pytest.raises(ValueError, match=r"20 steps, where the model takes 10"):
        checks.check_representative(np.zeros((64, 20, 3)), SPECS, ["x"])
    with pytest.raises(ValueError, match=r"holds 2 array\(s\); the model has 1 input"):
        checks.check_representative([np.zeros((4, 10, 3))] * 2, SPECS, ["x"])
    with pytest.raises(ValueError, match=r"dtype <U1; expected numbers"):
        checks.check_representative(np.full((2, 10, 3), "a"), SPECS, ["x"])
    generator = checks.check_representative(lambda: iter([[np.zeros((1, 9, 3))]]), SPECS)
    with pytest.raises(ValueError, match=r"sample 0 yielded .* 9 steps"):
        list(generator())


def test_converter_messages_become_what_to_change():
    hint = checks.converter_hint(
        "error: Attempting to resize dimension 1 of tensor 0 with value 20 to 10"
    )
    assert "20 along axis 1 of input 0, where the model takes 10" in hint
    assert checks.converter_hint("something else") is None


def test_wrong_representative_data_is_refused_before_tracing(tmp_path, monkeypatch):
    from keras_seqmodels.export import litert_export

    traced = []
    monkeypatch.setattr(litert_export._Tracer, "run", lambda *a: traced.append(a))
    with pytest.raises(ValueError, match=r"input 'x' has shape \(64, 1, 10, 3\)"):
        to_litert(lstm_model(), str(tmp_path / "m.tflite"), quantize="int8",
                  representative_data=np.zeros((64, 1, 10, 3), "float32"))  # fmt: skip
    assert traced == [] and not (tmp_path / "m.tflite").exists()


# Bounded unrolling ---------------------------------------------------------------


def test_an_unrolled_loop_past_the_limit_is_refused_before_tracing(tmp_path, monkeypatch):
    steps = checks.MAX_UNROLLED_STEPS + 1
    inputs = keras.Input((steps, 3), name="x")
    model = keras.Model(inputs, ks.layers.Recurrent(ks.cells.GRUCell(4), name="gru")(inputs))
    stepped = []
    cell_call = ks.cells.GRUCell.call
    monkeypatch.setattr(ks.cells.GRUCell, "call", lambda *a, **k: stepped.append(1) or
                        cell_call(*a, **k))  # fmt: skip
    message = (
        rf"layer 'gru' converts as a loop, unrolled at a dynamic batch size: {steps:,} "
        r"copies .* limit of 1,000 .* batch_size=1 .* to_onnx"
    )
    with pytest.raises(ValueError, match=message):
        to_litert(model, str(tmp_path / "m.tflite"))
    assert stepped == [] and not (tmp_path / "m.tflite").exists()


def test_unrolled_copies_count_every_runner():
    x = keras.KerasTensor((None, 50, 3))
    layer = ks.layers.Bidirectional(
        ks.layers.Recurrent([ks.cells.GRUCell(4), ks.cells.GRUCell(4)], return_sequences=True)
    )
    from keras_seqmodels.export.litert_layers import _recurrent_sublayers

    runners = _recurrent_sublayers(layer)
    assert checks.unrolled_copies(layer, (x,), None, runners) == 50 * 2 * 2
    fixed = keras.KerasTensor((1, 50, 3))
    assert checks.unrolled_copies(layer, (fixed,), None, runners) == 0  # a WHILE loop
    assert checks.unrolled_copies(layer, (fixed,), "int8", runners) == 200


# Options that did not take effect --------------------------------------------------


def test_dynamic_quantization_of_small_layers_says_so(tmp_path):
    found = export_warnings(lstm_model(16), tmp_path / "small.tflite", quantize="dynamic")
    assert len(found) == 1, found
    assert "quantize='dynamic' left every weight matrix float32" in found[0]
    assert re.search(r"lstm/lstm_cell(_\d+)?/kernel", found[0]) and "head/kernel" in found[0]
    assert "fewer than 1,024 weights" in found[0]
    with pytest.raises(ValueError, match=r"strict=True .* quantize='dynamic' left"):
        to_litert(lstm_model(16), str(tmp_path / "strict.tflite"), quantize="dynamic",
                  strict=True)  # fmt: skip
    assert not (tmp_path / "strict.tflite").exists()
    # Every matrix of 1,024 weights or more (a gate block is 64 x 32): all
    # quantized, nothing to say.
    large = lstm_model(64, features=32, head=32)
    assert export_warnings(large, tmp_path / "large.tflite", quantize="dynamic") == []


def test_dynamic_quantization_of_a_loop_reads_the_loop_body(tmp_path):
    # batch_size=1 writes the GRU as a WHILE loop: its int8 weights are in the
    # loop's body graph and the main graph holds only the zero state, which is
    # no weight matrix. Nothing was left float32: no warning.
    x = keras.Input((6, 16))
    model = keras.Model(x, ks.layers.Recurrent(ks.cells.GRUCell(64))(x))
    path = tmp_path / "loop.tflite"
    assert export_warnings(model, path, quantize="dynamic", batch_size=1) == []
    constants = checks._constants(path.read_bytes())
    assert sorted(kind for _, kind, _ in constants) == ["INT8", "INT8"], constants


def test_float16_at_a_dynamic_batch_says_what_stays_float32(tmp_path):
    found = export_warnings(lstm_model(16), tmp_path / "f16.tflite", quantize="float16")
    assert len(found) == 1 and "quantize='float16' kept" in found[0], found
    assert re.search(r"lstm/lstm_cell(_\d+)?/kernel", found[0]) and "batch_size=1" in found[0]
    fixed = export_warnings(lstm_model(16), tmp_path / "f16b.tflite", quantize="float16",
                            batch_size=1)  # fmt: skip
    assert fixed == []


_ELMAN_AFTER_CONVERTER = textwrap.dedent(
    """
    import json, sys, warnings
    import keras, tensorflow as tf
    import keras_seqmodels as ks
    from keras_seqmodels.export import to_litert
    from keras_seqmodels.export.litert_export import op_names

    # Another TFLiteConverter first: the fused RNN's stub op cannot be built.
    plain = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2)])
    tf.lite.TFLiteConverter.from_keras_model(plain).convert()
    out = {}
    for batch in (None, 2):
        inputs = keras.Input(batch_shape=(batch, 6, 3))
        model = keras.Model(inputs, keras.layers.SimpleRNN(4, name="elman")(inputs))
        path = sys.argv[1] + f"/elman_{batch}.tflite"
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            to_litert(model, path)
        ops = op_names(open(path, "rb").read())
        out[str(batch)] = [[str(w.message) for w in caught if "elman" in str(w.message)],
                           "WHILE" in ops]
    print(json.dumps(out))
    """
)


def test_elman_fallback_warning_says_what_the_file_holds(tmp_path):
    import json

    done = subprocess.run([sys.executable, "-c", _ELMAN_AFTER_CONVERTER, str(tmp_path)],
                          capture_output=True, text=True, timeout=600)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    for batch, (messages, has_while) in out.items():
        assert len(messages) == 1, messages
        if has_while:
            assert "converts as a WHILE loop" in messages[0], (batch, messages)
        else:
            assert "converts as a loop unrolled" in messages[0], (batch, messages)
    assert out["None"][1] is False and out["2"][1] is True  # dynamic: unrolled; fixed: WHILE


def test_strict_is_a_boolean(tmp_path):
    with pytest.raises(ValueError, match=r"`strict` must be True or False"):
        to_litert(lstm_model(), str(tmp_path / "m.tflite"), strict="yes")
    assert os.listdir(tmp_path) == []


# Sizes ---------------------------------------------------------------------------


def test_weights_that_cannot_fit_one_file_are_refused_before_building(tmp_path, monkeypatch):
    from types import SimpleNamespace

    from keras_seqmodels.export import to_onnx

    huge = SimpleNamespace(name="big", weights=[SimpleNamespace(shape=(70_000, 8_000))])
    with pytest.raises(ValueError, match=r"model 'big' has 560,000,000 weights, 2,240,000,000"):
        checks.check_weight_bytes(huge, "to_onnx")
    with pytest.raises(ValueError, match=r"use quantize='dynamic'"):
        checks.check_weight_bytes(huge, "to_litert")
    assert checks.check_weight_bytes(huge, "to_litert", "dynamic") == 560_000_000
    # The writers ask before they build: with the limit lowered, a small model.
    monkeypatch.setattr(checks, "MAX_FILE_BYTES", 100)
    model = lstm_model()
    for write, name in ((to_onnx, "m.onnx"), (to_litert, "m.tflite")):
        with pytest.raises(ValueError, match=r"over the 100 bytes one (onnx|litert) file"):
            write(model, str(tmp_path / name))
    assert os.listdir(tmp_path) == []
