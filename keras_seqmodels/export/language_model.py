"""SavedModel export of a word-level language model (ptb-lstm): text in, next word out."""

from keras_seqmodels.export.generic import check_empty_directory


def export_language_model(model, directory, vocabulary=None, unknown="<unk>", eos="<eos>"):
    """Write a SavedModel whose ``serving_default`` continues and scores text.

    The signature takes ``text``, a string tensor ``(batch,)`` of
    whitespace-separated words (lower-cased inside, as PTB; words not in the
    vocabulary become ``<unk>``; an empty text is ``<eos>``, a sentence
    start), and returns ``{"next_word": string (batch,)`` (the most likely
    next word), ``"next_word_logits": float32 (batch, vocabulary)``,
    ``"log_likelihood": float32 (batch,)`` (the sum of log p(w_t | w_<t)
    over the text's words after the first)}. The same words as ``seqmodels
    generate`` feeds the Keras model::

        import tensorflow as tf
        served = tf.saved_model.load(directory)
        served.signatures["serving_default"](text=tf.constant(["the company said"]))

    Args:
        model: a Keras model, int ids ``(batch, time)`` -> logits
            ``(batch, time, vocabulary)``, causal (right padding does not
            change earlier positions).
        directory: output folder (must not exist or be empty).
        vocabulary: the word list (index = id); default: the zoo asset
            ``vocabulary`` of ptb-lstm.
        unknown, eos: the vocabulary's unknown-word and end-of-sentence words.
    """
    import keras
    import tensorflow as tf

    check_empty_directory(directory)
    if vocabulary is None:
        from keras_seqmodels import zoo

        text = zoo.read_asset("ptb-lstm", "vocabulary").decode("utf-8")
        vocabulary = [line for line in text.split("\n") if line]
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
        tokens = tf.strings.split(tf.strings.lower(text, encoding="utf-8"))
        ids = tf.cast(tf.ragged.map_flat_values(table.lookup, tokens), tf.int32)
        lengths = tf.cast(ids.row_lengths(), tf.int32)
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

    archive = keras.export.ExportArchive()
    archive.track(model)
    archive.track(table)
    archive.add_endpoint(
        name="serving_default",
        fn=serve,
        input_signature=[tf.TensorSpec([None], tf.string, name="text")],
    )
    archive.write_out(directory, verbose=False)
    return directory
