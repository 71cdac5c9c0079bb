"""docs/deploy.md's table of the zoo from the command line says what the code
does: every shipped model has a row, every "no" is refused by the writer with
a ValueError, and every "yes" is written and run in its runtime (here, or by
the test named in COVERED)."""

import os
import re

import numpy as np
import pytest

from keras_seqmodels import export, zoo

pytestmark = pytest.mark.tf_only
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FORMATS = ("litert", "onnx")
# (model, format) written here by a test elsewhere, at a cost this file avoids.
CLI, ONNX = "tests/cli/test_export_formats.py::", "tests/export/test_onnx.py::"
LINEAR = "tests/export/test_linear_rnn_export.py::"
COVERED = {
    ("ptb-lstm", "litert"): CLI + "test_zoo_language_model_to_litert_with_fused_lstms",
    ("ptb-lstm", "onnx"): CLI + "test_zoo_language_model_to_onnx_with_lstm_nodes",
    ("ptb-lstm-small", "onnx"): ONNX + "test_ptb_lstm_zoo_model",
    ("ud-ewt-upos", "litert"): CLI + "test_zoo_tagger_to_onnx_writes_its_emission_network",
    ("ud-ewt-upos", "onnx"): ONNX + "test_ud_ewt_upos_emission_network",
    ("mnist-renet", "onnx"): ONNX + "test_mnist_renet_zoo_model",
    ("pixel-mnist", "onnx"): LINEAR + "test_pixel_mnist_zoo_models_to_onnx",
    ("pixel-mnist-permuted", "onnx"): LINEAR + "test_pixel_mnist_zoo_models_to_onnx",
}


def _table():
    """``{model: {"litert": bool, "onnx": bool}}`` from the page."""
    with open(os.path.join(ROOT, "docs", "deploy.md"), encoding="utf-8") as f:
        text = f.read()
    start = text.index("| zoo model | `--format litert` | `--format onnx` | SavedModel |")
    rows = {}
    for line in text[start:].split("\n")[2:]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip("|").split("|")]
        for name in re.findall(r"`([a-z0-9-]+)`", cells[0]):
            rows[name] = {f: not cells[i + 1].startswith("no") for i, f in enumerate(FORMATS)}
    return rows


def test_every_shipped_model_has_a_row():
    assert set(_table()) == set(zoo.list_models())


def _cells(wanted):
    return [(m, f) for m, row in sorted(_table().items()) for f in FORMATS if row[f] == wanted]


@pytest.mark.parametrize("name, format", _cells(False))
def test_every_no_is_refused_with_a_value_error(name, format, tmp_path):
    suffix = export.FORMATS[format].suffix
    with pytest.raises(ValueError, match=f"to_{format}|{format.upper()}|{name}|strings"):
        zoo.load(name).export(str(tmp_path / f"out{suffix}"), format=format)
    assert not (tmp_path / f"out{suffix}").exists()


def _row(name):
    with open(os.path.join(ROOT, "docs", "deploy.md"), encoding="utf-8") as f:
        text = f.read()
    start = text.index("| zoo model | `--format litert` | `--format onnx` | SavedModel |")
    return next(line for line in text[start:].split("\n") if f"`{name}`" in line)


def _run_litert(path, inputs, named=None):
    from ai_edge_litert.interpreter import Interpreter

    from keras_seqmodels.export.litert_export import run_litert

    return run_litert(Interpreter(model_path=path), *inputs, **(named or {}))[0]


def test_every_yes_is_written_and_runs(tmp_path):
    rng = np.random.default_rng(0)
    ran = set()
    for name, format in _cells(True):
        if (name, format) in COVERED:
            path, test = COVERED[(name, format)].split("::")
            with open(os.path.join(ROOT, path), encoding="utf-8") as f:
                assert f"def {test}(" in f.read(), COVERED[(name, format)]
            continue
        model = zoo.load_model(name)
        shapes = [[1 if d is None else d for d in t.shape] for t in model.inputs]
        shapes = [[1] + s[1:] for s in shapes]
        if name == "ntm-copy":  # bits, a delimiter step and blank steps
            shapes = [[1, 7, model.inputs[0].shape[-1]]]
        inputs = [
            rng.integers(1, 5, s).astype("int32") if "int" in str(t.dtype)
            else rng.integers(0, 2, s).astype("float32")
            for s, t in zip(shapes, model.inputs)
        ]  # fmt: skip
        expected = np.asarray(model.predict(inputs, verbose=0))
        options = {"batch_size": 1} if format == "litert" else {}
        out = str(tmp_path / name) + export.FORMATS[format].suffix
        path = zoo.load(name).export(out, format=format, **options)
        assert format == "litert", (name, format)  # the ONNX yes cells are COVERED
        np.testing.assert_allclose(_run_litert(path, inputs), expected, atol=1e-4)
        if len(model.inputs) > 1:  # by the Keras inputs' names, which the row names
            names = [t.name for t in model.inputs]
            row = _row(name)
            assert all(f"`{n}`" in row for n in names), (names, row)
            got = _run_litert(path, [], dict(zip(names, inputs)))
            np.testing.assert_allclose(got, expected, atol=1e-4)
        ran.add((name, format))
    assert ("babi-memn2n", "litert") in ran


def test_the_onnx_sections_zoo_table_says_what_the_command_line_table_says():
    """The ONNX section's table of the zoo (``to_onnx`` on each model) has a
    row for every shipped model and the same yes / no as the command-line
    table, whose cells the tests above check against the writers."""
    with open(os.path.join(ROOT, "docs", "deploy.md"), encoding="utf-8") as f:
        text = f.read()
    start = text.index("| model | ONNX (`to_onnx(ks.zoo.load(name).model, ...)`) |")
    onnx = {}
    for line in text[start:].split("\n")[2:]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip("|").split("|")]
        for name in re.findall(r"`([a-z0-9-]+)`", cells[0]):
            onnx[name] = not cells[1].startswith("no")
    assert onnx == {name: row["onnx"] for name, row in _table().items()}
