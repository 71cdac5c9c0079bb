"""The memory zoo models: babi-memn2n on the committed bAbI sample, and the
ntm-copy data and metric (keras_seqmodels.zoo.models.ntm_copy.data) and its
artifact where registered."""

import contextlib
import io
import json
import os

import numpy as np
import pytest

from keras_seqmodels import zoo
from keras_seqmodels.zoo.models.babi_memn2n import recipe
from keras_seqmodels.zoo.models.ntm_copy import data as ntm_data

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SAMPLE = os.path.join(REPO, "tests", "fixtures", "babi")
# Mean bit errors per sequence the shipped ntm-copy must stay under on the 32
# length-20 sequences of the test below (it makes 0.03: one wrong bit;
# chance is 80).
NTM_FLOOR_L20 = 0.25


babi_registered = pytest.mark.skipif(
    "babi-memn2n" not in zoo.list_models(),
    reason="babi-memn2n is not registered in the zoo yet (see zoo/babi-memn2n/card.md)",
)


@babi_registered
def test_babi_memn2n_reproduces_its_recorded_sample_error():
    entry = zoo.info("babi-memn2n")
    assert entry["card"] == "zoo/babi-memn2n/card.md"
    assert len(entry["metrics"]["test_error_percent_per_task"]) == 20
    model = zoo.load("babi-memn2n").model
    data = recipe.evaluation_data(SAMPLE, "test", False, {"model": None})
    error = recipe.evaluate(model, data, {})["mean_error_percent"]
    np.testing.assert_allclose(error, entry["sample_error_percent"], atol=0.006)
    # Chance over the 176-word vocabulary is ~99% error.
    assert error < 80.0


@babi_registered
def test_seqmodels_evaluate_babi_prints_the_mean_error_last():
    from keras_seqmodels.cli.main import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["evaluate", "babi-memn2n", "--data-dir", SAMPLE, "--split", "test"]) == 0
    last = json.loads(out.getvalue().strip().splitlines()[-1])
    assert last["split"] == "test" and len(last["error_percent_per_task"]) == 20
    np.testing.assert_allclose(
        last["mean_error_percent"], zoo.info("babi-memn2n")["sample_error_percent"], atol=0.006
    )


@babi_registered
def test_babi_memn2n_answers_with_the_mean_probabilities_of_its_memory_networks():
    # One network (the shipped single model) or an ensemble averaged by ProbabilityAverage.
    from keras_seqmodels.memory import MemoryNetwork

    with open(zoo.asset_path("babi-memn2n", "vocab")) as f:
        vocabulary = json.load(f)["vocabulary"]
    model = zoo.load("babi-memn2n").model
    members = [layer for layer in model.layers if isinstance(layer, MemoryNetwork)]
    assert members and all(m.hops == 3 and m.memory_size == 50 for m in members)
    stories, queries = recipe.arrays(SAMPLE, "test", vocabulary)[:2]
    stories, queries = stories[::4], queries[::4]

    def softmax(z):
        z = np.asarray(z, "float64")
        z = np.exp(z - z.max(axis=-1, keepdims=True))
        return z / z.sum(axis=-1, keepdims=True)

    expected = np.mean([softmax(m([stories, queries])) for m in members], axis=0)
    np.testing.assert_allclose(
        softmax(model.predict([stories, queries], verbose=0)), expected, atol=1e-5
    )


def test_babi_tasks_option_keeps_the_named_tasks_their_numbers_and_the_vocabulary():
    from keras_seqmodels.data import babi

    examples = [e for task in recipe.split_tasks(SAMPLE, "test") for e in task]
    words = babi.build_vocabulary(examples)
    stories, queries, answers, tasks = recipe.arrays(SAMPLE, "test", words)
    assert sorted(set(tasks.tolist())) == list(range(1, 21))
    chosen = np.isin(tasks, [1, 16])
    sub = recipe.arrays(SAMPLE, "test", words, "16, 1")
    for full, part in zip((stories, queries, answers, tasks), sub):
        np.testing.assert_array_equal(part, full[chosen])
    assert recipe.task_numbers("all", 20) == list(range(1, 21))
    for bad in ("0", "21", "x", ""):
        with pytest.raises(ValueError, match="tasks"):
            recipe.arrays(SAMPLE, "test", words, bad)


def test_babi_tasks_option_reaches_training_and_evaluation(tmp_path, capsys):
    from keras_seqmodels.cli.main import main

    work = str(tmp_path / "run")
    small = ["--smoke", "--tasks", "2", "--embed-dim", "8", "--ls-max-epochs", "1"]
    assert main(["train", "babi-memn2n", *small, "--epochs", "2", "--work-dir", work]) == 0
    with open(os.path.join(work, "config.json")) as f:
        assert json.load(f)["tasks"] == "2"
    capsys.readouterr()
    model = os.path.join(work, "babi-memn2n.keras")
    assert main(["evaluate", "babi-memn2n", *small[:3], "--model", model]) == 0
    last = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert list(last["error_percent_per_task"]) == ["2"]
    # The vocabulary is the full one whatever the tasks.
    with open(os.path.join(work, "vocab.json")) as f:
        assert json.load(f)["vocabulary"] == recipe.vocabulary(None)


def test_babi_combine_averages_the_member_probabilities_and_keeps_one_member():
    import keras

    config = dict(recipe.CONFIG, data_dir=None, smoke=True, embed_dim=8)
    keras.utils.set_random_seed(0)
    models = [recipe.build_model(config) for _ in range(2)]
    rng = np.random.default_rng(0)
    for model in models:  # random weights, hop softmax in
        layer = model.get_layer("memn2n")
        layer.set_weights([rng.normal(0, 0.3, w.shape).astype("float32") for w in
                           layer.get_weights()[:2]] + [np.asarray(1.0, "float32")])  # fmt: skip
    assert recipe.combine(models[:1], config) is models[0]
    combined = recipe.combine(models, config)
    stories, queries, _, _ = recipe.arrays(None, "validation", recipe.vocabulary(None))

    def softmax(z):
        z = np.asarray(z, "float64")
        z = np.exp(z - z.max(axis=-1, keepdims=True))
        return z / z.sum(axis=-1, keepdims=True)

    expected = np.mean([softmax(m.predict([stories, queries], verbose=0)) for m in models], 0)
    got = softmax(combined.predict([stories, queries], verbose=0))
    np.testing.assert_allclose(got, expected, atol=1e-5)
    assert not np.allclose(expected, softmax(models[0].predict([stories, queries], verbose=0)))


def test_babi_code_options_reach_the_layer_and_the_ensemble():
    import keras

    config = dict(recipe.CONFIG, data_dir=None, smoke=True, embed_dim=8)
    config.update(position_form="code", mask_empty_slots=False)
    keras.utils.set_random_seed(0)
    models = [recipe.build_model(config) for _ in range(2)]
    for model in (*models, recipe.combine(models, config)):
        for layer in model.layers:
            if layer.name.startswith("memn2n"):
                assert layer.position_form == "code" and not layer.mask_empty_slots
    with pytest.raises(ValueError, match="clip"):
        recipe.compile_options(dict(config, clip="layer"))


@pytest.mark.parametrize("spectral", [False, True])
def test_babi_matrix_clipping_scales_each_tied_matrix_on_its_own(spectral):
    # The authors' Weight.m: each tied matrix E_k (its temporal rows
    # included) has its gradient clipped to the norm on its own; Frobenius
    # norm, or MATLAB's norm of a matrix (the largest singular value).
    import keras
    from keras import ops

    from keras_seqmodels.memory import MemoryNetwork

    stories = keras.Input((2, 3), dtype="int32")
    queries = keras.Input((3,), dtype="int32")
    layer = MemoryNetwork(4, 2, 2, hops=1, name="memn2n")
    model = keras.Model([stories, queries], layer([stories, queries]))
    optimizer = recipe.matrix_clipped_sgd()(1.0, clipnorm_per_matrix=1.0, spectral=spectral)
    variables = model.trainable_variables
    assert [v.path for v in variables] == ["memn2n/embeddings", "memn2n/temporal_embeddings"]
    before = [ops.convert_to_numpy(v) for v in variables]
    g_emb = np.zeros((2, 4, 2), "float32")
    g_time = np.zeros((2, 2, 2), "float32")
    g_emb[0, 1] = [3.0, 0.0]  # E_0: rows (3, 0) and (4, 0): Frobenius 5, spectral 5
    g_time[0, 0] = [4.0, 0.0]
    g_emb[1, 2] = [0.3, 0.0]  # E_1: rows (0.3, 0) and (0, 0.4): Frobenius 0.5, spectral 0.4
    g_time[1, 1] = [0.0, 0.4]
    optimizer.apply([g_emb, g_time], variables)
    steps = [b - ops.convert_to_numpy(v) for b, v in zip(before, variables)]
    np.testing.assert_allclose(steps[0][0], g_emb[0] / 5.0, atol=1e-6)  # clipped to 1
    np.testing.assert_allclose(steps[1][0], g_time[0] / 5.0, atol=1e-6)
    np.testing.assert_allclose(steps[0][1], g_emb[1], atol=1e-6)  # under 1: unchanged
    np.testing.assert_allclose(steps[1][1], g_time[1], atol=1e-6)
    # A rank-2 gradient whose Frobenius norm (sqrt 2) clips and spectral norm (1) does not.
    g_emb[:] = 0.0
    g_time[:] = 0.0
    g_emb[0, 0] = [1.0, 0.0]
    g_emb[0, 3] = [0.0, 1.0]
    before = [ops.convert_to_numpy(v) for v in variables]
    optimizer.apply([g_emb, g_time], variables)
    step = before[0] - ops.convert_to_numpy(variables[0])
    np.testing.assert_allclose(step[0], g_emb[0] / (1.0 if spectral else np.sqrt(2.0)), atol=1e-6)
    config = optimizer.get_config()
    assert config["spectral"] is spectral and config["clipnorm_per_matrix"] == 1.0


def test_babi_greedy_selection_adds_the_member_that_fixes_the_errors(capsys):
    import types

    from keras_seqmodels.zoo.framework import ensemble

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

    class Mean:  # a "model" whose predictions are the members' mean probabilities
        def __init__(self, probs):
            self.probs = probs

        def predict(self, inputs, **kwargs):
            return np.log(self.probs)

    # The recipe's own evaluate, on averaged probabilities instead of networks.
    babi = types.SimpleNamespace(
        name="babi-memn2n",
        monitor=recipe.MONITOR,
        combine=lambda models, config: Mean(np.mean([m.probs for m in models], 0)),
        evaluate=recipe.evaluate,
    )
    data = (None, None, answers, tasks)
    members = [Mean(c) for c in candidates]
    chosen, metrics = ensemble.select(babi, members, data, {}, size=4)
    steps = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert [s["ensemble"] for s in steps[:4]] == [[0], [1], [2], [3]]
    assert [s["mean_error_percent"] for s in steps[:4]] == [100.0, 25.0, 37.5, 25.0]
    # Four steps are taken; the prefix of lowest error is kept.
    assert len(steps) == 4 + 3 + 2 + 1
    assert chosen == [1, 2] and metrics["mean_error_percent"] == 0.0


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


def test_babi_evaluate_reports_the_answer_nll_that_breaks_ensemble_ties(capsys):
    import types

    from keras_seqmodels.zoo.framework import ensemble

    answers = np.array([0, 1, 2, 0])
    tasks = np.array([1, 1, 2, 2])

    class Fixed:
        def __init__(self, right):  # probability of the answer; the rest split evenly
            self.probs = np.full((4, 3), (1 - right) / 2)
            self.probs[np.arange(4), answers] = right

        def predict(self, inputs, **kwargs):
            return np.log(self.probs)

    unsure, sure = Fixed(0.5), Fixed(0.9)  # both always right: equal error
    metrics = recipe.evaluate(unsure, (None, None, answers, tasks), {})
    assert metrics["mean_error_percent"] == 0.0
    assert metrics["nll"] == pytest.approx(-np.log(0.5), abs=1e-5)
    babi = types.SimpleNamespace(
        name="babi-memn2n",
        monitor=recipe.MONITOR,
        tie_break=recipe.TIE_BREAK,
        combine=lambda models, config: models[-1] if len(models) == 1 else models[0],
        evaluate=recipe.evaluate,
    )
    chosen, _ = ensemble.select(babi, [unsure, sure], (None, None, answers, tasks), {}, size=1)
    assert chosen == [1]  # the first in order would be [0]
    del babi.tie_break
    chosen, _ = ensemble.select(babi, [unsure, sure], (None, None, answers, tasks), {}, size=1)
    assert chosen == [0]
