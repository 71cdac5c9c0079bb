"""One entry per export format: ``keras_seqmodels.export.FORMATS`` names the
function that writes it, and the CLI's ``--format`` offers exactly its keys."""

import argparse

from keras_seqmodels import export
from keras_seqmodels.cli import export_commands


def test_each_format_names_its_generic_writer():
    assert sorted(export.FORMATS) == ["litert", "onnx", "savedmodel"]
    # Each format's generic writer, (model, path, **options) -> path, which
    # export.write uses when neither the caller nor the model's type names another.
    from keras_seqmodels.export import generic, litert_export, onnx_export

    assert export.FORMATS["savedmodel"].writer() is generic.export_model
    assert export.FORMATS["litert"].writer() is litert_export.to_litert
    assert export.FORMATS["onnx"].writer() is onnx_export.to_onnx
    assert export.FORMATS["savedmodel"].suffix is None
    assert {f.suffix for n, f in export.FORMATS.items() if n != "savedmodel"} == {
        ".tflite",
        ".onnx",
    }


def test_the_cli_offers_the_table_keys():
    parser = argparse.ArgumentParser()
    export_commands.register(parser.add_subparsers())
    args = parser.parse_args(["export", "model.keras", "out.onnx", "--format", "onnx"])
    assert args.format == "onnx"
    action = next(
        a
        for a in parser._subparsers._group_actions[0].choices["export"]._actions
        if a.dest == "format"
    )
    assert tuple(action.choices) == tuple(export.FORMATS)
