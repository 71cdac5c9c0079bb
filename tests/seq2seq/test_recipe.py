"""The multi30k-en-de recipe's fit and assemble steps on tiny arrays."""

import importlib.util
import json
import os

import keras
import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _recipe():
    path = os.path.join(ROOT, "zoo", "multi30k-en-de", "recipe.py")
    spec = importlib.util.spec_from_file_location("m30k_recipe", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_batches_have_few_shapes_and_shift_targets():
    r = _recipe()
    rng = np.random.default_rng(0)
    n = 50
    src = np.zeros((n, 40), "int32")
    tgt = np.zeros((n, 42), "int32")
    for i in range(n):
        k = rng.integers(1, 38)
        src[i, :k] = rng.integers(4, 20, size=k)
        tgt[i, : k + 2] = [2] + list(rng.integers(4, 20, size=k)) + [3]
    batches = r._batches(src, tgt, 8, shuffle=True)
    assert sum(int((b[0][0] > 0).any(1).sum()) for b in batches) == n
    assert {b[0][0].shape[1] for b in batches} <= set(r.WIDTHS)
    for (s, t_in), t_out in batches:
        assert s.shape[0] == 8 and t_in.shape == t_out.shape
        np.testing.assert_array_equal(t_in[:, 1:], t_out[:, :-1])


@pytest.mark.tf_only
@pytest.mark.slow
def test_fit_then_assemble_gives_a_string_translator(tmp_path, monkeypatch):
    if keras.backend.backend() != "tensorflow":
        pytest.skip("assemble builds a string model (TensorFlow)")
    import tensorflow as tf

    r = _recipe()
    monkeypatch.setattr(r, "MODEL_CONFIG", dict(
        embedding_dim=4, encoder_units=4, decoder_units=6, encoder_layers=1,
        decoder_layers=1, bidirectional=True, cell_type="lstm",
        attention="multiplicative", context_input=False, tie_embeddings=True,
        dropout=0.0))
    vocab = {"source": ["<s>", "</s>", "a", "b"], "target": ["<s>", "</s>", "x", "y"]}
    src = np.array([[4, 5, 3], [5, 3, 0]] * 4, "int32")
    tgt = np.array([[2, 4, 5, 3], [2, 5, 3, 0]] * 4, "int32")
    np.savez(tmp_path / "arrays.npz", train_source=src, train_target=tgt,
             val_source=src, val_target=tgt)
    (tmp_path / "vocab.json").write_text(json.dumps(vocab))
    # With the options off by default in the shipped model, the recipe test
    # trains with them on (input feeding, scheduled sampling per batch).
    work = ["--work-dir", str(tmp_path), "--dropout", "0.0", "--input-feeding",
            "--scheduled-sampling", "linear", "--ss-c", "0.25", "--ss-per", "batch"]
    assert r.main(["fit", "--epochs", "2", "--batch-size", "4"] + work) == 0
    assert (tmp_path / "best_weights.npz").exists()
    history = json.loads((tmp_path / "history.json").read_text())
    assert history["config"]["input_feeding"] and history["config"]["scheduled_sampling"]
    assert r.main(["assemble"] + work) == 0
    model = keras.saving.load_model(tmp_path / "multi30k-en-de.keras")
    assert model.model.decoder.input_feeding
    # Four batches: ε = 1, 0.75, 0.5, 0.25 (saved with the best epoch's weights).
    assert float(keras.ops.convert_to_numpy(model.model.decoder.teacher_probability)) < 1.0
    assert model(tf.constant(["a b", ""])).shape == (2,)
