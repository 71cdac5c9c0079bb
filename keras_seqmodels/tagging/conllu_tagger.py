"""Your own CoNLL-U files to a trained tagger (strings in, tag strings out).

One CoNLL-U file is enough: ``train_tagger`` reads its words and tags
(UPOS or XPOS), builds the word and character vocabularies and the tag set
from it, vectorizes the sentences with the ``SentenceVectorizer`` that will
ship inside the model, trains a BiLSTM-CRF (``CRFTagger``) with ``fit`` on
length-bucketed batches and returns a Keras model from sentence strings to
tag strings. Save it with ``.save("x.keras")``; export it for raw text with
``keras_seqmodels.export.tagging.export_tagger(model, directory)`` or
``seqmodels export x.keras directory``. TensorFlow backend (string tensors).
"""

import collections

import keras
import numpy as np

from keras_seqmodels.data.conllu import _read
from keras_seqmodels.tagging.data import by_count, pad_rows, to_arrays, vocabularies
from keras_seqmodels.training import loop


def emission_scores(word_ids, char_ids, num_words, num_chars, num_tags, *, embedding_dim=64,
                    char_embedding_dim=16, char_units=32, units=64, num_layers=1,
                    dropout=0.25):  # fmt: skip
    """The emission scores of a BiLSTM tagger, as Keras tensors.

    Word embeddings (``mask_zero``) concatenated with a ``CharacterEncoder``
    of ``char_ids`` (left out when ``char_ids`` is None), dropout,
    ``num_layers`` bidirectional LSTMs each followed by dropout, and
    ``Dense(num_tags)`` named ``potentials``. ``build_tagger`` and the zoo's
    UPOS tagger put a CRF (or a softmax) on top.

    Args:
        word_ids: int Keras tensor ``(batch, words)``.
        char_ids: int Keras tensor ``(batch, words, chars)``, or None.
        num_words, num_chars: vocabulary sizes, padding and unknown ids included.
        num_tags: number of tags.
        embedding_dim, char_embedding_dim, char_units, units, num_layers,
            dropout: as ``build_tagger``.

    Returns:
        The potentials tensor ``(batch, words, num_tags)``.
    """
    from keras_seqmodels.tagging.character_encoder import CharacterEncoder

    x = keras.layers.Embedding(num_words, embedding_dim, mask_zero=True,
                               name="word_embedding")(word_ids)  # fmt: skip
    if char_ids is not None:
        chars = CharacterEncoder(num_chars, char_embedding_dim, char_units, name="chars")(char_ids)
        x = keras.layers.Concatenate(name="word_features")([x, chars])
    x = keras.layers.Dropout(dropout)(x)
    for i in range(num_layers):
        x = keras.layers.Bidirectional(
            keras.layers.LSTM(units, return_sequences=True), name=f"bilstm_{i}"
        )(x)
        x = keras.layers.Dropout(dropout)(x)
    return keras.layers.Dense(num_tags, name="potentials")(x)


def build_tagger(word_vocabulary, char_vocabulary, tags, *, embedding_dim=64,
                 characters=True, char_embedding_dim=16, char_units=32, units=64,
                 num_layers=1, dropout=0.25, max_chars=20, lowercase=True,
                 name="tagger"):  # fmt: skip
    """Build an untrained BiLSTM-CRF tagger, strings in and tag strings out.

    The string model is ``SentenceVectorizer`` (words split on whitespace,
    word ids and character ids) -> ``CRFTagger`` -> ``TagLookup``; the
    ``CRFTagger`` runs word embeddings (``mask_zero``) concatenated with a
    ``CharacterEncoder`` (a BiLSTM over each word's characters), ``num_layers``
    bidirectional LSTMs and ``Dense(len(tags))`` emission scores, decoded by
    a linear-chain CRF (Viterbi). Word id 1 is the unknown word, whose
    characters still describe it.

    Args:
        word_vocabulary: list of words (looked up in lower case when
            ``lowercase``).
        char_vocabulary: list of characters.
        tags: list of tag names (id i is ``tags[i]``).
        embedding_dim: width of the word embeddings.
        characters: add the character encoder (False: words only).
        char_embedding_dim, char_units: character embedding width and the
            state width of each direction of the character BiLSTM.
        units: state width of each direction of the word BiLSTMs.
        num_layers: number of word BiLSTM layers.
        dropout: dropout rate on the word features and between layers.
        max_chars: characters kept per word (the first ones).
        lowercase: look words up in lower case.
        name: the string model's name.

    Returns:
        ``(tagger, trainer)``: ``tagger`` takes strings ``(batch,)`` of
        whitespace-separated tokens and returns tag strings ``(batch,
        tokens)`` (``""`` at padding); ``trainer`` is the ``CRFTagger`` it
        calls (``[word_ids, char_ids]``, or ``word_ids`` without characters,
        to tag ids), the model to ``compile`` and ``fit``; both share weights.

    Example (TensorFlow backend):

    >>> import numpy as np
    >>> tagger, trainer = build_tagger(["the", "dog"], list("thedog"), ["DET", "NOUN"],
    ...                                embedding_dim=4, char_units=4, units=4)
    >>> tagger(np.array(["The dog", "dog"])).shape
    TensorShape([2, 2])
    """
    from keras_seqmodels.tagging.crf_tagger import CRFTagger
    from keras_seqmodels.tagging.sentence_vectorizer import SentenceVectorizer
    from keras_seqmodels.tagging.tag_lookup import TagLookup

    vectorizer = SentenceVectorizer(word_vocabulary, char_vocabulary, max_chars=max_chars,
                                    lowercase=lowercase, name="vectorizer")  # fmt: skip
    word_ids = keras.Input((None,), dtype="int32", name="word_ids")
    inputs = [word_ids]
    char_ids = None
    if characters:
        char_ids = keras.Input((None, None), dtype="int32", name="char_ids")
        inputs.append(char_ids)
    potentials = emission_scores(
        word_ids, char_ids, len(word_vocabulary) + 2, len(char_vocabulary) + 2, len(tags),
        embedding_dim=embedding_dim, char_embedding_dim=char_embedding_dim,
        char_units=char_units, units=units, num_layers=num_layers, dropout=dropout,
    )  # fmt: skip
    emitter = keras.Model(inputs if characters else word_ids, potentials, name="emitter")
    trainer = CRFTagger(emitter, name="crf_tagger")

    sentences = keras.Input((), dtype="string", name="sentences")
    ids, char_ids = vectorizer(sentences)
    tag_ids = trainer([ids, char_ids] if characters else ids)
    out = TagLookup(list(tags), name="tag_strings")([tag_ids, ids])
    return keras.Model(sentences, out, name=name), trainer


def train_tagger(train_path, validation_path=None, *, column="upos", min_count=2,
                 max_words=None, epochs=10, batch_size=32, learning_rate=5e-3,
                 callbacks=None, seed=0, verbose="auto", work_dir=None,
                 **model_options):  # fmt: skip
    """Train a part-of-speech tagger on a CoNLL-U file.

    Reads ``train_path`` (``keras_seqmodels.data.read_conllu``: syntactic
    words, multiword-token and empty-node lines skipped), builds the word
    vocabulary (words seen ``min_count`` times, lower-cased), the character
    vocabulary and the tag set from it, and trains ``build_tagger``'s
    BiLSTM-CRF with Adam on length-bucketed batches. The training ids come
    from the model's own ``SentenceVectorizer``, so the ids seen in training
    are the ids the saved model computes from text.

    Args:
        train_path: a CoNLL-U file (UTF-8; sentences separated by blank
            lines, 10 tab-separated columns per word line).
        validation_path: optional CoNLL-U file of held-out sentences; its
            loss and tag accuracy (the share of its words tagged right) are
            reported each epoch (``val_loss``, ``val_accuracy``). Tags found
            only there are added to the tag set (the model never predicts
            them; they count as errors).
        column: ``"upos"`` (column 4, universal tags) or ``"xpos"`` (column
            5, the treebank's own tags).
        min_count: a word needs this many occurrences in the training file
            to get its own embedding; rarer words share the unknown-word
            embedding (and keep their characters), so the model learns what
            to do with words it has never seen.
        max_words: most words in the vocabulary (None: no cap).
        epochs, batch_size, learning_rate: training (Adam, gradient norm
            clipped to 1).
        callbacks: Keras callbacks for ``fit`` (e.g. ``EarlyStopping``).
        seed: seed of the weights, the dropout and the batch order.
        verbose: ``fit``'s verbosity.
        work_dir: optional folder for the run's files
            (``keras_seqmodels.training.loop.fit``, as ``seqmodels train``
            keeps them): ``best.keras``, the trained ``CRFTagger`` (the
            model's ids-to-tags core) at its best ``val_loss`` (``loss``
            without ``validation_path``), ``history.csv``, and a backup from which the
            same call, rerun after a kill, resumes at the interrupted epoch.
        **model_options: more ``build_tagger`` arguments (``embedding_dim``,
            ``characters``, ``char_units``, ``units``, ``num_layers``,
            ``dropout``, ``max_chars``, ``lowercase``, ``name``).

    Returns:
        A Keras model from strings ``(batch,)`` of whitespace-separated
        tokens to tag strings ``(batch, tokens)`` (``""`` at padding).
        ``model.history`` is the Keras ``History`` of the training. Save it
        with ``model.save("x.keras")``; export it with
        ``keras_seqmodels.export.tagging.export_tagger`` (raw text in: the
        SavedModel tokenizes it UD-style first).

    Raises:
        FileNotFoundError: a missing file.
        ValueError: a malformed line (with file and line), a file with no
            sentence or not UTF-8, an ``"xpos"`` column holding only ``_``, a
            bad ``column``, no word seen ``min_count`` times.

    Example (TensorFlow backend):

    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "train.conllu")
    >>> rows = ["1\\tDogs\\tdog\\tNOUN\\tNNS\\t_\\t2\\tnsubj\\t_\\t_",
    ...         "2\\tbark\\tbark\\tVERB\\tVBP\\t_\\t0\\troot\\t_\\t_"]
    >>> _ = open(path, "w").write(("\\n".join(rows) + "\\n\\n") * 4)
    >>> tagger = train_tagger(path, epochs=1, embedding_dim=4, char_units=4, units=4,
    ...                       verbose=0)
    >>> tagger(np.array(["Dogs bark"])).shape
    TensorShape([1, 2])
    """
    for arg, value in (("min_count", min_count), ("epochs", epochs), ("batch_size", batch_size)):
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise ValueError(
                f"train_tagger: `{arg}` must be a positive integer. Received: {arg}={value!r}"
            )
    train = _sentences(train_path, column)
    validation = None if validation_path is None else _sentences(validation_path, column)
    lowercase = model_options.get("lowercase", True)
    word_vocab, char_vocab, _ = vocabularies(train, min_count, max_words, lowercase)
    if not word_vocab:
        raise ValueError(
            f"train_tagger: no word of {train_path} occurs min_count={min_count} times or "
            "more; lower `min_count` or give more text"
        )
    counts = collections.Counter(t for _, ts in train for t in ts)
    tags = by_count(counts)
    for _, ts in validation or ():
        tags += [t for t in dict.fromkeys(ts) if t not in counts and t not in tags]

    keras.utils.set_random_seed(seed)
    tagger, trainer = build_tagger(word_vocab, char_vocab, tags, **model_options)
    characters = len(trainer.potentials_model.inputs) == 2
    vectorizer = tagger.get_layer("vectorizer")
    data = _dataset(to_arrays(train, vectorizer, tags), batch_size, characters, seed=seed)
    val = None
    if validation is not None:
        val = _dataset(to_arrays(validation, vectorizer, tags), batch_size, characters)
    # "accuracy" is CRFTagger's TokenAccuracy: every real (unpadded) word counts once.
    trainer.compile(
        optimizer=keras.optimizers.Adam(learning_rate, clipnorm=1.0), metrics=["accuracy"]
    )
    loop.fit(trainer, data, validation_data=val, epochs=epochs, callbacks=callbacks,
             verbose=verbose, shuffle=False, work_dir=work_dir,
             monitor=("val_loss" if val is not None else "loss", "min"))  # fmt: skip
    tagger.history = trainer.history
    return tagger


def _sentences(path, column):
    sentences = _read(path, column, "train_tagger")
    if not sentences:
        raise ValueError(
            f"train_tagger: {path} holds no sentence; expected CoNLL-U: word lines of 10 "
            "tab-separated columns (ID FORM LEMMA UPOS XPOS FEATS HEAD DEPREL DEPS MISC), "
            "sentences separated by a blank line"
        )
    if all(t == "_" for _, ts in sentences for t in ts):
        raise ValueError(
            f"train_tagger: {path} has no {column.upper()} tags (the column is '_' on "
            "every word line); choose the other `column`"
        )
    return sentences


def _batches(data, batch_size, characters, rng=None):
    """Batches of ``to_arrays``' sentences of similar length, padded to the
    next power of two (at least 8), so the training step is traced for a
    handful of shapes; characters up to the longest word's."""
    lengths = np.diff(data["offsets"])
    jitter = rng.random(len(lengths)) if rng is not None else np.zeros(len(lengths))
    order = np.argsort(lengths + jitter, kind="stable")
    groups = [order[i : i + batch_size] for i in range(0, len(order), batch_size)]
    if rng is not None:
        rng.shuffle(groups)
    max_chars = int(np.count_nonzero(data["chars"], axis=1).max())
    out = []
    for rows in groups:
        width = max(8, 1 << int(lengths[rows].max() - 1).bit_length())
        words, chars, tags = pad_rows(data, rows, width, max_chars)
        out.append(((words, chars) if characters else words, tags))
    return out


def _dataset(data, batch_size, characters, seed=None):
    """A ``tf.data.Dataset`` of ``_batches``, reshuffled each epoch when
    ``seed`` is given. Its signature leaves the widths open (a
    ``PyDataset`` fixes a dimension its first batches agree on)."""
    import tensorflow as tf

    rng = None if seed is None else np.random.default_rng(seed)

    def generate():
        yield from _batches(data, batch_size, characters, rng)

    ids = tf.TensorSpec((None, None), tf.int32)
    x = (ids, tf.TensorSpec((None, None, None), tf.int32)) if characters else ids
    batches = tf.data.Dataset.from_generator(generate, output_signature=(x, ids))
    count = -(-(len(data["offsets"]) - 1) // batch_size)
    return batches.apply(tf.data.experimental.assert_cardinality(count)).prefetch(2)

