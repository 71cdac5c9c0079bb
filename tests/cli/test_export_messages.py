"""What `seqmodels export` says: options checked before any model loads, the
writers' errors and warnings in the command's flags (each warning once), and
progress with the time and peak memory of the export."""

import keras
import pytest
from cli_helpers import assert_one_line_error, run_cli

import keras_seqmodels as ks
from keras_seqmodels.cli.export_commands import as_flags


def _save(tmp_path, layer, shape, mask=False):
    inputs = keras.Input(shape)
    x = keras.layers.Masking()(inputs) if mask else inputs
    model = keras.Model(inputs, keras.layers.Dense(2)(layer(x)))
    path = tmp_path / "model.keras"
    model.save(path)
    return str(path)


def test_int8_without_calibration_data_is_refused_before_any_model_loads(tmp_path, monkeypatch):
    from keras_seqmodels import zoo

    def no_load(*args, **kwargs):
        raise AssertionError("a model was loaded")

    monkeypatch.setattr(zoo, "load", no_load)
    code, out, err = run_cli(
        ["export", "ptb-lstm", str(tmp_path / "x.tflite"), "--format", "litert",
         "--quantize", "int8"]
    )  # fmt: skip
    assert_one_line_error(code, err, "--quantize int8 needs --representative-data FILE")


def test_writer_errors_name_the_flags(tmp_path):
    path = _save(tmp_path, ks.layers.GRU(4), (None, 3))
    code, out, err = run_cli(["export", path, str(tmp_path / "m.tflite"), "--format", "litert"])
    assert code == 2, err
    last = err.strip().splitlines()[-1]
    assert "--batch-size 1" in last and "batch_size=" not in last and "to_litert" not in last


def test_warnings_once_as_the_packages_and_progress_with_peak_memory(tmp_path):
    path = _save(tmp_path, ks.layers.LSTM(4), (5, 3), mask=True)
    out_file = tmp_path / "m.tflite"
    argv = ["export", path, str(out_file), "--format", "litert", "--batch-size", "1"]
    code, out, err = run_cli(argv)
    assert code == 0, err
    lines = err.strip().splitlines()
    assert lines[-1].startswith("seqmodels export: done in ") and " GB" in lines[-1]
    warned = [line for line in lines if line.startswith("seqmodels export: warning: ")]
    assert len(warned) == 1 and "receives a mask" in warned[0], err
    assert "keras/src" not in err and "to_litert" not in err
    assert out_file.stat().st_size > 0 and f"wrote {out_file}" in out


def test_a_long_export_says_what_it_writes_and_its_progress(tmp_path, monkeypatch):
    import time

    from keras_seqmodels import export
    from keras_seqmodels.cli import export_commands

    monkeypatch.setattr(export_commands, "_ANNOUNCE_AFTER", 0.1)
    monkeypatch.setattr(export_commands, "_PROGRESS_EVERY", 0.2)
    written = export.write

    def slow(*args, **kwargs):
        time.sleep(0.7)
        return written(*args, **kwargs)

    monkeypatch.setattr(export, "write", slow)
    path = _save(tmp_path, ks.layers.LSTM(4), (5, 3))
    code, out, err = run_cli(["export", path, str(tmp_path / "m.onnx"), "--format", "onnx"])
    assert code == 0, err
    lines = err.strip().splitlines()
    assert lines[0] == f"seqmodels export: writing {path} as an ONNX graph..."
    assert any(line.startswith("seqmodels export: still writing ") and " GB in use" in line
               for line in lines)  # fmt: skip
    assert lines[-1].startswith("seqmodels export: done in ")


@pytest.mark.parametrize(
    "message, flags",
    [
        ("to_litert: quantize='int8' needs `representative_data`: an array",
         "--quantize int8 needs --representative-data: an array"),
        ("pass batch_size=1 (or any int) to to_litert, or fix the length",
         "pass --batch-size 1 (or any size), or fix the length"),
        ("use quantize='dynamic' or 'float16'", "use --quantize dynamic or float16"),
    ],
)  # fmt: skip
def test_python_arguments_become_flags(message, flags):
    assert as_flags(message) == flags


def test_export_help_names_every_format():
    code, out, _ = run_cli(["--help"])
    assert (
        "export a zoo model or a .keras file for serving: a SavedModel, a LiteRT file or "
        "an ONNX graph (--format)" in " ".join(out.split())
    )
    code, out, _ = run_cli(["export", "--help"])
    text = " ".join(out.split())
    assert "--format {savedmodel,litert,onnx}" in text
    assert "--format litert: a .tflite file; --format onnx: a .onnx file" in text
