"""ks.layers.Bias, and with keras.layers.ReversibleEmbedding the tied output layer."""

import keras
import numpy as np
import pytest

import keras_seqmodels as ks


def test_adds_the_learned_vector_to_the_last_axis():
    layer = ks.layers.Bias(bias_initializer=keras.initializers.RandomNormal(seed=1))
    x = np.random.default_rng(0).standard_normal((2, 4, 3)).astype("float32")
    out = np.asarray(layer(x))
    b = keras.ops.convert_to_numpy(layer.bias)
    assert b.shape == (3,) and np.abs(b).max() > 0
    np.testing.assert_allclose(out, x + b, rtol=0, atol=1e-7)


def test_the_bias_is_trained():
    x = np.zeros((8, 3), "float32")
    y = np.tile(np.array([[1.0, -2.0, 0.5]], "float32"), (8, 1))
    model = keras.Sequential([keras.Input((3,)), ks.layers.Bias()])
    model.compile(keras.optimizers.SGD(0.5), "mse")
    model.fit(x, y, epochs=40, verbose=0)
    np.testing.assert_allclose(keras.ops.convert_to_numpy(model.layers[-1].bias), y[0],
                               atol=1e-3)  # fmt: skip


def test_tied_output_layer_round_trips_through_keras_file(tmp_path):
    """Embedding E for the ids and h Eᵀ + b for the logits, one matrix."""
    ids = keras.Input((None,), dtype="int32")
    embedding = keras.layers.ReversibleEmbedding(11, 4, name="embedding")
    h = keras.layers.Dense(4, activation="tanh")(embedding(ids))
    logits = ks.layers.Bias(bias_initializer="ones", name="logits_bias")(
        embedding(h, reverse=True)
    )
    model = keras.Model(ids, logits)
    assert len(model.trainable_weights) == 4  # E, the Dense's kernel and bias, b
    x = np.array([[1, 5, 10]], "int32")
    E = keras.ops.convert_to_numpy(embedding.embeddings)
    dense = model.layers[2]
    hidden = np.tanh(E[x] @ keras.ops.convert_to_numpy(dense.kernel)
                     + keras.ops.convert_to_numpy(dense.bias))  # fmt: skip
    np.testing.assert_allclose(model.predict_on_batch(x), hidden @ E.T + 1.0, atol=1e-5)
    path = tmp_path / "tied.keras"
    model.save(path)
    again = keras.saving.load_model(path, safe_mode=True)
    np.testing.assert_allclose(again.predict_on_batch(x), model.predict_on_batch(x), atol=0)


def test_bad_input_names_the_layer_and_argument():
    with pytest.raises(ValueError, match=r"bias_out: the last dimension of `inputs`"):
        ks.layers.Bias(name="bias_out").build((2, None))
    with pytest.raises(ValueError, match=r"bias_out: `inputs` must have rank >= 1"):
        ks.layers.Bias(name="bias_out").build(())
    with pytest.raises(ValueError, match=r"bias_out: `inputs` must be a floating-point"):
        ks.layers.Bias(name="bias_out")(np.ones((2, 3), "int32"))
