"""docs/deploy.md's "What becomes what" tables say what the writers do: each row's
model is exported again, to LiteRT and to ONNX, and the op names read back from the
two files must be the row's cells (tools/deploy_op_table.py writes the tables)."""

import tempfile

import keras
import pytest
from scripts import load_script

import keras_seqmodels as ks

pytestmark = pytest.mark.tf_only  # the LiteRT converter runs on TensorFlow

tool = load_script("tools", "deploy_op_table")
ROWS = [(table, label) for table in tool.TABLES for label, _ in tool.rows_of(table)]


@pytest.mark.parametrize("table", tool.TABLES)
def test_the_page_has_every_row_in_order(table):
    rows, _ = tool.documented(table)
    assert list(rows) == [label for label, _ in tool.rows_of(table)]


@pytest.mark.parametrize(("table", "label"), ROWS, ids=[label for _, label in ROWS])
def test_row_is_what_the_files_hold(table, label, tmp_path):
    build = dict(tool.rows_of(table))[label]
    got = tool.export_row(build, str(tmp_path))
    assert got == tool.documented(table)[0][label], (
        f"docs/deploy.md's row {label} is not what the writers make now: {got}; "
        "run python tools/deploy_op_table.py"
    )


def test_cells_read_the_files_main_graph_and_loops():
    # The reader itself: a GRU is a WHILE loop in LiteRT (its step in the loop's
    # subgraph) and one GRU node in ONNX.
    def gru():
        return tool._seq(ks.layers.Recurrent(ks.cells.GRUCell(4), return_sequences=True))

    with tempfile.TemporaryDirectory() as folder:
        litert, onnx_cell = tool.export_row(gru, folder)
    main, _, loop = litert.partition("; loop: ")
    assert "`WHILE`" in main and "`FULLY_CONNECTED`" in loop and "`TANH`" in loop
    assert "`GRU`" in onnx_cell and "scan:" not in onnx_cell
    assert keras.backend.backend() == "tensorflow"
