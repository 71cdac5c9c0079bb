"""Your own text to a trained ``WordLanguageModel`` (words in, words out).

One or more plain-text files, one sentence (or line) per line, are enough:
``train_language_model`` reads the words (``<eos>`` after each line), builds
the vocabulary (the most frequent words; the rest are ``<unk>``), trains the
LSTM with ``model.fit`` on windows of the word stream (truncated
back-propagation through time: each window starts from zero LSTM states)
and returns the model with its vocabulary inside. Export it with
``keras_seqmodels.export.language_model.export_language_model(model,
directory)``. Training runs on any Keras backend; the export needs
TensorFlow.
"""

import math

import keras
import numpy as np

from keras_seqmodels.language_model import text as textlib
from keras_seqmodels.language_model.model import WordLanguageModel
from keras_seqmodels.utils import validation as checks


def train_language_model(
    train_path,
    validation_path=None,
    *,
    vocabulary_size=10_000,
    min_count=1,
    lowercase=True,
    units=256,
    layers=2,
    dropout=0.2,
    embedding_dim=None,
    sequence_length=35,
    batch_size=32,
    epochs=10,
    learning_rate=2e-3,
    clipnorm=1.0,
    callbacks=None,
    seed=0,
    verbose="auto",
):
    """Train a word-level LSTM language model on plain-text files.

    The text is read by ``read_words`` (whitespace words, lower-cased when
    ``lowercase``, ``<eos>`` after each non-blank line; several files are
    one text). The vocabulary (``build_vocabulary``) comes from the training
    text only; other words become ``<unk>``. Training is ``model.fit`` with
    Adam on the mean cross-entropy of the next word, over non-overlapping
    windows of ``sequence_length`` words; each epoch the windows start at a
    new random offset and come in a new random order, and every window
    starts from zero LSTM states (plain truncated back-propagation, not
    stateful: no context crosses a window boundary).

    With ``validation_path``, after each epoch the model's perplexity on that
    text (``WordLanguageModel.perplexity``: the same windows, every word
    scored) is added to the logs as ``val_perplexity`` (and ``val_loss``, its
    log), next to the training ``perplexity`` (``exp`` of the epoch's mean
    loss); the logs reach ``callbacks`` (e.g. ``EarlyStopping(monitor=
    "val_perplexity")``) and ``model.history``.

    Args:
        train_path: a path or a list of paths; UTF-8 plain text, one
            sentence (or line) per line, words separated by spaces.
        validation_path: optional held-out text in the same form.
        vocabulary_size: most words in the vocabulary, ``<eos>`` and
            ``<unk>`` included.
        min_count: a word needs this many occurrences in the training text
            to get its own id.
        lowercase: lower-case all text (training, prompts and the export).
        units, layers, dropout, embedding_dim: the network
            (``WordLanguageModel``).
        sequence_length: words per training window (the span of
            back-propagation and of the context seen in training).
        batch_size: windows per training step.
        epochs, learning_rate, clipnorm: training (Adam; each step's gradient
            norm clipped to ``clipnorm``).
        callbacks: Keras callbacks for ``fit``.
        seed: seed of the weights, the dropout and the window order.
        verbose: ``fit``'s verbosity.

    Returns:
        The trained ``WordLanguageModel``; ``model.history`` is the Keras
        ``History`` (``loss``, ``perplexity``, and ``val_perplexity`` with a
        validation text). Save it with ``model.save("mine.keras")``.

    Raises:
        FileNotFoundError, ValueError: a missing, empty or non-UTF-8 file
            (the message names the function, the file and the expected form);
            an argument out of range.

    Example:

    >>> import os, tempfile
    >>> d = tempfile.mkdtemp()
    >>> _ = open(os.path.join(d, "train.txt"), "w").write("the cat sat on the mat\\n" * 30)
    >>> lm = train_language_model(os.path.join(d, "train.txt"), epochs=2, units=16,
    ...                           layers=1, sequence_length=10, verbose=0)
    >>> lm.generate("the cat", 4, greedy=True).split()[0] in lm.vocabulary
    True
    """
    name = "train_language_model"
    for arg, value in (("sequence_length", sequence_length), ("batch_size", batch_size),
                       ("epochs", epochs)):  # fmt: skip
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise ValueError(f"{name}: `{arg}` must be a positive integer. Received: {value!r}")
    checks.check_positive_ints(
        name, units=units, layers=layers, vocabulary_size=vocabulary_size, min_count=min_count
    )
    checks.check_positive_float(name, "learning_rate", learning_rate)
    words = textlib.read_words(train_path, lowercase, name, "train_path")  # >= 1 word + <eos>
    vocabulary = textlib.build_vocabulary(words, vocabulary_size, min_count)
    train_ids = textlib.to_ids(words, vocabulary)
    val_ids = None
    if validation_path is not None:
        val_words = textlib.read_words(validation_path, lowercase, name, "validation_path")
        val_ids = textlib.to_ids(val_words, vocabulary)

    keras.utils.set_random_seed(seed)
    model = WordLanguageModel(vocabulary, units=units, layers=layers, dropout=dropout,
                              embedding_dim=embedding_dim, lowercase=lowercase)  # fmt: skip
    model.compile(
        optimizer=keras.optimizers.Adam(learning_rate, clipnorm=clipnorm),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
    )
    logs = _Perplexity(val_ids, sequence_length, batch_size)
    model.fit(
        _Windows(train_ids, sequence_length, batch_size, seed),
        epochs=epochs,
        callbacks=[logs, *(callbacks or [])],
        verbose=verbose,
    )
    return model


class _Windows(keras.utils.PyDataset):
    """Training windows, a new random offset and order each epoch."""

    def __init__(self, ids, length, batch_size, seed):
        super().__init__()
        self.ids, self.length, self.batch_size = ids, length, batch_size
        self.rng = np.random.default_rng(seed)
        # Whole windows that fit at any offset: the number of steps stays fixed.
        self.count = max((len(ids) - length) // length, 1)
        self.on_epoch_end()

    def __len__(self):
        return -(-self.count // self.batch_size)

    def __getitem__(self, i):
        rows = self.order[i * self.batch_size : (i + 1) * self.batch_size]
        return self.x[rows], self.y[rows]

    def on_epoch_end(self):
        spare = len(self.ids) - 1 - self.count * self.length
        offset = int(self.rng.integers(0, spare + 1)) if spare > 0 else 0
        span = self.ids[offset : offset + self.count * self.length + 1]
        self.x, self.y = textlib.windows(span, self.length)
        self.order = self.rng.permutation(self.count)


class _Perplexity(keras.callbacks.Callback):
    """``perplexity`` (exp of the epoch's loss) and the validation text's in the logs."""

    def __init__(self, val_ids, length, batch_size):
        super().__init__()
        self.val_ids, self.length, self.batch_size = val_ids, length, batch_size

    def on_epoch_end(self, epoch, logs=None):
        if logs is None:
            return
        if "loss" in logs:
            logs["perplexity"] = math.exp(min(float(logs["loss"]), 700.0))
        if self.val_ids is not None:
            ppl = self.model.stream_perplexity(self.val_ids, self.length, self.batch_size)
            logs["val_perplexity"] = ppl
            logs["val_loss"] = math.log(ppl)
