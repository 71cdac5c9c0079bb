"""The zoo recipe framework: smoke training of every ported model through
``seqmodels train NAME --epochs 1 --smoke`` (TensorFlow), the JAX
``keras.distribution`` data-parallel path on 2 CPU devices, and resuming a
run that was killed."""

import csv
import json
import os
import subprocess
import sys
import textwrap
import zipfile

import keras
import numpy as np
import pytest

from keras_seqmodels.cli.main import main
from keras_seqmodels.zoo import framework
from keras_seqmodels.zoo.framework import smoke
from keras_seqmodels.zoo.models import specs

PORTED = sorted(specs())  # every zoo model
# A tiny model, the same for the in-process and the subprocess tests.
TINY = textwrap.dedent(
    """
    import numpy as np
    from keras_seqmodels.zoo.framework import Recipe

    def load_data(data_dir, split, smoke, config):
        rng = np.random.default_rng(["train", "validation", "test"].index(split))
        x = rng.normal(size=(32, 3)).astype("float32")
        return x, (x.sum(-1, keepdims=True) > 0).astype("float32")

    def build_model(config):
        import keras
        return keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])

    def compile_args(config):
        import keras
        return dict(optimizer=keras.optimizers.SGD(config["learning_rate"]),
                    loss=keras.losses.BinaryCrossentropy(from_logits=True))

    def evaluate(model, data, config):
        return {"loss": float(np.mean((model.predict(data[0], verbose=0) > 0) != data[1]))}

    TINY = Recipe(name="tiny", config={"epochs": 4, "batch_size": 8, "learning_rate": 0.1},
                  build_model=build_model, load_data=load_data, compile_options=compile_args,
                  evaluate=evaluate)
    """
)
namespace = {}
exec(TINY, namespace)  # noqa: S102 (the test's own source, shared with the subprocess)
TINY_RECIPE = namespace["TINY"]


def test_every_zoo_model_has_a_folder_and_ported_ones_a_recipe():
    from keras_seqmodels.cli.recipe_commands import load_recipe

    for name in PORTED:
        recipe = load_recipe(name)
        assert isinstance(recipe, framework.Recipe) and recipe.name == name


def _optimizer_variables(path):
    """Names of the optimizer's variables stored in a ``.keras`` file."""
    import io

    import h5py

    with zipfile.ZipFile(path) as f:
        weights = io.BytesIO(f.read("model.weights.h5"))
    names = []
    with h5py.File(weights, "r") as h5:
        if "optimizer" in h5:
            h5["optimizer"].visit(names.append)
    return [n for n in names if n.endswith(tuple("0123456789"))]


@pytest.mark.parametrize("name", PORTED)
def test_smoke_training_selects_a_checkpoint_and_evaluates_it(name, tmp_path, capsys):
    # `--smoke` alone, at the model's own sizes: what a user runs to test the path.
    work = tmp_path / "run"
    argv = ["--smoke", "--work-dir", str(work), "--verbose", "0"]
    assert main(["train", name, *argv]) == 0
    record = json.loads((work / "best.json").read_text())
    assert record["epoch"] in range(1, smoke.EPOCHS + 1) and np.isfinite(record["value"])
    with open(work / "history.csv", encoding="utf-8") as f:
        assert len(list(csv.DictReader(f))) == smoke.EPOCHS
    model = work / f"{name}.keras"  # what ships: packaged, without optimizer state
    assert not _optimizer_variables(model)
    assert _optimizer_variables(work / "best.keras")  # the checkpoint keeps them
    capsys.readouterr()
    argv = ["--smoke", "--split", "validation", "--model", str(model)]
    assert main(["evaluate", name, *argv]) == 0
    result = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert result["model"] == name and result["split"] == "validation" and len(result) > 2


class _Buckets(keras.utils.PyDataset):
    """Batches of two widths, alternating, counting the batches read."""

    def __init__(self, count):
        super().__init__()
        self.count, self.reads, self.ends = count, [], 0

    def __len__(self):
        return self.count

    def __getitem__(self, i):
        self.reads.append(i)
        width = 4 if i % 2 == 0 else 6
        return np.full((2, width), i, "float32"), np.zeros((2, 1), "float32")

    def on_epoch_end(self):
        self.ends += 1


def test_smoke_cuts_every_kind_of_data_to_its_first_batches():
    x, y = np.arange(100.0).reshape(50, 2), np.arange(50.0)
    cut_x, cut_y = smoke.cut("m", "train", (x, y), batch_size=4)
    assert len(cut_x) == len(cut_y) == smoke.BATCHES * 4
    np.testing.assert_array_equal(cut_x, x[: smoke.BATCHES * 4])
    source = _Buckets(10)
    cut = smoke.cut("m", "train", source, batch_size=2)
    assert len(cut) == smoke.BATCHES
    batches = [cut[i][0] for i in range(len(cut))]
    assert [int(b[0, 0]) for b in batches] == list(range(smoke.BATCHES))  # the recipe's order
    cut.on_epoch_end()
    assert source.ends == 1  # the recipe's epoch hook still runs
    assert smoke.cut("m", "validation", None, 2) is None


def test_smoke_refuses_data_without_a_batch_naming_the_model():
    with pytest.raises(
        ValueError, match=r"ptb-x: the --smoke train data is a PyDataset of length 0"
    ):
        smoke.cut("ptb-x", "train", _Buckets(0), 2)
    with pytest.raises(ValueError, match="validation data is 0 rows"):
        smoke.cut("m", "validation", (np.zeros((0, 3)), np.zeros(0)), 2)


def test_smoke_runs_its_own_epochs_unless_epochs_is_given():
    from keras_seqmodels.zoo.framework import arguments

    assert arguments.parse(TINY_RECIPE, "train", ["--smoke"]).epochs == smoke.EPOCHS
    assert arguments.parse(TINY_RECIPE, "train", ["--smoke", "--epochs", "3"]).epochs == 3
    assert arguments.parse(TINY_RECIPE, "train", []).epochs == TINY_RECIPE.config["epochs"]
    assert arguments.parse(TINY_RECIPE, "evaluate", ["--smoke"]).epochs == smoke.EPOCHS


def test_help_lists_the_common_options(capsys):
    with pytest.raises(SystemExit) as info:
        main(["train", "mnist-renet", "--help"])
    assert info.value.code == 0
    text = capsys.readouterr().out
    for option in (
        "--data-dir",
        "--work-dir",
        "--seeds",
        "--sweep",
        "--time-budget",
        "--strategy",
        "--precision",
        "--smoke",
        "--units",
        "--learning-rate",
    ):
        assert option in text, option
    for choice in ("mirrored", "multi-worker", "tpu", "mixed_bfloat16"):
        assert choice in text, choice


def test_missing_data_folder_names_the_option(tmp_path):
    from keras_seqmodels.cli.recipe_commands import load_recipe

    with pytest.raises(FileNotFoundError, match="--data-dir"):
        framework.main(load_recipe("mnist-renet"), "evaluate", ["--data-dir", str(tmp_path)])


def _epochs(work):
    with open(work / "history.csv", encoding="utf-8") as f:
        return [int(row["epoch"]) for row in csv.DictReader(f)]


def test_a_killed_run_resumes_where_it_stopped(tmp_path, monkeypatch):
    import keras

    class Killed(Exception):
        pass

    class KillInEpochThree(keras.callbacks.Callback):
        def on_train_batch_end(self, batch, logs=None):
            if self.model.optimizer.iterations.numpy() >= 2 * 4 + 2:
                raise Killed()

    killing = framework.Recipe(
        **{**TINY_RECIPE.__dict__, "callbacks": lambda *a: [KillInEpochThree()]}
    )
    work = tmp_path / "run"
    argv = ["--work-dir", str(work), "--verbose", "0"]
    with pytest.raises(Killed):
        framework.main(killing, "train", argv)
    assert _epochs(work) == [0, 1]
    best = json.loads((work / "best.json").read_text())
    framework.main(TINY_RECIPE, "train", argv)
    # Epochs 0 and 1 are not trained again; the run continues at epoch 2.
    assert _epochs(work) == [0, 1, 2, 3]
    after = json.loads((work / "best.json").read_text())
    assert after["value"] <= best["value"]


def test_a_diverged_run_stops_and_keeps_its_best_checkpoint(tmp_path):
    import keras

    class DivergeInEpochThree(keras.callbacks.Callback):
        def on_epoch_begin(self, epoch, logs=None):
            if epoch == 2:
                for var in self.model.trainable_variables:
                    var.assign(np.full(var.shape, np.nan, var.dtype))

    diverging = framework.Recipe(
        **{**TINY_RECIPE.__dict__, "callbacks": lambda *a: [DivergeInEpochThree()]}
    )
    work = tmp_path / "run"
    framework.main(diverging, "train", ["--work-dir", str(work), "--verbose", "0", "--epochs", "9"])
    assert _epochs(work) == [0, 1, 2]  # not 9 epochs of NaN
    best = json.loads((work / "best.json").read_text())
    assert best["epoch"] in (1, 2) and np.isfinite(best["value"])
    model = keras.saving.load_model(work / "best.keras", compile=False)
    assert all(np.isfinite(w).all() for w in model.get_weights())


def test_seeds_and_sweep_select_the_best_run(tmp_path):
    work = tmp_path / "runs"
    framework.main(
        TINY_RECIPE,
        "train",
        [
            "--work-dir",
            str(work),
            "--verbose",
            "0",
            "--epochs",
            "2",
            "--seeds",
            "1,2",
            "--sweep",
            "learning_rate=0.1,0.01",
        ],
    )
    runs = sorted(p.name for p in work.iterdir() if p.is_dir())
    assert runs == [
        "learning_rate=0.01-seed=1",
        "learning_rate=0.01-seed=2",
        "learning_rate=0.1-seed=1",
        "learning_rate=0.1-seed=2",
    ]
    values = {r: json.loads((work / r / "best.json").read_text())["value"] for r in runs}
    chosen = json.loads((work / "best.json").read_text())
    assert chosen["value"] == min(values.values())
    assert os.path.basename(chosen["run"]) == min(values, key=values.get)
    assert (work / "best.keras").is_file()


def _average(models, config):
    import keras

    if len(models) == 1:
        return models[0]
    inputs = keras.Input((3,))
    return keras.Model(inputs, keras.layers.Average()([m(inputs) for m in models]))


def test_ensemble_selects_runs_greedily_on_validation(tmp_path, capsys):
    from keras_seqmodels.zoo.framework import ensemble

    recipe = framework.Recipe(**{**TINY_RECIPE.__dict__, "combine": _average})
    with pytest.raises(ValueError, match="--seeds"):
        framework.main(recipe, "train", ["--work-dir", str(tmp_path / "x"), "--ensemble", "2"])
    work = tmp_path / "runs"
    argv = ["--work-dir", str(work), "--verbose", "0", "--epochs", "1", "--seeds", "1,2,3",
            "--learning-rate", "0.5", "--ensemble", "2"]  # fmt: skip
    capsys.readouterr()
    framework.main(recipe, "train", argv)
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines() if x.startswith("{")]
    trials = [x for x in lines if "ensemble" in x and "loss" in x]
    # Round one tries each run alone; the best alone is kept, then each other run beside it.
    alone = {x["ensemble"][0]: x["loss"] for x in trials[:3]}
    first = min(alone, key=alone.get)
    assert [x["ensemble"][0] for x in trials[3:]] == [first, first]
    record = json.loads((work / "best.json").read_text())
    assert record["value"] <= alone[first]
    assert record["value"] == record["validation"]["loss"]
    assert 1 <= len(record["ensemble"]) <= 2 and (work / "tiny.keras").is_file()
    assert ensemble.metric_key(recipe) == "loss"
    # The saved ensemble gives the recorded validation figure.
    import keras

    model = keras.saving.load_model(work / "tiny.keras")
    data = TINY_RECIPE.load_data(None, "validation", False, {})
    assert TINY_RECIPE.evaluate(model, data, {})["loss"] == record["value"]


def test_ensemble_with_adds_packaged_models_to_the_candidates(tmp_path, capsys):
    recipe = framework.Recipe(**{**TINY_RECIPE.__dict__, "combine": _average})
    common = ["--verbose", "0", "--learning-rate", "0.5"]
    files = []
    for seed in ("1", "2"):
        framework.main(recipe, "train", ["--work-dir", str(tmp_path / seed), "--epochs", "1",
                                         "--seed", seed, *common])  # fmt: skip
        files.append(str(tmp_path / seed / "tiny.keras"))
    other = ["--work-dir", str(tmp_path / "x")]
    with pytest.raises(ValueError, match="needs --ensemble K"):
        framework.main(recipe, "train", [*other, "--ensemble-with", files[0]])
    missing = str(tmp_path / "none.keras")
    with pytest.raises(FileNotFoundError, match="--ensemble-with"):
        framework.main(recipe, "train", [*other, "--ensemble", "2", "--ensemble-with", missing])
    # One run and one file: both are candidates.
    capsys.readouterr()
    framework.main(recipe, "train", ["--work-dir", str(tmp_path / "one"), "--epochs", "1",
                                     "--seed", "3", "--ensemble", "2", "--ensemble-with", files[0],
                                     *common])  # fmt: skip
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines() if x.startswith("{")]
    trials = [x["ensemble"] for x in lines if "ensemble" in x and "loss" in x]
    assert sorted(t[0] for t in trials[:2]) == [0, 1] and sorted(trials[2]) == [0, 1]
    # --epochs 0: nothing trained, the selection among the files alone.
    work = tmp_path / "files"
    framework.main(recipe, "train", ["--work-dir", str(work), "--epochs", "0", "--ensemble", "2",
                                     "--ensemble-with", files[0], "--ensemble-with", files[1],
                                     *common])  # fmt: skip
    record = json.loads((work / "best.json").read_text())
    assert set(record["ensemble"]) <= set(files) and not (work / "history.csv").exists()
    model = keras.saving.load_model(work / "tiny.keras")
    data = TINY_RECIPE.load_data(None, "validation", False, {})
    assert TINY_RECIPE.evaluate(model, data, {})["loss"] == record["value"]


def test_ensemble_ties_are_broken_by_the_recipes_tie_break():
    from keras_seqmodels.zoo.framework import ensemble

    # Candidates are numbers; a "combined model" is the tuple of the chosen ones.
    # Error: 0.2 for any single candidate, 0.1 for any pair; nll: the sum.
    def evaluate(model, data, config):
        return {"error": 0.2 if len(model) == 1 else 0.1, "nll": float(sum(model))}

    base = {**TINY_RECIPE.__dict__, "evaluate": evaluate, "monitor": ("val_error", "min"),
            "combine": lambda models, config: tuple(models)}  # fmt: skip
    candidates = [3.0, 1.0, 2.0]
    plain = framework.Recipe(**base)
    chosen, metrics = ensemble.select(plain, candidates, None, {}, 2)
    assert chosen == [0, 1] and metrics["error"] == 0.1  # first among equals
    tied = framework.Recipe(**{**base, "tie_break": ("nll", "min")})
    chosen, metrics = ensemble.select(tied, candidates, None, {}, 2)
    assert chosen == [1, 2] and metrics == {"error": 0.1, "nll": 3.0}
    missing = framework.Recipe(**{**base, "tie_break": ("log_loss", "min")})
    with pytest.raises(ValueError, match="tie_break"):
        ensemble.select(missing, candidates, None, {}, 1)


def test_time_budget_stops_training(tmp_path):
    work = tmp_path / "run"
    framework.main(
        TINY_RECIPE,
        "train",
        ["--work-dir", str(work), "--verbose", "0", "--epochs", "50", "--time-budget", "1e-9"],
    )
    assert _epochs(work) == [0]


@pytest.mark.parametrize("kind", ["arrays", "pydataset"])
def test_fit_is_asked_to_shuffle_only_arrays_it_batches(kind, tmp_path, monkeypatch):
    """``fit`` shuffles in-memory arrays itself; a dataset (the tf.data
    pipeline the arrays become on TensorFlow, or a ``PyDataset`` that orders
    its own batches) gets ``shuffle=False``: Keras neither warns nor reorders."""
    import warnings

    import keras

    seen = []
    fit = keras.Model.fit

    def recording_fit(self, *args, **kwargs):
        seen.append(kwargs.get("shuffle"))
        return fit(self, *args, **kwargs)

    monkeypatch.setattr(keras.Model, "fit", recording_fit)
    load = TINY_RECIPE.load_data
    if kind == "pydataset":

        def load(data_dir, split, smoke, config):
            x, y = TINY_RECIPE.load_data(data_dir, split, smoke, config)

            class Batches(keras.utils.PyDataset):
                def __len__(self):
                    return 4

                def __getitem__(self, i):
                    return x[8 * i : 8 * i + 8], y[8 * i : 8 * i + 8]

            return Batches() if split == "train" else (x, y)

    recipe = framework.Recipe(**{**TINY_RECIPE.__dict__, "load_data": load})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        framework.main(recipe, "train", ["--work-dir", str(tmp_path), "--verbose", "0",
                                         "--epochs", "1"])  # fmt: skip
    assert not [w for w in caught if "shuffle" in str(w.message)]
    arrays = kind == "arrays" and keras.backend.backend() != "tensorflow"
    assert seen == [arrays]


JAX_SCRIPT = TINY + textwrap.dedent(
    """
    import json, sys
    import keras
    from keras_seqmodels.zoo import framework

    seen = {}
    def build_and_record(config):
        model = build_model(config)
        seen["distribution"] = type(keras.distribution.distribution()).__name__
        seen["devices"] = len(model.weights[0].value.sharding.device_set)
        return model

    recipe = framework.Recipe(**{**TINY.__dict__, "build_model": build_and_record})
    framework.main(recipe, "train", ["--work-dir", sys.argv[1], "--verbose", "0",
                                     "--strategy", "mirrored", "--epochs", "2"])
    print("RESULT", json.dumps(seen))
    """
)


def test_jax_data_parallel_on_two_cpu_devices(tmp_path):
    env = dict(
        os.environ,
        KERAS_BACKEND="jax",
        JAX_PLATFORMS="cpu",
        XLA_FLAGS="--xla_force_host_platform_device_count=2",
    )
    done = subprocess.run(
        [sys.executable, "-c", JAX_SCRIPT, str(tmp_path / "run")],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    line = [x for x in done.stdout.splitlines() if x.startswith("RESULT")][-1]
    assert json.loads(line[len("RESULT") :]) == {"distribution": "DataParallel", "devices": 2}
    assert (tmp_path / "run" / "best.keras").is_file()


def test_register_records_test_metrics_and_training_time(tmp_path, monkeypatch):
    from keras_seqmodels.zoo import registry

    work = tmp_path / "run"
    framework.main(TINY_RECIPE, "train", ["--work-dir", str(work), "--verbose", "0",
                                          "--epochs", "2"])  # fmt: skip
    calls = []
    monkeypatch.setattr(registry, "register_model", lambda *a, **k: calls.append((a, k)))
    with pytest.raises(ValueError, match="--model"):
        framework.register(TINY_RECIPE, None, "test", {"loss": 0.5})
    framework.register(TINY_RECIPE, str(work / "best.keras"), "test", {"loss": 0.5})
    (name, artifact), fields = calls[0]
    assert name == "tiny" and artifact == str(work / "best.keras")
    assert fields["metrics"] == {"test_loss": 0.5}
    assert fields["command"] == "seqmodels evaluate tiny --split test"
    assert fields["extra"]["selection"]["monitor"] == "val_loss"
    assert fields["extra"]["training_time_s"] >= 0
    assert "parameters" not in fields["extra"]  # no model given: nothing to count
    model = keras.saving.load_model(work / "best.keras", compile=False)
    framework.register(TINY_RECIPE, str(work / "best.keras"), "test", {"loss": 0.5}, model)
    trained = sum(int(np.prod(w.shape)) for w in model.trainable_weights)
    assert trained > 0 and calls[-1][1]["extra"]["parameters"] == trained


def test_register_ships_the_recorded_assets_from_beside_the_model(tmp_path, monkeypatch):
    from keras_seqmodels.zoo import registry

    work = tmp_path / "run"
    framework.main(TINY_RECIPE, "train", ["--work-dir", str(work), "--verbose", "0",
                                          "--epochs", "1"])  # fmt: skip
    index = tmp_path / "index.json"
    index.write_text(json.dumps({"tiny": {"assets": {"vocab": {"file": "vocab.txt"}}}}))
    monkeypatch.setattr(registry, "INDEX_PATH", str(index))
    calls = []
    monkeypatch.setattr(registry, "register_model", lambda *a, **k: calls.append(k))
    with pytest.raises(FileNotFoundError, match="asset 'vocab'"):
        framework.register(TINY_RECIPE, str(work / "best.keras"), "test", {"loss": 0.5})
    assert not calls
    (work / "vocab.txt").write_text("a\nb\n")
    framework.register(TINY_RECIPE, str(work / "best.keras"), "test", {"loss": 0.5})
    assert calls[0]["assets"] == {"vocab": str(work / "vocab.txt")}


@pytest.mark.tf_only
def test_train_exports_the_selected_model(tmp_path):
    import keras

    if keras.backend.backend() != "tensorflow":
        pytest.skip("SavedModel export needs TensorFlow")
    out = tmp_path / "exported"
    framework.main(TINY_RECIPE, "train", ["--work-dir", str(tmp_path / "run"), "--verbose", "0",
                                          "--epochs", "1", "--export", str(out)])  # fmt: skip
    assert (out / "saved_model.pb").is_file()


def test_epoch_batches_reshuffle_and_redraw_every_epoch():
    from keras_seqmodels.zoo.framework.batches import epoch_batches

    def make(seed):
        return epoch_batches(7, 3, seed, lambda rng: rng.integers(0, 1000, 7),
                             lambda rows, noise: (noise[rows], rows))  # fmt: skip

    data, again = make(5), make(5)
    epochs = []
    for _ in range(3):
        assert len(data) == 3  # 3 + 3 + 1 rows
        batches = [data[i] for i in range(len(data))]
        rows = np.concatenate([r for _, r in batches])
        assert sorted(rows.tolist()) == list(range(7))  # every example once
        for (noise, r), (noise2, r2) in zip(batches, [again[i] for i in range(3)]):
            np.testing.assert_array_equal(r, r2)  # the seed decides the order
            np.testing.assert_array_equal(noise, noise2)
        epochs.append((rows, np.concatenate([n for n, _ in batches])))
        data.on_epoch_end()
        again.on_epoch_end()
    assert any(not np.array_equal(epochs[0][0], e[0]) for e in epochs[1:])  # reshuffled
    assert not np.array_equal(np.sort(epochs[0][1]), np.sort(epochs[1][1]))  # redrawn


def test_epochs_may_be_zero_for_train_only():
    from keras_seqmodels.zoo.framework import arguments

    assert arguments.parser_for(TINY_RECIPE, "train").parse_args(["--epochs", "0"]).epochs == 0
    for action, bad in (("train", "-1"), ("train", "two"), ("evaluate", "0")):
        with pytest.raises(SystemExit):
            arguments.parser_for(TINY_RECIPE, action).parse_args(["--epochs", bad])


def test_piped_training_prints_progress_lines_and_writes_tensorboard_logs(
    tmp_path, capsys, monkeypatch
):
    # Not a terminal (pytest captures stdout): --verbose defaults to 2, and
    # ProgressLines prints within the epoch (interval 0: after every step).
    from keras_seqmodels.training import run_callbacks

    monkeypatch.setattr(run_callbacks.ProgressLines, "INTERVAL", 0.0)
    logs = tmp_path / "tb"
    framework.main(TINY_RECIPE, "train", ["--work-dir", str(tmp_path / "run"), "--epochs", "1",
                                          "--tensorboard", str(logs)])  # fmt: skip
    out = capsys.readouterr().out
    assert "epoch 1: step 1/4, loss " in out and "epoch 1: step 4/4, loss " in out
    events = [p for p in logs.rglob("events.out.tfevents.*")]
    assert events, list(logs.rglob("*"))


def test_verbosity_follows_the_terminal(monkeypatch):
    from keras_seqmodels.zoo.framework import run

    monkeypatch.setattr(run.sys.stdout, "isatty", lambda: True, raising=False)
    assert run._verbosity(None) == 1
    monkeypatch.setattr(run.sys.stdout, "isatty", lambda: False, raising=False)
    assert run._verbosity(None) == 2
    assert run._verbosity(0) == 0


def test_evaluate_says_what_it_is_doing_on_stderr(tmp_path, capsys):
    work = tmp_path / "run"
    framework.main(TINY_RECIPE, "train", ["--work-dir", str(work), "--verbose", "0",
                                          "--epochs", "1"])  # fmt: skip
    capsys.readouterr()
    framework.main(TINY_RECIPE, "evaluate", ["--model", str(work / "tiny.keras"),
                                             "--split", "validation"])  # fmt: skip
    captured = capsys.readouterr()
    assert json.loads(captured.out.strip().splitlines()[-1])["split"] == "validation"
    for stage in ("loading", "reading the validation split", "scoring", "done in"):
        assert stage in captured.err, captured.err


def test_init_from_a_file_that_is_not_a_keras_model_names_it(tmp_path):
    import zipfile

    garbage = tmp_path / "garbage.keras"
    garbage.write_text("not a model\n")
    argv = ["--work-dir", str(tmp_path / "run"), "--epochs", "1", "--init-from"]
    with pytest.raises(ValueError, match=r"--init-from .*garbage\.keras: not a Keras model file"):
        framework.main(TINY_RECIPE, "train", [*argv, str(garbage)])
    other_zip = tmp_path / "other.keras"
    with zipfile.ZipFile(other_zip, "w") as archive:
        archive.writestr("readme.txt", "hello")
    with pytest.raises(ValueError, match=r"without config\.json, model\.weights\.h5"):
        framework.main(TINY_RECIPE, "train", [*argv, str(other_zip)])
    with pytest.raises(FileNotFoundError, match="--init-from: no such file"):
        framework.main(TINY_RECIPE, "train", [*argv, str(tmp_path / "missing.keras")])
    assert not (tmp_path / "run").exists()  # refused before anything ran


def test_init_from_a_file_of_another_network_is_refused_naming_what_differs(tmp_path):
    other = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2)])
    other.save(tmp_path / "other.keras")
    argv = ["--work-dir", str(tmp_path / "run"), "--epochs", "1", "--verbose", "0",
            "--init-from", str(tmp_path / "other.keras")]  # fmt: skip
    with pytest.raises(ValueError, match=r"tiny: --init-from .*other\.keras: its weights do not "
                       r"fit the network this run builds \(.*weight shape \(3, 1\) is not "
                       r"compatible with provided weight shape \(3, 2\)"):  # fmt: skip
        framework.main(TINY_RECIPE, "train", argv)
    assert not (tmp_path / "run" / "best.keras").exists()
    # --epochs 0 scores the file as the network: one it cannot score is named.
    argv = ["--work-dir", str(tmp_path / "pkg"), "--epochs", "0", "--verbose", "0",
            "--init-from", str(tmp_path / "other.keras")]  # fmt: skip
    with pytest.raises(ValueError, match=r"tiny: --init-from .*other\.keras --epochs 0: the "
                       r"file could not be scored on validation"):  # fmt: skip
        framework.main(TINY_RECIPE, "train", argv)
    assert not (tmp_path / "pkg" / "tiny.keras").exists()


@pytest.mark.tf_only
def test_tensorflow_training_runs_inside_the_distribution_fixes_and_undoes_them(tmp_path):
    import keras

    from keras_seqmodels.training.distribute_fixes import fixes_active

    if keras.backend.backend() != "tensorflow":
        pytest.skip("tf.distribute")
    seen = []

    def build_and_record(config):
        seen.append(fixes_active())
        return TINY_RECIPE.build_model(config)

    recipe = framework.Recipe(**{**TINY_RECIPE.__dict__, "build_model": build_and_record})
    assert not fixes_active()
    framework.main(recipe, "train", ["--work-dir", str(tmp_path), "--verbose", "0",
                                     "--strategy", "mirrored", "--epochs", "1"])  # fmt: skip
    assert seen == [True]
    assert not fixes_active()  # Keras is as it was once the recipe is done
