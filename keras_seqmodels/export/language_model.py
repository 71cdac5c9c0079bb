"""SavedModel export of a word-level language model (the zoo's, or a
``WordLanguageModel`` trained on your own text): text in, next word out."""

from keras_seqmodels.export.generic import check_empty_directory, write_archive
from keras_seqmodels.export.limits import (
    at_most,
    checked_shape,
    guard,
    max_or_zero,
    merge_limits,
    string_checks,
)

# Documented request limits of the signature, checked in the graph.
LIMITS = {
    "max_batch": 256,  # texts per request
    "max_bytes": 20_000,  # bytes per text
    "max_total_bytes": 1_048_576,  # bytes of all texts
    "max_tokens": 1_000,  # words per text
    "max_padded_tokens": 8_192,  # texts x words of the longest (logits over the vocabulary)
}


def export_language_model(
    model, directory, vocabulary=None, unknown="<unk>", eos="<eos>", limits=None,
    served_name="language model", lowercase=None,
):
    """Write a SavedModel whose ``serving_default`` continues and scores text.

    The signature takes ``text``, a string tensor ``(batch,)`` of
    whitespace-separated words (lower-cased inside as PTB, unless
    ``lowercase=False``; words not in the
    vocabulary become ``<unk>``; an empty text is ``<eos>``, a sentence
    start), and returns ``{"next_word": string (batch,)`` (the most likely
    next word), ``"next_word_logits": float32 (batch, vocabulary)``,
    ``"log_likelihood": float32 (batch,)`` (the sum of log p(w_t | w_<t)
    over the text's words after the first)}. The same words as ``seqmodels
    generate`` feeds the Keras model::

        import tensorflow as tf
        served = tf.saved_model.load(directory)
        served.signatures["serving_default"](text=tf.constant(["the company said"]))

    Request limits (``LIMITS``), checked in the graph before the model runs
    (an ``InvalidArgumentError`` names the one exceeded): 256 texts, 20,000
    bytes and 1,000 words per text, 1 MiB in all, 8,192 padded words (texts
    x words of the longest; the model scores the whole vocabulary at each);
    ``text`` of another shape than ``(batch,)`` is refused the same way.
    Bytes that are not UTF-8 are replaced before lower-casing; an empty
    batch gives empty outputs.

    Args:
        model: a Keras model, int ids ``(batch, time)`` -> logits
            ``(batch, time, vocabulary)``, causal (right padding does not
            change earlier positions); or a
            ``keras_seqmodels.language_model.WordLanguageModel``, whose
            vocabulary and lower-casing are used.
        directory: output folder (must not exist or be empty).
        vocabulary: the word list (index = id); default: the
            ``WordLanguageModel``'s; required for any other model (a zoo
            task's ``export`` passes the shipped one).
        unknown, eos: the vocabulary's unknown-word and end-of-sentence words.
        limits: optional dict overriding some of ``LIMITS``.
        served_name: the start of the limit messages (``export`` passes the
            zoo name).
        lowercase: lower-case the text before the lookup (default: the
            ``WordLanguageModel``'s setting, else True).
    """
    import tensorflow as tf

    from keras_seqmodels.language_model import WordLanguageModel

    check_empty_directory(directory)
    limits = merge_limits("export_language_model", LIMITS, limits)
    if isinstance(model, WordLanguageModel):
        vocabulary = model.vocabulary if vocabulary is None else vocabulary
        lowercase = model.lowercase if lowercase is None else lowercase
        model = model.network
    lowercase = True if lowercase is None else bool(lowercase)
    if vocabulary is None:
        raise ValueError(
            "export_language_model: give `vocabulary`, the model's word list (a "
            "WordLanguageModel holds its own; a zoo task's export passes its shipped one)"
        )
    vocabulary = [str(w) for w in vocabulary]
    if model.outputs[0].shape[-1] != len(vocabulary):
        raise ValueError(
            f"export_language_model: the model scores {model.outputs[0].shape[-1]} words "
            f"but the vocabulary has {len(vocabulary)}"
        )
    for word in (unknown, eos):
        if word not in vocabulary:
            raise ValueError(f"export_language_model: {word!r} is not in the vocabulary")
    table = tf.lookup.StaticHashTable(
        tf.lookup.KeyValueTensorInitializer(
            tf.constant(vocabulary), tf.range(len(vocabulary), dtype=tf.int64)
        ),
        default_value=vocabulary.index(unknown),
    )
    words = tf.constant(vocabulary)
    eos_id = vocabulary.index(eos)

    def serve(text):
        text = checked_shape(served_name, "text", text, [None], "(batch,), one string per text")
        text = guard([text], string_checks(
            served_name, text, limits["max_batch"], limits["max_bytes"], noun="texts"
        ) + [at_most(served_name, "bytes in all", tf.reduce_sum(tf.strings.length(text)),
                     limits["max_total_bytes"])])[0]
        if lowercase:
            text = tf.strings.lower(text, encoding="utf-8")
        tokens = tf.strings.split(text)
        lengths = tf.cast(tokens.row_lengths(), tf.int32)
        longest = max_or_zero(lengths)
        tokens = guard([tokens], [
            at_most(served_name, "words per text", longest, limits["max_tokens"]),
            at_most(served_name, "padded words (texts x words of the longest)",
                    tf.size(lengths) * longest, limits["max_padded_tokens"]),
        ])[0]
        ids = tf.cast(tf.ragged.map_flat_values(table.lookup, tokens), tf.int32)
        ids = ids.to_tensor(0)
        empty = lengths == 0
        # An empty text is a sentence start (as `seqmodels generate`).
        ids = tf.pad(ids, [[0, 0], [0, tf.maximum(1 - tf.shape(ids)[1], 0)]])
        ids = tf.where(empty[:, None] & (tf.range(tf.shape(ids)[1]) == 0), eos_id, ids)
        lengths = tf.maximum(lengths, 1)
        logits = tf.cast(model(ids, training=False), tf.float32)
        last = tf.gather(logits, lengths - 1, axis=1, batch_dims=1)
        log_p = tf.nn.log_softmax(logits[:, :-1])
        chosen = tf.gather(log_p, ids[:, 1:], axis=2, batch_dims=2)
        real = tf.range(1, tf.shape(ids)[1]) < lengths[:, None]
        return {
            "next_word": tf.gather(words, tf.argmax(last, axis=-1, output_type=tf.int32)),
            "next_word_logits": last,
            "log_likelihood": tf.reduce_sum(tf.where(real, chosen, 0.0), axis=1),
        }

    endpoint = (serve, [tf.TensorSpec([None], tf.string, name="text")])
    return write_archive(directory, model, {"serving_default": endpoint}, track=[table])
