"""A word-level LSTM language model that keeps its vocabulary: text in, words out."""

import keras
import numpy as np

from keras_seqmodels.language_model import network as word_network
from keras_seqmodels.language_model import text as textlib
from keras_seqmodels.language_model import training
from keras_seqmodels.training import loop
from keras_seqmodels.utils import bounds
from keras_seqmodels.utils import validation as checks


@keras.saving.register_keras_serializable(package="keras_seqmodels")
class WordLanguageModel(keras.Model):
    """Word-level LSTM language model with its vocabulary inside.

    ``model(ids)`` maps int word ids ``(batch, time)`` to next-word logits
    ``(batch, time, vocabulary)``: Embedding -> (Dropout -> LSTM) x
    ``layers`` -> Dropout -> Dense, the LSTMs being the package's
    ``Recurrent(LSTMCell)`` (``model.network`` is that functional model).
    The vocabulary and the lower-casing are part of the config, so
    ``model.save("mine.keras")`` and ``keras.saving.load_model`` keep them
    with the weights.

    New relative to Keras: text-level methods on top of the id model, with
    the same tokenization as training (whitespace words, lower-cased when
    ``lowercase``, words outside the vocabulary read as ``<unk>``, an empty
    text read as a sentence start ``<eos>``): ``next_words`` (the next-word
    distribution), ``log_likelihood``, ``generate`` (greedy or sampled with a
    seed; the prompt is read once, then one word per step with the LSTM
    states carried), ``perplexity`` of a text file.
    ``keras_seqmodels.export.language_model.export_language_model(model,
    directory)`` writes a SavedModel that serves text. Train one from text
    files with ``train_language_model``.

    Args:
        vocabulary: the word list (index = id), with ``<eos>`` and
            ``<unk>`` (``build_vocabulary``).
        units: LSTM units per layer.
        layers: number of stacked LSTM layers.
        dropout: dropout rate between layers (not on the recurrent
            connections), while training.
        embedding_dim: width of the word vectors (default: ``units``).
        lowercase: lower-case text before looking words up.
        **kwargs: ``keras.Model`` arguments (``name``).

    Call arguments:
        ids: int tensor ``(batch, time)``.
        training: dropout on when True.

    Example:

    >>> lm = WordLanguageModel(["<eos>", "<unk>", "a", "b"], units=8, layers=1)
    >>> lm(np.array([[2, 3, 0]])).shape
    TensorShape([1, 3, 4])
    >>> len(lm.next_words("a b", top_k=2))
    2
    """

    def __init__(
        self,
        vocabulary,
        units=256,
        layers=2,
        dropout=0.0,
        embedding_dim=None,
        lowercase=True,
        **kwargs,
    ):
        super().__init__(**kwargs)
        name = type(self).__name__
        vocabulary = [str(w) for w in vocabulary]
        missing = [w for w in (textlib.EOS, textlib.UNK) if w not in vocabulary]
        if missing or len(set(vocabulary)) != len(vocabulary):
            raise ValueError(
                f"{name}: `vocabulary` must be a list of distinct words holding "
                f"{textlib.EOS!r} and {textlib.UNK!r} (build_vocabulary makes one). "
                f"Missing: {missing}; {len(vocabulary) - len(set(vocabulary))} duplicates"
            )
        for arg, value in (("units", units), ("layers", layers)):
            if not isinstance(value, int) or value < 1:
                raise ValueError(f"{name}: `{arg}` must be a positive integer. Received: {value!r}")
            bounds.check_size(name, arg, value)
        if embedding_dim is not None:
            bounds.check_size(name, "embedding_dim", embedding_dim)
        bounds.check_size(name, "vocabulary_size", len(vocabulary))
        if not 0 <= dropout < 1:
            raise ValueError(f"{name}: `dropout` must be in [0, 1). Received: {dropout!r}")
        self.vocabulary = vocabulary
        self.units, self.layers_count, self.dropout = units, layers, float(dropout)
        self.embedding_dim = embedding_dim or units
        self.lowercase = bool(lowercase)
        self._index = {w: i for i, w in enumerate(vocabulary)}
        self.network = word_network.word_lstm(len(vocabulary), units, layers, self.dropout,
                                              embedding_dim=self.embedding_dim)  # fmt: skip

    def call(self, ids, training=None):
        return self.network(ids, training=training)

    @classmethod
    def from_text(cls, train_path, validation_path=None, **options):
        """Train a model on text files: the same as ``train_language_model``.

        Args:
            train_path, validation_path, **options: see ``train_language_model``.

        Returns:
            The trained ``WordLanguageModel``.

        Example:

        >>> import os, tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "train.txt")
        >>> _ = open(path, "w").write("the cat sat\\n" * 20)
        >>> lm = WordLanguageModel.from_text(path, epochs=1, units=8, layers=1,
        ...                                  sequence_length=5, verbose=0)
        >>> lm.vocabulary
        ['<eos>', '<unk>', 'cat', 'sat', 'the']
        """
        return train_language_model(train_path, validation_path, **options)

    # Text <-> ids -----------------------------------------------------------

    def ids(self, text):
        """Word ids of a text as the model reads it (``[<eos>]`` for an empty text).

        Args:
            text: whitespace-separated words.

        Returns:
            A list of ints.
        """
        words = (str(text).lower() if self.lowercase else str(text)).split()
        unk = self._index[textlib.UNK]
        return [self._index.get(w, unk) for w in words] or [self._index[textlib.EOS]]

    def _decoder(self):
        """The incremental decoder of ``network`` (built once: it shares the weights)."""
        decoder = self.__dict__.get("_text_decoder")
        if decoder is None:
            from keras_seqmodels.language_model.decoding import decoder_for

            decoder = decoder_for(self.network)
            object.__setattr__(self, "_text_decoder", decoder)  # not a tracked layer
        return decoder

    def next_words(self, texts, top_k=10):
        """The next-word distribution after a text: ``[(word, probability), ...]``.

        Args:
            texts: a string, or a list of strings (then a list of answers).
            top_k: how many words, most likely first (None: the whole
                vocabulary).

        Returns:
            A list of ``(word, probability)`` pairs (a list of such lists for
            a list of texts).
        """
        single = isinstance(texts, str)
        decoder, out = self._decoder(), []
        for t in [texts] if single else list(texts):
            p = _softmax(decoder.start(self.ids(t)))
            order = np.argsort(-p, kind="stable")[: top_k or len(p)]
            out.append([(self.vocabulary[i], float(p[i])) for i in order])
        return out[0] if single else out

    def log_likelihood(self, text):
        """Natural-log probability of a text's words after its first one.

        The sum of ``log p(w_t | w_<t)`` for t >= 2 (as the exported
        signature's ``log_likelihood``).

        Args:
            text: whitespace-separated words.

        Returns:
            A float (0.0 for a text of one word).
        """
        ids = np.array([self.ids(text)], "int32")
        logits = np.asarray(self.network.predict_on_batch(ids), "float64")[0, :-1]
        return float(np.sum(_log_softmax(logits)[np.arange(len(logits)), ids[0, 1:]]))

    def generate(self, prompt="", length=20, greedy=False, temperature=1.0, seed=None):
        """Continue a prompt by ``length`` words.

        Each next word is the most likely one (``greedy=True``) or is drawn
        from ``softmax(logits / temperature)`` with a NumPy generator seeded
        by ``seed`` (same seed, same words). The prompt runs once; then each
        word is one step of the LSTMs with their states carried over.
        ``<eos>`` in the output marks the end of a sentence.

        Args:
            prompt: words to continue (empty: a sentence start).
            length: number of words to produce (a positive integer).
            greedy: take the most likely word instead of sampling.
            temperature: > 0; lower is greedier (sampling only).
            seed: integer seed of the sampler (None: a fresh one).

        Returns:
            The generated words, one string (without the prompt).
        """
        name = f"{type(self).__name__}.generate"
        if not isinstance(length, int) or isinstance(length, bool) or length < 1:
            raise ValueError(f"{name}: `length` must be a positive integer. Received: {length!r}")
        if not temperature > 0:
            raise ValueError(f"{name}: `temperature` must be > 0. Received: {temperature!r}")
        from keras_seqmodels.language_model.decoding import continue_ids

        rng = np.random.default_rng(seed)
        ids = continue_ids(self._decoder(), self.ids(prompt), length, temperature, rng, greedy)
        return " ".join(self.vocabulary[i] for i in ids)

    def perplexity(self, path, sequence_length=35, batch_size=32):
        """Perplexity of the model on a text file (tokenized as in training).

        The file's word stream (``<eos>`` after each line) is cut into
        consecutive windows of ``sequence_length`` words, each read from
        zero LSTM states (the first words of a window see no earlier
        context); every word after the stream's first is predicted once,
        the last, shorter window included.

        Args:
            path: a text file or a list of them (``read_words``).
            sequence_length: words per window.
            batch_size: windows per model call.

        Returns:
            ``exp`` of the mean negative log-likelihood per predicted word.
        """
        checks.check_positive_ints(
            "perplexity", sequence_length=sequence_length, batch_size=batch_size
        )
        words = textlib.read_words(path, self.lowercase, "perplexity", "path")
        return self.stream_perplexity(textlib.to_ids(words, self.vocabulary), sequence_length,
                                      batch_size)  # fmt: skip

    def stream_perplexity(self, ids, sequence_length=35, batch_size=32):
        """``perplexity`` of an id stream (a NumPy int array); see there.

        Args:
            ids: int array of word ids, at least two.
            sequence_length, batch_size: as in ``perplexity``.

        Returns:
            A float.
        """
        name = "stream_perplexity"
        sequence_length, batch_size = checks.check_positive_ints(
            name, sequence_length=sequence_length, batch_size=batch_size
        )
        if len(np.asarray(ids)) < 2:
            raise ValueError("stream_perplexity: `ids` needs at least two words")
        return word_network.perplexity(self.network, ids, sequence_length, batch_size)[0]

    # Serialization -----------------------------------------------------------

    def get_config(self):
        return {
            **super().get_config(),
            "vocabulary": self.vocabulary,
            "units": self.units,
            "layers": self.layers_count,
            "dropout": self.dropout,
            "embedding_dim": self.embedding_dim,
            "lowercase": self.lowercase,
        }

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        bounds.check_config(cls.__name__, config)
        bounds.check_size(cls.__name__, "vocabulary_size", len(config.get("vocabulary") or ()))
        return cls(**config)


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
    work_dir=None,
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
        work_dir: optional folder for the run's files
            (``keras_seqmodels.training.loop.fit``, as ``seqmodels train``
            keeps them): ``best.keras``, the model at its best
            ``val_loss`` (``loss`` without a validation text), ``history.csv``, and a
            backup from which the same call, rerun after a kill, resumes at
            the interrupted epoch.

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
    logs = training.Perplexity(val_ids, sequence_length, batch_size)
    loop.fit(
        model,
        training.Windows(train_ids, sequence_length, batch_size, seed),
        epochs=epochs,
        callbacks=[logs, *(callbacks or [])],
        verbose=verbose,
        work_dir=work_dir,
        monitor=("val_loss" if val_ids is not None else "loss", "min"),
    )
    return model


def _log_softmax(logits):
    logits = np.asarray(logits, "float64")
    shifted = logits - logits.max(-1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(-1, keepdims=True))


def _softmax(logits):
    return np.exp(_log_softmax(logits))
