"""The table of cells by name (``keras_seqmodels.cells.registry``)."""

import pytest

import keras_seqmodels as ks
from keras_seqmodels.cells import registry
from keras_seqmodels.seq2seq import attention_decoder, recurrent_encoder


@pytest.mark.parametrize(
    "name, cls, extra",
    [
        ("elman", ks.cells.ElmanCell, {}),
        ("gated", ks.cells.GatedCell, {}),
        ("lstm", ks.cells.LSTMCell, {}),
        ("gru", ks.cells.GRUCell, {"reset_after": False}),
        ("gru_reset_after", ks.cells.GRUCell, {"reset_after": True}),
    ],
)
def test_get_builds_the_named_cell(name, cls, extra):
    cell = registry.get(name, 3, dropout=0.25)
    assert type(cell) is cls
    assert cell.units == 3 and cell.dropout == 0.25
    for key, value in extra.items():
        assert getattr(cell, key) == value


def test_every_name_builds_a_cell():
    for name in registry.CELLS:
        assert registry.get(name, 2).units == 2


def test_unknown_name_names_the_argument_and_the_known_names():
    with pytest.raises(ValueError) as err:
        registry.get("rnn", 4, owner="MyScript", arg="--cell")
    message = str(err.value)
    assert message.startswith("MyScript: `--cell` must be one of ")
    assert str(sorted(registry.CELLS)) in message
    assert message.endswith("Received: --cell='rnn'")
    with pytest.raises(ValueError, match="Received: name=None"):
        registry.get(None, 4)
    with pytest.raises(ValueError, match="Received: names='rnn'"):
        registry.subset("lstm", "rnn")


def test_seq2seq_layers_take_their_cells_from_the_table():
    # A saved model's cell_type="gru" is the reset-before GRU (test_legacy_gru).
    for module in (attention_decoder, recurrent_encoder):
        assert module.CELLS == {"lstm": registry.CELLS["lstm"], "gru": registry.CELLS["gru"]}
    encoder = ks.seq2seq.RecurrentEncoder(20, 4, 3, cell_type="gru")
    assert encoder.forward_layers[0].cell.reset_after is False
    with pytest.raises(ValueError, match="`cell_type` must be one of \\['gru', 'lstm'\\]"):
        ks.seq2seq.RecurrentEncoder(20, 4, 3, cell_type="elman")
