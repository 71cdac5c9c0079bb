"""The package's one training loop (``keras_seqmodels.training.loop.fit``):
the run's files in a work folder, resume after a kill, the task callbacks
before the checkpoint; and a task training function through it."""

import csv
import json

import keras
import numpy as np
import pytest

from keras_seqmodels.training import loop


def _model():
    keras.utils.set_random_seed(0)
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])
    model.compile(optimizer=keras.optimizers.SGD(0.05), loss="mse")
    return model


def _data():
    x = np.random.default_rng(0).normal(size=(32, 3)).astype("float32")
    return x, x @ np.array([[1.0], [-2.0], [0.5]], "float32")


class Killed(Exception):
    pass


class KillAt(keras.callbacks.Callback):
    """Raises at the start of epoch ``epoch`` (0-based), as a kill would stop the run."""

    def __init__(self, epoch):
        super().__init__()
        self.epoch, self.seen = epoch, []

    def on_epoch_begin(self, epoch, logs=None):
        self.seen.append(epoch)
        if epoch == self.epoch:
            raise Killed()


def test_a_work_folder_keeps_the_best_checkpoint_and_a_rerun_resumes(tmp_path):
    x, y = _data()
    work = tmp_path / "run"
    with pytest.raises(Killed):
        loop.fit(_model(), x, y=y, batch_size=8, epochs=3, verbose=0, work_dir=str(work),
                 monitor=("loss", "min"), callbacks=[KillAt(2)])  # fmt: skip
    with open(work / "history.csv") as f:
        assert [r["epoch"] for r in csv.DictReader(f)] == ["0", "1"]
    record = json.loads((work / "best.json").read_text())
    assert record["monitor"] == "loss" and record["epoch"] in (1, 2)
    # The same call again starts at the interrupted epoch, from the saved state.
    again = KillAt(-1)
    model = _model()
    loop.fit(model, x, y=y, batch_size=8, epochs=3, verbose=0, work_dir=str(work),
             monitor=("loss", "min"), callbacks=[again])  # fmt: skip
    assert again.seen == [2]
    with open(work / "history.csv") as f:
        rows = list(csv.DictReader(f))
    assert [r["epoch"] for r in rows] == ["0", "1", "2"]
    assert all(float(r["seconds"]) >= 0 for r in rows)  # the run's clock in the logs
    best = keras.saving.load_model(work / "best.keras")
    losses = [float(r["loss"]) for r in rows]
    assert json.loads((work / "best.json").read_text())["value"] == pytest.approx(min(losses))
    assert best.count_params() == model.count_params()


def test_without_a_work_folder_it_writes_nothing_and_is_model_fit(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    x, y = _data()
    history = loop.fit(_model(), x, y=y, batch_size=8, epochs=2, verbose=0, shuffle=False)
    reference = _model().fit(x, y, batch_size=8, epochs=2, verbose=0, shuffle=False)
    assert history.history["loss"] == reference.history["loss"]
    assert list(tmp_path.iterdir()) == []


def test_the_task_callbacks_run_before_the_checkpoint_reads_the_logs(tmp_path):
    class Score(keras.callbacks.Callback):
        def on_epoch_end(self, epoch, logs=None):
            logs["val_score"] = float(10 - epoch)  # best at the last epoch

    x, y = _data()
    loop.fit(_model(), x, y=y, batch_size=8, epochs=3, verbose=0, work_dir=str(tmp_path),
             monitor=("val_score", "min"), callbacks=[Score()])  # fmt: skip
    record = json.loads((tmp_path / "best.json").read_text())
    assert (record["monitor"], record["value"], record["epoch"]) == ("val_score", 8.0, 3)


def test_train_language_model_keeps_its_run_in_a_work_folder(tmp_path):
    from keras_seqmodels.language_model import WordLanguageModel, train_language_model

    text = tmp_path / "train.txt"
    text.write_text("the cat sat on the mat\na dog sat on a log\n" * 15, encoding="utf-8")
    work = tmp_path / "run"
    lm = train_language_model(str(text), str(text), epochs=2, units=8, layers=1,
                              sequence_length=6, verbose=0, work_dir=str(work))  # fmt: skip
    record = json.loads((work / "best.json").read_text())
    assert record["monitor"] == "val_loss"
    history = lm.history.history
    assert record["value"] == pytest.approx(min(history["val_loss"]))
    best = keras.saving.load_model(work / "best.keras")
    assert isinstance(best, WordLanguageModel) and best.vocabulary == lm.vocabulary
    with open(work / "history.csv") as f:
        assert len(list(csv.DictReader(f))) == 2
