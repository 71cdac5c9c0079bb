"""The multi30k-en-de recipe's batches, and its training and packaging on
the smoke pairs with the options the shipped model leaves off."""

import json

import keras
import numpy as np
import pytest

from keras_seqmodels.cli.main import main
from keras_seqmodels.zoo.models.multi30k_en_de import recipe as r


def test_batches_have_few_shapes_and_shift_targets():
    rng = np.random.default_rng(0)
    n = 50
    src = np.zeros((n, 40), "int32")
    tgt = np.zeros((n, 42), "int32")
    for i in range(n):
        k = rng.integers(1, 38)
        src[i, :k] = rng.integers(4, 20, size=k)
        tgt[i, : k + 2] = [2] + list(rng.integers(4, 20, size=k)) + [3]
    batches = r.bucketed_batches(src, tgt, 8, shuffle=True)
    assert sum(int((b[0][0] > 0).any(1).sum()) for b in batches) == n
    assert {b[0][0].shape[1] for b in batches} <= set(r.WIDTHS)
    for (s, t_in), t_out in batches:
        assert s.shape[0] == 8 and t_in.shape == t_out.shape
        np.testing.assert_array_equal(t_in[:, 1:], t_out[:, :-1])


@pytest.mark.tf_only
@pytest.mark.slow
def test_train_with_input_feeding_and_scheduled_sampling_packages_a_translator(tmp_path):
    if keras.backend.backend() != "tensorflow":
        pytest.skip("the Translator (string model) needs TensorFlow")
    import tensorflow as tf

    small = ["--embedding-dim", "4", "--encoder-units", "4", "--decoder-units", "6",
             "--encoder-layers", "1", "--dropout", "0.0", "--batch-size", "2"]  # fmt: skip
    # Options off in the shipped model: input feeding, scheduled sampling per batch.
    options = ["--input-feeding", "true", "--scheduled-sampling", "linear",
               "--ss-c", "0.25", "--ss-per", "batch"]  # fmt: skip
    argv = ["train", "multi30k-en-de", "--smoke", "--epochs", "1", "--verbose", "0",
            "--work-dir", str(tmp_path)] + small + options  # fmt: skip
    assert main(argv) == 0
    config = json.loads((tmp_path / "config.json").read_text())
    assert config["input_feeding"] and config["scheduled_sampling"] == "linear"
    model = keras.saving.load_model(tmp_path / "multi30k-en-de.keras")
    assert model.model.decoder.input_feeding
    # Two batches: ε = 1, 0.75 (the best epoch's weights saved after them).
    assert float(keras.ops.convert_to_numpy(model.model.decoder.teacher_probability)) < 1.0
    assert model(tf.constant(["A man", ""])).shape == (2,)
