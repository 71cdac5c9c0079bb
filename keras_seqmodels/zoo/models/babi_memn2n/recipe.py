"""babi-memn2n: a 3-hop end-to-end memory network on bAbI (en, 1k), the 20
tasks trained jointly (Sukhbaatar et al. 2015, "PE LS RN joint").

d = 50, adjacent weight tying, position and temporal encoding, the last 50
statements in memory; random noise (10% empty memories, drawn again each
epoch: the data hook); linear start (hop softmax removed, a callback); SGD,
batch 32, summed loss, gradients clipped to norm 40 per 32 examples. The
validation split (10% of each task's training questions, NumPy seed 0)
selects the epoch by the mean error over the 20 tasks, once the softmax is
in. Many seeds and their ensemble (answer probabilities averaged,
``ProbabilityAverage``; members chosen greedily on validation):

    seqmodels train babi-memn2n --seeds 1,2,3,4,5,6,7,8 --ensemble 5
    seqmodels evaluate babi-memn2n --split test

``--tasks 16`` (or ``--tasks 1,16``) trains, selects and evaluates on those
tasks only, as the paper's independent training (the vocabulary stays that
of the 20 tasks, so files stay compatible).

The authors' joint-training code (facebook/MemNN, ``MemN2N-babi-matlab``:
``config_babi_joint.m``, ``train_linear_start.m``, ``train.m``) differs
where the paper's text leaves a choice open; its settings are options here
(``--ls-patience 0 --ls-max-epochs 30 --epochs 90 --noise-gaps true``,
and ``--learning-rate 0.005``, see below):

- linear start for a fixed 30 epochs (``ls_nepochs``); the default ends it
  once the validation loss has not improved for ``ls_patience`` = 3 epochs
  (the paper's wording, section 4.2), at most ``ls_max_epochs`` = 20;
- one rate during linear start and after it (the code sets both
  ``ls_init_lrate`` and ``init_lrate`` to 0.01/2), halved every 15 epochs
  once the softmax is in, first after 14 epochs (``train.m`` halves when
  ``mod(ep, 15) == 0``, epochs counted from 1; as here), 60 epochs;
- random noise moves the statements' temporal indices without adding
  memories (``train.m``, ``randomize_time``: gaps in the time index;
  ``noise_gaps`` true: masked padding slots, no statement leaves the
  memory); the default inserts attended ``<nil>`` slots that push the
  oldest statements out.

On the validation split the code's settings did worse than these defaults,
and the code's network (the three options below, with the rate 0.005 and
the defaults' schedule) better (model card, "Retraining with the package's
recipe framework").

Three more of the code's choices are options (``MemoryNetwork`` arguments
and the optimizer):

- ``--position-form code``: ``build_model.m``'s position weights l_kj = 1 +
  4 (k - (d+1)/2) (j - (J+1)/2) / (d J), J = 12 for every sentence (the
  longest sentence, 11 words, plus the time word that carries the temporal
  encoding, which is weighted as word J); about twice the paper's weights;
- ``--mask-empty-slots false``: an empty slot is a zero memory with score 0
  in each hop's softmax (the code fills unused slots with the nil word);
- ``--clip spectral``: each of the 4 tied embedding matrices (its temporal
  rows included: the code's time words are rows of the same lookup table)
  has its gradient clipped to norm 40 on its own, the norm being MATLAB's
  ``norm`` of a matrix (``Weight.m``), the largest singular value;
  ``--clip matrix`` uses the Frobenius norm (as the NumPy port
  vinhkhuc/MemN2N-babi-python); the default clips the norm over all weights.

Not options: batches are an epoch's permutation (the code draws them with
replacement); the epoch is chosen on validation (the paper keeps the best of
10 runs on training error).
"""

import functools
import json
import os

import numpy as np

from keras_seqmodels.zoo.models.babi_memn2n.config import CONFIG  # noqa: F401 (the recipe's)
from keras_seqmodels.zoo.models.babi_memn2n.optimizer import CLIP_FORMS, matrix_clipped_sgd

TASK = "bAbI QA (en, 1k), 20 tasks jointly trained: a story and a question in, a one-word answer"
DATA = "bAbI v1.2 en 1k; valid = 10% of each task's train (seed 0); test: the 20 test files"
MONITOR = ("val_mean_error_percent", "min")
TIE_BREAK = ("nll", "min")  # equal mean error: the lower validation NLL
DATA_SUBDIR = "babi"
MEMORY_SIZE, SENTENCE_LENGTH, QUERY_LENGTH = 50, 11, 11
NOT_SELECTABLE = 100.0  # the monitored error during linear start


def _smoke_tasks(split):
    """Two tiny generated tasks ("where is X?" after moves), 12 questions each."""
    rng = np.random.default_rng(("train", "validation", "test").index(split))
    people, places = ["mary", "john"], ["kitchen", "garden", "office"]
    tasks = []
    for _ in range(2):
        examples = []
        for _ in range(12):
            story = [[p, "went", "to", "the", rng.choice(places)] for p in rng.permutation(people)]
            who = story[int(rng.integers(0, 2))]
            examples.append((story, ["where", "is", who[0]], who[-1]))
        tasks.append(examples)
    return tasks


@functools.lru_cache(maxsize=4)
def split_tasks(data_dir, split):
    """Per-task example lists; ``validation`` is 10% of each task's train."""
    from keras_seqmodels.data import babi

    if data_dir is None:
        return _smoke_tasks(split)
    folder = os.path.join(data_dir, "en")
    folder = folder if os.path.isdir(folder) else data_dir  # the files themselves
    if split == "test":
        return [babi.read_babi(f) for f in babi.task_files(folder, "test")]
    rng = np.random.default_rng(0)
    out = []
    for examples in (babi.read_babi(f) for f in babi.task_files(folder, "train")):
        order = rng.permutation(len(examples))
        held = set(order[: int(round(0.1 * len(examples)))].tolist())
        out.append([e for i, e in enumerate(examples) if (i in held) == (split == "validation")])
    return out


def vocabulary(data_dir):
    """Words of the train and validation questions (the shipped ``vocab``)."""
    from keras_seqmodels.data import babi

    held = split_tasks(data_dir, "train") + split_tasks(data_dir, "validation")
    return babi.build_vocabulary([e for task in held for e in task])


def task_numbers(text, count):
    """The task numbers (1-based, sorted) that ``--tasks`` names: ``"all"``
    or comma-separated numbers in ``1..count``."""
    if str(text).strip().lower() == "all":
        return list(range(1, count + 1))
    try:
        numbers = sorted({int(v) for v in str(text).split(",") if v.strip()})
    except ValueError:
        numbers = []
    if not numbers or not all(1 <= n <= count for n in numbers):
        raise ValueError(
            f"babi-memn2n: tasks must be 'all' or comma-separated task numbers in "
            f"1..{count}, e.g. 16 or 1,16. Received: tasks={text!r}"
        )
    return numbers


def arrays(data_dir, split, words, tasks="all"):
    """``(stories, queries, answers, tasks)`` of the tasks that ``tasks``
    names (``task_numbers``), numbered as in the data (1..20)."""
    from keras_seqmodels.data import babi

    per_task = split_tasks(data_dir, split)
    chosen = task_numbers(tasks, len(per_task))
    flat = [e for t in chosen for e in per_task[t - 1]]
    tasks = np.concatenate([np.full(len(per_task[t - 1]), t) for t in chosen])
    stories, queries, answers = babi.vectorize(
        flat, words, MEMORY_SIZE, SENTENCE_LENGTH, QUERY_LENGTH
    )
    return stories, queries, answers, tasks


def load_data(data_dir, split, smoke, config):
    """Train: batches with new empty memories and order each epoch;
    validation: arrays (``fit`` gives ``val_loss``)."""
    from keras_seqmodels.data import babi
    from keras_seqmodels.zoo.framework.batches import epoch_batches

    words = vocabulary(data_dir)
    stories, queries, answers, _ = arrays(data_dir, split, words, config.get("tasks", "all"))
    if split != "train":
        return (stories, queries), answers

    gaps = config["noise_gaps"]

    def noisy(rng):
        return babi.insert_empty_memories(
            stories, config["noise"], rng, fill=babi.PAD if gaps else babi.NIL,
            keep_statements=gaps,
        )  # fmt: skip

    def batch(rows, memories):
        return (memories[rows], queries[rows]), answers[rows]

    return epoch_batches(len(answers), config["batch_size"], config["seed"], noisy, batch)


def build_model(config):
    """``[stories, queries]`` ids -> answer logits; linear start on."""
    import keras

    from keras_seqmodels.memory import MemoryNetwork

    stories = keras.Input((None, SENTENCE_LENGTH), dtype="int32", name="stories")
    queries = keras.Input((QUERY_LENGTH,), dtype="int32", name="queries")
    layer = MemoryNetwork(len(vocabulary(config["data_dir"])), config["embed_dim"], MEMORY_SIZE,
                          hops=config["hops"], linear_start=True, name="memn2n",
                          position_form=config.get("position_form", "paper"),
                          mask_empty_slots=config.get("mask_empty_slots", True))  # fmt: skip
    return keras.Model([stories, queries], layer([stories, queries]), name="babi-memn2n")


def compile_options(config):
    import keras

    clip = config.get("clip", "global")
    if clip not in CLIP_FORMS:
        raise ValueError(f"babi-memn2n: clip must be one of {CLIP_FORMS}. Received: {clip!r}")
    # The paper clips the summed gradient of 32 examples at norm 40.
    norm = 40.0 * config["batch_size"] / 32
    if clip == "global":
        optimizer = keras.optimizers.SGD(config["learning_rate"], global_clipnorm=norm)
    else:
        optimizer = matrix_clipped_sgd()(
            config["learning_rate"], clipnorm_per_matrix=norm, spectral=clip == "spectral"
        )
    return dict(
        optimizer=optimizer,
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True, reduction="sum"),
        metrics=["accuracy"],
    )


def callbacks(config, work_dir, train):
    """Linear start, then the rate halved every ``anneal_every`` epochs
    (first after ``anneal_every - 1``, as the authors' ``train.m``); the
    validation mean task error (``NOT_SELECTABLE`` before the softmax)."""
    import keras

    data_dir = config["data_dir"]
    valid = arrays(data_dir, "validation", vocabulary(data_dir), config.get("tasks", "all"))
    # The epoch the softmax came in, kept for a resumed run's schedule.
    record = os.path.join(work_dir, "softmax_epoch.json")
    start = None
    if os.path.isfile(record):
        with open(record, encoding="utf-8") as f:
            start = json.load(f)

    class Schedule(keras.callbacks.Callback):
        best, wait = np.inf, 0

        def __init__(self):
            super().__init__()
            self.start = start

        def on_epoch_begin(self, epoch, logs=None):
            after = 0 if self.start is None else epoch - self.start + 1
            rate = config["learning_rate"] * 0.5 ** (after // config["anneal_every"])
            self.model.optimizer.learning_rate.assign(rate)

        def on_epoch_end(self, epoch, logs=None):
            layer = self.model.get_layer("memn2n")
            if float(keras.ops.convert_to_numpy(layer.attention_softmax)) != 1.0:
                loss = logs["val_loss"]
                self.wait = 0 if loss < self.best else self.wait + 1
                self.best = min(self.best, loss)
                patience = config["ls_patience"]
                if (patience and self.wait >= patience) or epoch + 1 >= config["ls_max_epochs"]:
                    layer.enable_softmax()
            if float(keras.ops.convert_to_numpy(layer.attention_softmax)) != 1.0:
                logs["val_mean_error_percent"] = NOT_SELECTABLE
                return
            if self.start is None:
                self.start = epoch + 1
                with open(record, "w", encoding="utf-8") as f:
                    json.dump(self.start, f)
            logs["val_mean_error_percent"] = mean_error(self.model, valid)

    return [Schedule()]


def package(model, config):
    """The selected model, with ``vocab.json`` written beside the artifact."""
    path = os.path.join(config["work_dir"], "vocab.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump({"vocabulary": vocabulary(config["data_dir"])}, f)
    return model


def combine(models, config):
    """One model whose output is the logits of the members' mean answer
    probability (``ProbabilityAverage``); each member keeps its own
    ``MemoryNetwork`` (``memn2n_0``, ...)."""
    import keras

    from keras_seqmodels.layers import ProbabilityAverage
    from keras_seqmodels.memory import MemoryNetwork

    if len(models) == 1:
        return models[0]
    stories = keras.Input((None, SENTENCE_LENGTH), dtype="int32", name="stories")
    queries = keras.Input((QUERY_LENGTH,), dtype="int32", name="queries")
    logits = []
    for k, model in enumerate(models):
        source = model.get_layer("memn2n")
        layer = MemoryNetwork(source.vocab_size, source.embed_dim, MEMORY_SIZE,
                              hops=source.hops, name=f"memn2n_{k}",
                              position_form=source.position_form,
                              mask_empty_slots=source.mask_empty_slots)  # fmt: skip
        logits.append(layer([stories, queries]))
        layer.set_weights(source.get_weights())
    average = ProbabilityAverage(name="average")([*logits])
    return keras.Model([stories, queries], average, name="babi-memn2n")


def _scores(model, data):
    """``(error % per task, mean negative log-likelihood of the answers)``
    of ``(stories, queries, answers, tasks)``."""
    stories, queries, answers, tasks = data
    logits = np.asarray(model.predict([stories, queries], batch_size=500, verbose=0), "float64")
    wrong = np.argmax(logits, axis=-1) != answers
    errors = {int(t): 100.0 * float(wrong[tasks == t].mean()) for t in np.unique(tasks)}
    top = logits.max(axis=-1, keepdims=True)
    log_z = np.log(np.exp(logits - top).sum(axis=-1)) + top[:, 0]
    nll = float(np.mean(log_z - logits[np.arange(len(answers)), answers]))
    return errors, nll


def task_errors(model, data):
    """Error (%) per task of ``(stories, queries, answers, tasks)``."""
    return _scores(model, data)[0]


def mean_error(model, data):
    return float(np.mean(list(task_errors(model, data).values())))


def evaluation_data(data_dir, split, smoke, config):
    """Arrays of ``split`` with the vocabulary of the evaluated model (the
    zoo asset, ``vocab.json`` beside ``--model``, or the data's)."""
    tasks = config.get("tasks", "all")
    if smoke:
        return arrays(data_dir, split, vocabulary(data_dir), tasks)
    if config.get("model"):
        with open(os.path.join(os.path.dirname(config["model"]), "vocab.json"), "rb") as f:
            text = f.read()
    else:
        from keras_seqmodels.zoo import api

        text = api.read_asset("babi-memn2n", "vocab")
    return arrays(data_dir, split, json.loads(text)["vocabulary"], tasks)


def evaluate(model, data, config):
    """Mean error over the tasks (%), failed tasks (> 5%), error per task,
    and the answers' mean negative log-likelihood (``nll``: the ensemble
    selection's tie-break, as errors over 100 questions per task often tie)."""
    errors, nll = _scores(model, data)
    return {
        "mean_error_percent": round(float(np.mean(list(errors.values()))), 2),
        "nll": round(nll, 5),
        "failed_tasks_over_5_percent": int(sum(e > 5.0 for e in errors.values())),
        "error_percent_per_task": {str(k): round(v, 2) for k, v in errors.items()},
    }
