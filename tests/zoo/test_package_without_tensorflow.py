"""Training where TensorFlow is missing, packaging where it is: the
framework saves ``NAME.unpackaged.keras`` when the recipe's ``package`` hook
needs TensorFlow, and ``--init-from FILE --epochs 0`` packages FILE; with
the multi30k-en-de recipe end to end (its prepared-data cache written on
TensorFlow, read by JAX with ``import tensorflow`` failing)."""

import dataclasses
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from test_framework import TINY_RECIPE, _optimizer_variables

from keras_seqmodels.zoo import framework


def _compile_options(config):
    import keras

    # A schedule over 0 steps is invalid: --epochs 0 must not reach it.
    schedule = keras.optimizers.schedules.CosineDecay(0.1, decay_steps=4 * config["epochs"])
    return dict(
        optimizer=keras.optimizers.SGD(schedule),
        loss=keras.losses.BinaryCrossentropy(from_logits=True),
    )


def _package_without_tensorflow(model, config):
    raise ModuleNotFoundError("No module named 'tensorflow'", name="tensorflow")


def _package(model, config):
    import keras

    inputs = keras.Input((3,))
    return keras.Model(inputs, keras.layers.Activation("sigmoid")(model(inputs)))


def _recipe(package):
    # The framework tests' tiny model, with a schedule and a package hook.
    return dataclasses.replace(
        TINY_RECIPE,
        config={"epochs": 2, "batch_size": 8},
        compile_options=_compile_options,
        package=package,
    )


def test_unpackaged_model_is_saved_then_packaged_from_init_from(tmp_path, capsys):
    import keras

    work = tmp_path / "run"
    framework.main(
        _recipe(_package_without_tensorflow), "train", ["--work-dir", str(work), "--verbose", "0"]
    )
    out = capsys.readouterr().out
    unpackaged = work / "tiny.unpackaged.keras"
    assert unpackaged.is_file() and not (work / "tiny.keras").exists()
    assert not _optimizer_variables(unpackaged) and _optimizer_variables(work / "best.keras")
    assert f"--init-from {unpackaged} --epochs 0" in out
    trained = json.loads((work / "best.json").read_text())

    target = tmp_path / "packaged"
    argv = ["--work-dir", str(target), "--verbose", "0", "--init-from", str(unpackaged),
            "--epochs", "0"]  # fmt: skip
    assert framework.main(_recipe(_package), "train", argv) == 0
    packaged = keras.saving.load_model(target / "tiny.keras")
    network = keras.saving.load_model(unpackaged)
    x, y = TINY_RECIPE.load_data(None, "validation", False, None)
    np.testing.assert_allclose(
        packaged.predict(x, verbose=0),
        1 / (1 + np.exp(-network.predict(x, verbose=0))),
        rtol=1e-5,
    )
    record = json.loads((target / "best.json").read_text())
    assert record["init_from"] == str(unpackaged) and record["epoch"] == trained["epoch"]
    assert record["trained_value"] == trained["value"] and record["run"] == str(work)
    # The monitored value is measured again on validation: the selected
    # epoch's val_loss, which best.json recorded during training.
    network.compile(loss=keras.losses.BinaryCrossentropy(from_logits=True))
    assert record["value"] == pytest.approx(network.evaluate(x, y, verbose=0), rel=1e-5)
    assert record["value"] == pytest.approx(trained["value"], rel=1e-5)


def test_a_package_error_other_than_missing_tensorflow_is_raised(tmp_path):
    def package(model, config):
        raise ImportError("No module named 'sacrebleu'", name="sacrebleu")

    with pytest.raises(ImportError, match="sacrebleu"):
        framework.main(_recipe(package), "train", ["--work-dir", str(tmp_path), "--verbose", "0"])
    assert not (tmp_path / "tiny.unpackaged.keras").exists()


def test_zero_epochs_without_init_from_trains_nothing(tmp_path, capsys):
    argv = ["--work-dir", str(tmp_path), "--verbose", "0", "--epochs", "0"]
    assert framework.main(_recipe(_package), "train", argv) == 0
    assert "nothing trained" in capsys.readouterr().out
    assert not (tmp_path / "best.keras").exists() and not (tmp_path / "tiny.keras").exists()


# `import tensorflow` (and TFDS) fails as on a machine without them.
NO_TENSORFLOW = textwrap.dedent(
    """
    import sys

    class NoTensorFlow:
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in ("tensorflow", "tensorflow_datasets", "tensorflow_text"):
                raise ModuleNotFoundError(f"No module named {name!r}", name=name)
            return None

    sys.meta_path.insert(0, NoTensorFlow())
    """
)
CLI = "import sys\nfrom keras_seqmodels.cli.main import main\nsys.exit(main(sys.argv[1:]))\n"
SMALL = ["--smoke", "--verbose", "0", "--embedding-dim", "8", "--encoder-units", "8",
         "--decoder-units", "8", "--batch-size", "4", "--beam", "1"]  # fmt: skip


def _seqmodels(backend, argv, cache, block_tensorflow=False, script=CLI):
    env = dict(
        os.environ,
        KERAS_BACKEND=backend,
        KERAS_SEQMODELS_CACHE_DIR=str(cache),
        JAX_PLATFORMS="cpu",
        TF_CPP_MIN_LOG_LEVEL="3",
    )
    code = (NO_TENSORFLOW if block_tensorflow else "") + script
    return subprocess.run(
        [sys.executable, "-c", code, *argv], env=env, capture_output=True, text=True, timeout=300
    )


def test_jax_without_tensorflow_names_the_missing_cache(tmp_path):
    done = _seqmodels(
        "jax", ["train", "multi30k-en-de", "--work-dir", str(tmp_path / "w"), *SMALL],
        tmp_path / "cache", block_tensorflow=True,
    )  # fmt: skip
    assert done.returncode != 0
    error = done.stderr
    assert "multi30k-en-de" in error and "TensorFlow is not installed" in error
    assert str(tmp_path / "cache" / "multi30k-en-de" / "prepared-min_count=2-") in error
    assert "seqmodels train multi30k-en-de --epochs 0 --smoke" in error


@pytest.mark.slow
def test_multi30k_trains_on_jax_without_tensorflow_then_packages_on_tensorflow(tmp_path):
    cache = tmp_path / "cache"
    argv = ["train", "multi30k-en-de", "--epochs", "0", "--work-dir", str(tmp_path / "w"), *SMALL]
    done = _seqmodels("tensorflow", argv, cache)
    assert done.returncode == 0, done.stderr[-3000:]
    assert len(list((cache / "multi30k-en-de").glob("prepared-min_count=2-*.npz"))) == 1

    work = tmp_path / "jax"
    argv = ["train", "multi30k-en-de", "--epochs", "1", "--work-dir", str(work), *SMALL]
    done = _seqmodels("jax", argv, cache, block_tensorflow=True)
    assert done.returncode == 0, done.stderr[-3000:]
    unpackaged = work / "multi30k-en-de.unpackaged.keras"
    assert unpackaged.is_file() and not (work / "multi30k-en-de.keras").exists()
    assert f"--init-from {unpackaged} --epochs 0" in done.stdout
    trained = json.loads((work / "best.json").read_text())

    target = tmp_path / "packaged"
    argv = ["train", "multi30k-en-de", "--init-from", str(unpackaged), "--epochs", "0",
            "--work-dir", str(target), *SMALL]  # fmt: skip
    done = _seqmodels("tensorflow", argv, cache)
    assert done.returncode == 0, done.stderr[-3000:]
    record = json.loads((target / "best.json").read_text())
    # The same val loss on TensorFlow's own tokenization as on the cached ids.
    assert record["value"] == pytest.approx(trained["value"], rel=1e-4)
    translate = textwrap.dedent(
        """
        import json, sys
        import keras
        import tensorflow as tf
        import keras_seqmodels  # noqa: F401
        model = keras.saving.load_model(sys.argv[1])
        out = model(tf.constant(["A man rides a bike.", "Two dogs play."])).numpy()
        print("RESULT", json.dumps([type(model).__name__] + [t.decode() for t in out]))
        """
    )
    done = _seqmodels("tensorflow", [str(target / "multi30k-en-de.keras")], cache,
                      script=translate)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    line = [x for x in done.stdout.splitlines() if x.startswith("RESULT")][-1]
    kind, *translations = json.loads(line[len("RESULT") :])
    assert kind == "Translator" and len(translations) == 2
    assert all(isinstance(t, str) for t in translations)
