"""The memory zoo models: babi-memn2n on the committed bAbI sample, and the
ntm-copy data and metric (keras_seqmodels.zoo.models.ntm_copy.data) and its
artifact where registered."""

import contextlib
import importlib.util
import io
import os

import numpy as np
import pytest

from keras_seqmodels import zoo
from keras_seqmodels.zoo.models.ntm_copy import data as ntm_data

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SAMPLE = os.path.join(REPO, "tests", "fixtures", "babi")
# Mean bit errors per sequence the shipped ntm-copy must stay under on the 32
# length-20 sequences of the test below (it makes 0.03: one wrong bit;
# chance is 80).
NTM_FLOOR_L20 = 0.25


def load_recipe(name):
    path = os.path.join(REPO, "zoo", name, "recipe.py")
    spec = importlib.util.spec_from_file_location(f"recipe_{name.replace('-', '_')}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


babi_registered = pytest.mark.skipif(
    "babi-memn2n" not in zoo.list_models(),
    reason="babi-memn2n is not registered in the zoo yet (see zoo/babi-memn2n/card.md)",
)


@babi_registered
def test_babi_memn2n_reproduces_its_recorded_sample_error():
    entry = zoo.info("babi-memn2n")
    assert entry["card"] == "zoo/babi-memn2n/card.md"
    assert len(entry["metrics"]["test_error_percent_per_task"]) == 20
    recipe = load_recipe("babi-memn2n")
    import json

    with open(zoo.asset_path("babi-memn2n", "vocab")) as f:
        vocabulary = json.load(f)["vocabulary"]
    model = zoo.load("babi-memn2n").model
    error = recipe.sample_error(model, vocabulary, SAMPLE)
    np.testing.assert_allclose(error, entry["sample_error_percent"], atol=0.01)
    # Chance over the 176-word vocabulary is ~99% error.
    assert error < 80.0


@babi_registered
def test_seqmodels_evaluate_babi_prints_the_mean_error_last():
    from keras_seqmodels.cli.main import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["evaluate", "babi-memn2n", "--data-dir", SAMPLE]) == 0
    last = out.getvalue().strip().splitlines()[-1]
    np.testing.assert_allclose(
        float(last), zoo.info("babi-memn2n")["sample_error_percent"], atol=0.01
    )


@babi_registered
def test_babi_memn2n_averages_the_probabilities_of_its_memory_networks():
    import json

    from keras_seqmodels.memory import MemoryNetwork

    recipe = load_recipe("babi-memn2n")
    with open(zoo.asset_path("babi-memn2n", "vocab")) as f:
        vocabulary = json.load(f)["vocabulary"]
    model = zoo.load("babi-memn2n").model
    members = [layer for layer in model.layers if isinstance(layer, MemoryNetwork)]
    assert members and all(m.hops == 3 and m.memory_size == 50 for m in members)
    stories, queries = recipe.arrays(recipe.load_split(SAMPLE, "test"), vocabulary)[:2]
    stories, queries = stories[::4], queries[::4]

    def softmax(z):
        z = np.asarray(z, "float64")
        z = np.exp(z - z.max(axis=-1, keepdims=True))
        return z / z.sum(axis=-1, keepdims=True)

    expected = np.mean([softmax(m([stories, queries])) for m in members], axis=0)
    np.testing.assert_allclose(
        softmax(model.predict([stories, queries], verbose=0)), expected, atol=1e-5
    )


def test_babi_assembled_model_is_saved_only_when_its_valid_error_matches(tmp_path):
    recipe = load_recipe("babi-memn2n")
    with open(os.path.join(REPO, "zoo", "babi-memn2n", "vocab.json")) as f:
        import json

        vocabulary = json.load(f)["vocabulary"]
    rng = np.random.default_rng(0)
    weights = [
        rng.normal(0, 0.1, (4, len(vocabulary), 8)).astype("float32"),
        rng.normal(0, 0.1, (4, 50, 8)).astype("float32"),
        np.asarray(1.0, "float32"),
    ]
    model = recipe.build_ensemble(len(vocabulary), [weights])
    x = recipe.arrays(recipe.load_split(SAMPLE, "test"), vocabulary)
    error = float(np.mean(list(recipe.per_task_errors(model, *x).values())))
    with pytest.raises(RuntimeError, match="differs from the record 0.00%"):
        recipe.check_and_save(
            model, x, 0.0, 0.1, str(tmp_path / "bad"), vocabulary, "probe", "the record"
        )
    assert not os.path.exists(tmp_path / "bad")
    mean, _ = recipe.check_and_save(
        model, x, error, 0.1, str(tmp_path / "ok"), vocabulary, "probe", "the record"
    )
    assert mean == pytest.approx(error)
    assert sorted(os.listdir(tmp_path / "ok")) == ["best.keras", "vocab.json"]


def test_babi_greedy_selection_adds_the_member_that_fixes_the_errors():
    recipe = load_recipe("babi-memn2n")
    answers = np.array([0, 0, 0, 0, 1, 1, 1, 1])
    tasks = np.array([1, 1, 1, 1, 2, 2, 2, 2])

    def member(unsure):
        """Right with 0.9 except at ``unsure``: 0.6 on the wrong word 2, 0.35 right."""
        probs = np.full((8, 3), 0.05)
        probs[np.arange(8), answers] = 0.9
        probs[unsure, 2], probs[unsure, answers[unsure]] = 0.6, 0.35
        return probs

    wrong = np.full((8, 3), 0.05)
    wrong[:, 2] = 0.9
    candidates = np.stack(
        [
            wrong,  # 100% error
            member([4, 5]),  # 25%: the best alone
            member([0, 1, 2]),  # 37.5%, but right where the best is unsure
            member([4, 5]),  # a copy of the best
        ]
    )
    chosen, history = recipe.greedy_selection(candidates, answers, tasks, max_members=4)
    assert chosen[:2] == [1, 2]
    assert [round(e, 6) for e, _ in history[:2]] == [25.0, 0.0]
    assert 0 not in chosen  # the prefix of lowest error is kept
    mean = candidates[chosen].mean(0)
    assert recipe.task_mean_error(mean.argmax(-1), answers, tasks) == 0.0


class _Oracle:
    """Predicts the copy from the inputs themselves (what a perfect model does)."""

    def predict_on_batch(self, x):
        length = (x.shape[1] - 1) // 2
        logits = np.full(x.shape[:2] + (8,), -5.0)
        logits[:, length + 1 :] = np.where(x[:, :length, :8] > 0.5, 5.0, -5.0)
        return logits


class _Zeros:
    def predict_on_batch(self, x):
        return np.full(x.shape[:2] + (8,), -5.0)


def test_copy_task_batches_and_bit_error_metric():
    recipe = ntm_data
    x, y, w = recipe.copy_batch(np.random.default_rng(0), 4, 3)
    assert x.shape == (4, 7, 9) and y.shape == (4, 7, 8) and w.shape == (4, 7)
    np.testing.assert_array_equal(x[:, 3, 8], 1.0)  # the delimiter
    np.testing.assert_array_equal(x[:, 4:], 0.0)  # nothing during recall
    np.testing.assert_array_equal(y[:, 4:], x[:, :3, :8])
    np.testing.assert_array_equal(w, [[0, 0, 0, 0, 1, 1, 1]] * 4)
    assert recipe.bit_errors(_Oracle(), 5, 32) == 0.0
    # Predicting all zeros misses every 1 bit: about half of 8 x L.
    assert 15.0 < recipe.bit_errors(_Zeros(), 5, 256) < 25.0


def test_padded_copy_batches_match_the_unpadded_layout():
    recipe = ntm_data
    x, y, w, lengths = recipe.padded_batch(np.random.default_rng(0), 64, 6, 15, 3, 0.25)
    assert x.shape == (64, 15, 9) and y.shape == (64, 15, 8) and w.shape == (64, 15)
    assert lengths.min() >= 1 and lengths.max() <= 6 and (lengths > 3).any()
    for xi, yi, wi, n in zip(x, y, w, lengths):
        np.testing.assert_array_equal(xi[n, 8], 1.0)  # the delimiter
        np.testing.assert_array_equal(xi[n + 1 :], 0.0)  # recall phase and padding
        np.testing.assert_array_equal(yi[n + 1 : 2 * n + 1], xi[:n, :8])
        np.testing.assert_array_equal(wi, (np.arange(15) > n) & (np.arange(15) <= 2 * n))
        np.testing.assert_array_equal(yi[wi == 0], 0.0)
    np.testing.assert_array_equal(recipe.errors_per_sequence(np.where(y > 0.5, 5.0, -5.0), y, w), 0)
    # All-zero outputs miss exactly the 1 bits of the copy.
    np.testing.assert_array_equal(
        recipe.errors_per_sequence(np.full(y.shape, -5.0), y, w), y.sum(axis=(1, 2))
    )
    with pytest.raises(ValueError, match="steps"):
        recipe.padded_batch(np.random.default_rng(0), 2, 6, 12)


ntm_registered = pytest.mark.skipif(
    "ntm-copy" not in zoo.list_models(),
    reason="ntm-copy is not registered in the zoo yet (see zoo/ntm-copy/card.md)",
)


@ntm_registered
def test_ntm_copy_artifact_matches_its_card():
    recipe = ntm_data
    entry = zoo.info("ntm-copy")
    model = zoo.load("ntm-copy").model
    value = recipe.bit_errors(model, 10, 256)
    np.testing.assert_allclose(
        value, entry["metrics"]["test_bit_errors_per_sequence_L10"], atol=1e-3
    )


@ntm_registered
def test_ntm_copy_artifact_copies_fixed_seed_sequences_and_round_trips(tmp_path):
    import keras

    recipe = ntm_data
    model = zoo.load("ntm-copy").model
    x, y, w = recipe.copy_batch(np.random.default_rng(7), 32, 20)
    logits = np.asarray(model.predict_on_batch(x))
    errors = recipe.errors_per_sequence(logits, y, w)
    # Chance is 80 wrong bits per sequence at length 20.
    assert errors.mean() < NTM_FLOOR_L20
    path = str(tmp_path / "ntm.keras")
    model.save(path)
    again = keras.saving.load_model(path, safe_mode=True)
    np.testing.assert_allclose(np.asarray(again.predict_on_batch(x)), logits, atol=1e-4)
