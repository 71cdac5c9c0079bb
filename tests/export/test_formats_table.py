"""One entry per export format: ``keras_seqmodels.export.FORMATS`` names the
function that writes it, and the CLI's ``--format`` offers exactly its keys."""

import argparse

from keras_seqmodels import export
from keras_seqmodels.cli import export_commands


def test_each_format_names_its_public_writer():
    assert sorted(export.FORMATS) == ["litert", "onnx", "savedmodel"]
    assert export.FORMATS["savedmodel"].writer() is export.export
    assert export.FORMATS["litert"].writer() is export.to_litert
    assert export.FORMATS["onnx"].writer() is export.to_onnx
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
