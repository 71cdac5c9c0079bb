"""``seqmodels plot``: PNGs of training curves, NTM memory access and attention."""

import json

import keras
import numpy as np
import pytest
from cli_helpers import assert_one_line_error, png_size, run_cli

from keras_seqmodels import zoo
from keras_seqmodels.memory import NTM
from keras_seqmodels.utils import plotting


def assert_png(path, min_width=300, min_height=200):
    width, height = png_size(path)
    assert min_width <= width <= 4000 and min_height <= height <= 3000, (width, height)
    assert path.stat().st_size > 5000  # an empty canvas compresses to far less


# Training curves ---------------------------------------------------------------


@pytest.fixture(scope="module")
def csv_log(tmp_path_factory):
    """A real Keras CSVLogger file from two epochs of a tiny model."""
    path = tmp_path_factory.mktemp("log") / "history.csv"
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])
    model.compile("sgd", "mse", metrics=["mae"])
    x = np.random.default_rng(0).normal(size=(32, 3)).astype("float32")
    model.fit(x, x[:, :1], validation_split=0.25, epochs=3, verbose=0,
              callbacks=[keras.callbacks.CSVLogger(str(path))])
    return path


def test_load_history_reads_every_form(csv_log, tmp_path):
    from_csv = plotting.load_history(str(csv_log))
    assert {"epoch", "loss", "mae", "val_loss", "val_mae"} <= set(from_csv)
    assert from_csv["epoch"] == [0.0, 1.0, 2.0]
    series = {"loss": [3.0, 2.0, 1.5], "val_loss": [3.5, 2.5, 2.4]}
    forms = {
        "keras.json": json.dumps({"history": series, "params": {"epochs": 3}}),
        "plain.json": json.dumps(series),
        "epochs.jsonl": "\n".join(
            json.dumps({"epoch": i + 1, "loss": series["loss"][i],
                        "val_loss": series["val_loss"][i], "note": "x"})
            for i in range(3)
        ),
    }
    for name, text in forms.items():
        (tmp_path / name).write_text(text)
        loaded = plotting.load_history(str(tmp_path / name))
        assert {k: loaded[k] for k in series} == series, name
        assert "note" not in loaded  # non-numeric columns dropped


def test_plot_curves_writes_a_png(csv_log, tmp_path):
    out = tmp_path / "sub" / "curves.png"
    code, stdout, err = run_cli(["plot", "curves", str(csv_log), "--output", str(out)])
    assert code == 0, err
    assert "3 epochs" in stdout
    # Three panels (loss, mae, and nothing else) side by side.
    width, height = png_size(out)
    assert width > 2 * height
    assert_png(out)
    one = tmp_path / "loss.png"
    code, _, err = run_cli(["plot", "curves", str(csv_log), "-o", str(one), "--metrics", "loss"])
    assert code == 0, err
    assert png_size(one)[0] < width  # one panel only


def test_plot_curves_bad_inputs_are_one_line(csv_log, tmp_path):
    out = str(tmp_path / "c.png")
    code, _, err = run_cli(["plot", "curves", str(tmp_path / "none.csv"), "-o", out])
    assert_one_line_error(code, err, "no such file", "none.csv")
    assert err.startswith("seqmodels plot curves: error: ")
    bad = {
        "text.txt": ("just some words\nand more, here", "not a CSV table"),
        "list.json": ("[1, 2, 3]", "top level is a JSON list"),
        "empty.json": ("", "is empty"),
        "strings.json": ('{"history": {"loss": ["a", "b"]}}', "no numeric series"),
        "ragged.json": ('{"loss": [1, 2], "val_loss": [1]}', "different lengths"),
        "broken.jsonl": ('{"loss": 1}\n{"loss": ', "line 2: not JSON"),
    }
    for name, (text, message) in bad.items():
        (tmp_path / name).write_text(text)
        code, _, err = run_cli(["plot", "curves", str(tmp_path / name), "-o", out])
        assert_one_line_error(code, err, message)
    code, _, err = run_cli(["plot", "curves", str(csv_log), "-o", out, "--metrics", "bleu"])
    assert_one_line_error(code, err, "unknown metric", "bleu")
    code, _, err = run_cli(["plot", "curves", str(csv_log), "-o", str(tmp_path / "c.jpg")])
    assert_one_line_error(code, err, "--output must be a .png")


def test_plot_help_lists_the_kinds():
    code, out, _ = run_cli(["plot", "--help"])
    assert code == 0
    assert all(kind in out for kind in ("curves", "attention", "ntm"))
    for kind in ("curves", "attention", "ntm"):
        code, out, _ = run_cli(["plot", kind, "--help"])
        assert code == 0 and "--output" in out


# NTM memory access -------------------------------------------------------------


@pytest.fixture(scope="module")
def ntm_file(tmp_path_factory):
    """A tiny untrained NTM copy model (9 inputs, as ntm-copy) saved as .keras."""
    keras.utils.set_random_seed(3)
    inputs = keras.Input((None, 9))
    hidden = NTM(8, memory_size=6, memory_width=3, return_sequences=True, name="ntm")(inputs)
    model = keras.Model(inputs, keras.layers.Dense(8)(hidden))
    path = tmp_path_factory.mktemp("ntm") / "tiny_ntm.keras"
    model.save(path)
    return path


def test_ntm_weightings_equal_the_layers_states_at_every_step(ntm_file):
    model = keras.saving.load_model(ntm_file)
    x = plotting.copy_sequence(3, 9, seed=1)
    reads, writes = plotting.ntm_weightings(model, x)
    assert reads.shape == writes.shape == (7, 1, 6)
    np.testing.assert_allclose(reads.sum(-1), 1.0, atol=1e-5)
    ntm = model.get_layer("ntm")
    probe = NTM.from_config({**ntm.get_config(), "return_state": True, "name": "probe"})
    probe(keras.Input((None, 9)))
    probe.set_weights(ntm.get_weights())
    for t in (1, 4, 7):  # the final states of the prefix of length t
        states = probe(x[None, :t])
        np.testing.assert_allclose(reads[t - 1], np.asarray(states[-3])[0], atol=1e-6)
        np.testing.assert_allclose(writes[t - 1], np.asarray(states[-2])[0], atol=1e-6)


def test_plot_ntm_from_a_model_file(ntm_file, tmp_path):
    out = tmp_path / "ntm.png"
    code, stdout, err = run_cli(
        ["plot", "ntm", "--model-path", str(ntm_file), "--length", "5", "-o", str(out)]
    )
    assert code == 0, err
    assert "11 steps, 6 slots" in stdout
    assert_png(out)
    array = tmp_path / "x.npy"
    np.save(array, plotting.copy_sequence(2, 9))
    code, stdout, err = run_cli(
        ["plot", "ntm", "--model-path", str(ntm_file), "--input", str(array), "-o", str(out)]
    )
    assert code == 0, err
    assert "5 steps" in stdout


@pytest.mark.skipif("ntm-copy" not in zoo.list_models(), reason="ntm-copy not registered")
def test_plot_ntm_of_the_zoo_model(tmp_path):
    out = tmp_path / "ntm.png"
    code, stdout, err = run_cli(["plot", "ntm", "--length", "4", "-o", str(out)])
    assert code == 0, err
    assert "9 steps" in stdout
    assert_png(out)


def test_plot_ntm_bad_inputs_are_one_line(ntm_file, tmp_path):
    out = str(tmp_path / "ntm.png")
    code, _, err = run_cli(["plot", "ntm", "--model-path", str(tmp_path / "no.keras"), "-o", out])
    assert_one_line_error(code, err, "--model-path", "no such file")
    dense = tmp_path / "dense.keras"
    keras.Sequential([keras.Input((4,)), keras.layers.Dense(2)]).save(dense)
    code, _, err = run_cli(["plot", "ntm", "--model-path", str(dense), "-o", out])
    assert_one_line_error(code, err, "has no keras_seqmodels.memory.NTM layer")
    junk = tmp_path / "junk.keras"
    junk.write_bytes(b"not a zip file")
    code, _, err = run_cli(["plot", "ntm", "--model-path", str(junk), "-o", out])
    assert_one_line_error(code, err, "cannot load", "junk.keras")
    wide = tmp_path / "wide.npy"
    np.save(wide, np.zeros((4, 5), "float32"))
    code, _, err = run_cli(
        ["plot", "ntm", "--model-path", str(ntm_file), "--input", str(wide), "-o", out]
    )
    assert_one_line_error(code, err, "takes 9 features", "Received 5")
    code, _, err = run_cli(["plot", "ntm", "--model-path", str(ntm_file), "--length", "0"])
    assert_one_line_error(code, err, "--length")


# Attention -------------------------------------------------------------------


def test_plot_attention_blank_sentence_and_wrong_model(ntm_file, tmp_path):
    code, _, err = run_cli(["plot", "attention", "  ", "-o", str(tmp_path / "a.png")])
    assert_one_line_error(code, err, "non-blank sentence")
    code, _, err = run_cli(["plot", "attention", "A dog.", "--model-path", str(ntm_file),
                            "-o", str(tmp_path / "a.png")])
    assert_one_line_error(code, err, "not a translation model")


@pytest.mark.tf_only
@pytest.mark.slow
def test_plot_attention_of_the_shipped_translator(tmp_path):
    out = tmp_path / "attention.png"
    code, stdout, err = run_cli(["plot", "attention", "A man is riding a bicycle.",
                                 "-o", str(out)])
    assert code == 0, err
    translation = stdout.splitlines()[0]
    assert "Fahrrad" in translation
    assert_png(out, min_width=400, min_height=300)


def test_attention_and_ntm_plots_have_a_colour_bar(tmp_path, monkeypatch):
    from matplotlib.figure import Figure

    labels = []
    original = Figure.colorbar

    def recording(self, mappable, *args, **kwargs):
        labels.append(kwargs.get("label"))
        return original(self, mappable, *args, **kwargs)

    monkeypatch.setattr(Figure, "colorbar", recording)
    weights = np.full((2, 3), 1 / 3)
    path = plotting.plot_attention(weights, ["a", "b", "c"], ["x", "y"], str(tmp_path / "a.png"))
    assert png_size(path)[0] > 0
    w = np.eye(4)  # (time, slots)
    path = plotting.plot_ntm_weightings(w, w, str(tmp_path / "n.png"))
    assert png_size(path)[0] > 0
    assert labels == ["attention weight", "weight"]
