"""``seqmodels export ... --format litert --strict``: an option that did not
take effect in the file is the command's one-line error (exit 2) and nothing
is written; without ``--strict`` it is a warning line and the file is
written. Unrolled loops past the limit and representative data of another
shape are one-line errors too."""

import keras
import numpy as np
import pytest
from cli_helpers import assert_one_line_error, run_cli

import keras_seqmodels as ks

pytestmark = [pytest.mark.tf_only, pytest.mark.slow]


@pytest.fixture(autouse=True)
def _no_progress_lines(monkeypatch):
    # These errors come after the conversion, which takes more than the 3 s
    # after which an export says what it writes when the machine is busy;
    # that line is tested in test_export_messages.py, not here.
    from keras_seqmodels.cli import export_commands

    monkeypatch.setattr(export_commands, "_ANNOUNCE_AFTER", 3600.0)


@pytest.fixture(scope="module")
def small_lstm(tmp_path_factory):
    path = tmp_path_factory.mktemp("strict") / "small.keras"
    inputs = keras.Input((10, 3), name="x")
    outputs = ks.layers.Recurrent(ks.cells.LSTMCell(16), name="lstm")(inputs)
    keras.Model(inputs, keras.layers.Dense(4, name="head")(outputs)).save(path)
    return str(path)


def test_strict_refuses_quantization_that_left_weights_float(small_lstm, tmp_path):
    out = tmp_path / "m.tflite"
    argv = ["export", small_lstm, str(out), "--format", "litert", "--quantize", "dynamic"]
    code, _, err = run_cli(argv + ["--strict"])
    assert_one_line_error(code, err, "--strict", "--quantize dynamic left every weight matrix")
    assert not out.exists()
    code, stdout, err = run_cli(argv)
    assert code == 0 and out.exists(), err
    assert "warning: --quantize dynamic left every weight matrix float32" in err


def test_strict_is_for_litert(small_lstm, tmp_path):
    code, _, err = run_cli(["export", small_lstm, str(tmp_path / "m.onnx"), "--format", "onnx",
                            "--strict"])  # fmt: skip
    assert_one_line_error(code, err, "--strict are for --format litert")


def test_representative_data_of_another_shape_is_one_line(small_lstm, tmp_path):
    data = tmp_path / "samples.npy"
    np.save(data, np.zeros((8, 1, 10, 3), "float32"))
    out = tmp_path / "m.tflite"
    code, _, err = run_cli(["export", small_lstm, str(out), "--format", "litert", "--quantize",
                            "int8", "--representative-data", str(data)])  # fmt: skip
    assert_one_line_error(code, err, "(8, 1, 10, 3)", "drop axis 1", "(samples, 10, 3)")
    assert not out.exists()
