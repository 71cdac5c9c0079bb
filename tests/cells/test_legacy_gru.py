"""Files saved before GRUCell had ``reset_after`` load as reset-before GRUs, unchanged.

The fixture (``tests/fixtures/legacy_gru``, see its ``make_fixture.py``) holds a
small model saved by the code of that time, with one branch per cell and
wrapper, and the outputs that code computed, plus the mnist-renet zoo artifact
of that time (``mnist-renet-2026-11-22.keras``, reset-before GRUs) and its
scores on four test images.
"""

import json
import os
import zipfile

import keras
import numpy as np
import pytest

import keras_seqmodels as ks

FIXTURES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fixtures")
HERE = os.path.join(FIXTURES, "legacy_gru")


@pytest.fixture(scope="module")
def reference():
    return np.load(os.path.join(HERE, "reference.npz"))


def _gru_cells(layer):
    found = []
    for sub in layer._flatten_layers(include_self=True, recursive=True):
        if isinstance(sub, ks.cells.GRUCell):
            found.append(sub)
    return found


def test_fixture_config_has_no_reset_after_key():
    with zipfile.ZipFile(os.path.join(HERE, "cells.keras")) as f:
        config = f.read("config.json").decode()
    assert "GRUCell" in config and "reset_after" not in config


def test_old_saved_model_loads_with_identical_outputs(reference):
    model = keras.saving.load_model(os.path.join(HERE, "cells.keras"))
    grus = _gru_cells(model)
    assert len(grus) >= 6 and not any(cell.reset_after for cell in grus)
    out = model.predict({"x": reference["x"], "mask": reference["mask"]}, verbose=0)
    keys = [k.split("/", 1)[1] for k in reference.files if k.startswith("cells/")]
    assert sorted(keys) == sorted(out)
    for key in keys:
        np.testing.assert_allclose(
            np.asarray(out[key]), reference[f"cells/{key}"], rtol=1e-5, atol=1e-6, err_msg=key
        )


def test_old_mnist_renet_artifact_scores_unchanged(reference):
    path = os.path.join(HERE, "mnist-renet-2026-11-22.keras")
    model = keras.saving.load_model(path, compile=False, safe_mode=True)
    grus = _gru_cells(model)
    assert grus and not any(cell.reset_after for cell in grus)
    images = np.load(os.path.join(FIXTURES, "mnist_test_sample.npz"))["images"][:4]
    scores = np.asarray(model.predict(images.astype("float32"), verbose=0))
    np.testing.assert_allclose(scores, reference["mnist_renet_scores"], rtol=1e-5, atol=1e-4)


def test_new_configs_round_trip_both_forms():
    for reset_after in (True, False):
        cell = ks.cells.GRUCell(3, reset_after=reset_after)
        config = cell.get_config()
        assert config["reset_after"] is reset_after
        again = ks.cells.GRUCell.from_config(json.loads(json.dumps(config)))
        assert again.reset_after is reset_after
    assert ks.cells.GRUCell(3).reset_after is True


def test_seq2seq_gru_stays_reset_before():
    # Encoder-decoder models rebuild their cells from ``cell_type``, so a
    # model saved with cell_type="gru" must get the same (reset-before) GRU.
    from keras_seqmodels.seq2seq import RecurrentEncoder

    encoder = RecurrentEncoder(20, 4, 3, num_layers=2, cell_type="gru")
    cells = [layer.cell for layer in encoder.forward_layers + encoder.backward_layers]
    assert len(cells) == 4 and not any(cell.reset_after for cell in cells)
