"""pixel-mnist and pixel-mnist-permuted: the permutation inside the model, the
network's options, the recipe through the framework (TensorFlow, and JAX
with TensorFlow missing) and the task's input contract."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from keras_seqmodels.zoo import framework
from keras_seqmodels.zoo.digits import DigitTask
from keras_seqmodels.zoo.models import specs
from keras_seqmodels.zoo.models.pixel_mnist import network, permuted_recipe, recipe
from keras_seqmodels.zoo.models.pixel_mnist.config import CONFIG, PERMUTED_CONFIG
from keras_seqmodels.zoo.task import InputError

SMALL = dict(CONFIG, layer="lstm", units=6, blocks=1, smoke=True)


def _task(name, model):
    """The task around ``model`` without the zoo index (which lists only
    registered models): ``predict`` needs only its name and model."""
    task = DigitTask.__new__(DigitTask)
    task.name, task.model = name, model
    return task


def test_permutation_is_fixed_by_its_seed_and_the_matrix_applies_it():
    order = network.permutation(0)
    np.testing.assert_array_equal(order, network.permutation(0))
    assert sorted(order) == list(range(784)) and not np.array_equal(order, np.arange(784))
    assert not np.array_equal(order, network.permutation(1))
    x = np.random.default_rng(0).random((3, 784)).astype("float32")
    np.testing.assert_array_equal(x @ network.permutation_matrix(order), x[:, order])


def test_permuted_model_reads_the_pixels_in_the_seeded_order():
    """The permuted network on an image computes what the raster-order network
    (same weights) computes on the image whose raster order is that permutation."""
    permuted = network.build_model(dict(SMALL, permutation_seed=3))
    raster = network.build_model(SMALL)
    order = network.permutation(3)
    np.testing.assert_array_equal(
        permuted.get_layer("permutation").get_weights()[0], network.permutation_matrix(order)
    )
    assert not permuted.get_layer("permutation").trainable
    for layer in raster.layers:
        if layer.weights:
            layer.set_weights(permuted.get_layer(layer.name).get_weights())
    images = np.random.default_rng(1).integers(0, 256, (2, 28, 28)).astype("float32")
    reordered = images.reshape(2, 784)[:, order].reshape(2, 28, 28)
    np.testing.assert_allclose(
        permuted.predict(images, verbose=0), raster.predict(reordered, verbose=0), atol=1e-5
    )
    assert not np.allclose(
        permuted.predict(images, verbose=0), raster.predict(images, verbose=0), atol=1e-3
    )
    # The trained parameters leave the frozen permutation out.
    assert network.trainable_parameters(permuted) == network.trainable_parameters(raster)
    assert permuted.count_params() == raster.count_params() + 784 * 784


@pytest.mark.parametrize(
    "key, value, message",
    [
        ("layer", "gru", "`layer` must be one of lstm, mingru"),
        ("pool", "max", "`pool` must be one of mean, last"),
        ("blocks", 0, "`blocks` must be a positive integer"),
    ],
)
def test_bad_options_are_named(key, value, message):
    with pytest.raises(ValueError, match=f"pixel-mnist: {message}"):
        recipe.build_model(dict(SMALL, **{key: value}))


def test_last_step_pooling_gives_ten_scores():
    model = network.build_model(dict(SMALL, pool="last"))
    assert tuple(model(np.zeros((2, 28, 28), "float32")).shape) == (2, 10)


def test_both_models_are_declared_with_their_recipes():
    declared = specs()
    assert declared["pixel-mnist"].recipe_module() is recipe
    assert declared["pixel-mnist-permuted"].recipe_module() is permuted_recipe
    assert "permutation_seed" in PERMUTED_CONFIG and "permutation_seed" not in CONFIG


def test_smoke_train_then_evaluate_and_predict(tmp_path, capsys):
    import keras

    rec = framework.Recipe.from_module(permuted_recipe, specs()["pixel-mnist-permuted"])
    argv = ["--smoke", "--verbose", "0", "--epochs", "2", "--layer", "lstm", "--units", "4",
            "--blocks", "1", "--work-dir", str(tmp_path)]  # fmt: skip
    assert framework.main(rec, "train", argv) == 0
    selected = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    path = tmp_path / "pixel-mnist-permuted.keras"
    assert selected["selected"] == str(path) and selected["monitor"] == "val_accuracy"
    history = (tmp_path / "history.csv").read_text().splitlines()
    assert "learning_rate" in history[0] and len(history) == 3
    model = keras.saving.load_model(path)
    assert model.get_layer("permutation").get_weights()[0].shape == (784, 784)
    argv = ["--smoke", "--model", str(path), "--layer", "lstm"]
    assert framework.main(rec, "evaluate", argv) == 0
    metrics = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert metrics["examples"] == 16 and 0 <= metrics["accuracy"] <= 1
    task = _task("pixel-mnist-permuted", model)
    digits = task.predict(np.zeros((3, 28, 28)))
    assert len(digits) == 3 and all(0 <= d <= 9 for d in digits)
    assert isinstance(task.predict(np.full((28, 28), 255.0)), int)


@pytest.mark.parametrize(
    "image, problem",
    [
        (np.zeros((28, 27)), r"shape \(28, 27\)"),
        (np.full((1, 28, 28), np.nan), "non-finite pixel"),
        (np.full((1, 28, 28), 256.0), "outside 0-255"),
        ([[1, 2], [3]], "not numbers of one shape"),
    ],
)
def test_task_names_bad_images(image, problem):
    task = _task("pixel-mnist", network.build_model(SMALL))
    with pytest.raises(InputError, match=problem):
        task.predict(image)


# `import tensorflow` (and TFDS) fails, as on a GPU machine with JAX alone.
NO_TENSORFLOW = """
import sys

class NoTensorFlow:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("tensorflow", "tensorflow_datasets", "tensorflow_text"):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

sys.meta_path.insert(0, NoTensorFlow())
from keras_seqmodels.cli.main import main
sys.exit(main(sys.argv[1:]))
"""


@pytest.mark.slow
def test_trains_and_evaluates_on_jax_without_tensorflow(tmp_path):
    env = dict(os.environ, KERAS_BACKEND="jax", JAX_PLATFORMS="cpu", TF_CPP_MIN_LOG_LEVEL="3")
    argv = ["train", "pixel-mnist-permuted", "--smoke", "--verbose", "0", "--epochs", "1",
            "--layer", "lstm", "--units", "4", "--blocks", "1", "--work-dir", str(tmp_path),
            "--weights-dtype", "float16"]  # fmt: skip
    done = subprocess.run([sys.executable, "-c", NO_TENSORFLOW, *argv], env=env,
                          capture_output=True, text=True, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    path = tmp_path / "pixel-mnist-permuted.keras"
    assert path.is_file()
    argv = ["evaluate", "pixel-mnist-permuted", "--smoke", "--model", str(path)]
    done = subprocess.run([sys.executable, "-c", NO_TENSORFLOW, *argv], env=env,
                          capture_output=True, text=True, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads(done.stdout.strip().splitlines()[-1])["examples"] == 16


@pytest.mark.parametrize("layer", ["lstm", "mingru", "minlstm"])
def test_chrono_biases_start_the_forget_gates_at_long_time_constants(layer):
    units = 64
    model = network.build_model(dict(SMALL, layer=layer, units=units, chrono=True))
    bias = model.get_layer(f"block_1_{layer}").get_weights()[-1]
    sigmoid = lambda v: 1 / (1 + np.exp(-v))  # noqa: E731
    if layer == "lstm":  # gates i, f, g, o
        forget, other = sigmoid(bias[units : 2 * units]), sigmoid(bias[:units])
        keep = forget / (forget + other)  # the share of c(t-1) kept when i and f are balanced
    elif layer == "minlstm":  # f, i, h: a = f / (f + i)
        forget, other = sigmoid(bias[:units]), sigmoid(bias[units : 2 * units])
        keep = forget / (forget + other)
    else:  # z, h: a = 1 - z
        keep = 1 - sigmoid(bias[:units])
    tau = 1 / (1 - keep)
    assert tau.min() >= 2 - 1e-3 and tau.max() <= 784 + 1e-3
    assert tau.max() > 300 and np.median(tau) > 100  # uniform over [2, 784]
    plain = network.build_model(dict(SMALL, layer=layer, units=units, chrono=False))
    assert not np.any(plain.get_layer(f"block_1_{layer}").get_weights()[-1][:units] < -1)
