"""A cell declares its form once (``form()``); the kernels, the backends and
the exporters all read that declaration (``keras_seqmodels.cells.forms``)."""

import keras
import numpy as np
import pytest

import keras_seqmodels as ks
from keras_seqmodels.cells import forms


def test_the_forms_of_the_cells():
    assert forms.cell_form(ks.cells.LSTMCell(3, activation="relu")) == "lstm"
    assert forms.fused_form(ks.cells.LSTMCell(3, activation="relu")) is None
    assert forms.cell_form(ks.cells.GRUCell(3, reset_after=False)) == "gru"
    assert forms.cell_form(ks.cells.ElmanCell(3, activation="relu")) == "elman"
    assert forms.fused_form(ks.cells.ElmanCell(3, activation="relu")) is None
    assert forms.cell_form(ks.cells.LeakyCell(3)) is None  # inherits ElmanCell, redeclares nothing
    # Keras's own cells: a form for the exporters, no fused kernel of this package.
    assert forms.cell_form(keras.layers.GRUCell(3)) == "gru_after"
    assert forms.cell_form(keras.layers.SimpleRNNCell(3)) == "elman"
    assert forms.fused_form(keras.layers.LSTMCell(3)) is None
    assert set(forms.FORMS) == {"elman", "gated", "lstm", "gru", "gru_after"}


class _DeclaredGRU(ks.cells.GRUCell):
    """A new cell on the GRU's equations: it declares the form, nothing else."""

    def form(self):
        return super().form()


class _UndeclaredGRU(ks.cells.GRUCell):
    pass


@pytest.mark.parametrize("cell_class, node", [(_DeclaredGRU, "GRU"), (_UndeclaredGRU, None)])
def test_a_declared_cell_is_fused_and_exported_as_a_native_node(cell_class, node, tmp_path):
    pytest.importorskip("onnx")
    import onnx

    cell = cell_class(4)
    assert forms.fused_form(cell) == ("gru_after" if node else None)
    model = keras.Sequential([keras.Input((5, 3)), ks.layers.Recurrent(cell)])
    model(np.zeros((1, 5, 3), "float32"))
    path = str(tmp_path / "m.onnx")
    if node is None:
        with pytest.raises(ValueError, match="has no ONNX recurrent node"):
            ks.export.to_onnx(model, path)
        return
    ks.export.to_onnx(model, path)
    assert node in [n.op_type for n in onnx.load(path).graph.node]
