"""Whitespace-tokenised sentence strings to word ids and character ids."""

import keras

from keras_seqmodels.utils import validation


@keras.saving.register_keras_serializable(package="keras_seqmodels")
class SentenceVectorizer(keras.layers.Layer):
    """Maps sentence strings to padded word ids and per-word character ids.

    Each sentence is split on whitespace into words w_1..w_T. Word w_t maps to
    ``word_lookup(lower(w_t))`` (if ``lowercase``) and its characters (as
    written, at most ``max_chars``, the first ones) to ``char_lookup(c)``.
    Id 0 is padding and id 1 the out-of-vocabulary bucket in both
    vocabularies, so the outputs feed ``Embedding(mask_zero=True)`` layers.

    This is a preprocessing layer, like ``keras.layers.TextVectorization``:
    it uses TensorFlow string ops and runs on the TensorFlow backend (or in a
    ``tf.data`` pipeline); the layers after it are backend-agnostic. Its
    vocabularies are part of its config, so a saved model carries them.

    New relative to Keras: ``TextVectorization`` produces word ids only; this
    layer also produces the ``(batch, words, chars)`` character ids that a
    character-level word encoder needs, aligned with the words.

    Args:
        word_vocabulary: list of words (ids 2, 3, ... in this order).
        char_vocabulary: list of characters (ids 2, 3, ...).
        max_chars: positive integer, characters kept per word.
        lowercase: look words up in lower case (characters keep their case).
        **kwargs: base layer arguments.

    Call arguments:
        sentences: string ``(batch,)`` of whitespace-tokenised sentences.

    Returns:
        ``(word_ids, char_ids)``: int32 ``(batch, words)`` and
        ``(batch, words, chars)`` padded with 0 to the longest in the batch.

    Example:

    >>> import numpy as np, keras_seqmodels as ks
    >>> vec = ks.tagging.SentenceVectorizer(["the", "cat"], list("thecas"))
    >>> words, chars = vec(np.array(["The cat sat"]))
    >>> words.numpy().tolist(), chars.numpy()[0].tolist()
    ([[2, 3, 1]], [[1, 3, 4], [5, 6, 2], [7, 6, 2]])

    Reference:
        Keras ``TextVectorization`` and ``StringLookup``.
    """

    def __init__(self, word_vocabulary, char_vocabulary, max_chars=20, lowercase=True, **kwargs):
        kwargs.setdefault("dtype", "int32")
        super().__init__(**kwargs)
        for arg, vocab in (
            ("word_vocabulary", word_vocabulary),
            ("char_vocabulary", char_vocabulary),
        ):
            if isinstance(vocab, str) or not all(isinstance(v, str) and v for v in vocab):
                raise ValueError(
                    f"{self.name}: `{arg}` must be a list of non-empty strings. "
                    f"Received: {arg}={vocab!r:.80}"
                )
        self.word_vocabulary = list(word_vocabulary)
        self.char_vocabulary = list(char_vocabulary)
        self.max_chars = validation.check_positive_int(self.name, "max_chars", max_chars)
        self.lowercase = bool(lowercase)
        self.word_lookup = keras.layers.StringLookup(
            vocabulary=self.word_vocabulary, mask_token="", name="word_lookup"
        )
        self.char_lookup = keras.layers.StringLookup(
            vocabulary=self.char_vocabulary, mask_token="", name="char_lookup"
        )
        self.built = True

    def call(self, sentences):
        import tensorflow as tf  # a preprocessing layer: string ops need TF

        sentences = tf.convert_to_tensor(sentences, dtype=tf.string)
        if sentences.shape.rank != 1:
            raise ValueError(
                f"{self.name}: `sentences` must be a string tensor of shape "
                f"(batch,). Received shape {sentences.shape}"
            )
        words = tf.strings.split(sentences)
        keys = (
            tf.strings.lower(words.flat_values, encoding="utf-8")
            if self.lowercase
            else words.flat_values
        )
        # A word or character is never empty here, so never the padding id 0;
        # StringLookup maps "\0" to its mask id (the token would then be
        # dropped as padding and get an empty tag): such a key is unknown (1).
        word_ids = words.with_flat_values(
            tf.maximum(tf.cast(self.word_lookup(keys), tf.int32), 1)
        )
        chars = tf.strings.unicode_split(words.flat_values, "UTF-8")[:, : self.max_chars]
        char_ids = chars.with_flat_values(
            tf.maximum(tf.cast(self.char_lookup(chars.flat_values), tf.int32), 1)
        )
        char_ids = words.with_flat_values(char_ids)
        word_ids, char_ids = word_ids.to_tensor(0), char_ids.to_tensor(0)
        # At least one (padding) word and character slot: a batch of empty or
        # blank sentences would otherwise give zero steps, on which Keras's
        # LSTM fails at run time ("Tried to stack list which only contains
        # uninitialized tensors"). Padding slots are masked downstream.
        words_short = tf.maximum(1 - tf.shape(word_ids)[1], 0)
        chars_short = tf.maximum(1 - tf.shape(char_ids)[2], 0)
        word_ids = tf.pad(word_ids, [[0, 0], [0, words_short]])
        char_ids = tf.pad(char_ids, [[0, 0], [0, words_short], [0, chars_short]])
        return word_ids, char_ids

    def compute_output_spec(self, sentences):
        batch = sentences.shape[0]
        return (
            keras.KerasTensor((batch, None), dtype="int32"),
            keras.KerasTensor((batch, None, None), dtype="int32"),
        )

    def get_config(self):
        return {
            **super().get_config(),
            "word_vocabulary": self.word_vocabulary,
            "char_vocabulary": self.char_vocabulary,
            "max_chars": self.max_chars,
            "lowercase": self.lowercase,
        }
