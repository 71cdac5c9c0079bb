"""``ud-ewt-upos`` as one ONNX or LiteRT file: its emission network.

The served tagger takes raw strings and decodes with a CRF: the string
preprocessing (tokenizer, word and character vocabularies) and the Viterbi
decoding (a dynamic program over the tags, a loop in ONNX) stay in Python.
What the file holds is the id-level ensemble up to the CRF: word ids
``(batch, words)`` and character ids ``(batch, words, 20)`` in, the mean tag
scores ``(batch, words, tags)`` out, with every LSTM as the runtime's native
recurrent kernel (``LSTM`` nodes with sequence lengths). The LiteRT file
(``to_litert``) holds the same network at a fixed shape: ``WORDS`` word
positions, padded with 0. Decode the scores with the model's CRF::

    tagger = ks.zoo.load("ud-ewt-upos").model.get_layer("tagger_ids")
    tags = tagger.get_layer("crf").decode(scores, mask)
"""

import keras


def emission_network(model):
    """The id-level network of the zoo tagger up to its CRF (``mean_scores``)."""
    tagger = model.get_layer("tagger_ids")
    return keras.Model(tagger.inputs, tagger.get_layer("mean_scores").output,
                       name="ud_ewt_upos_emissions")  # fmt: skip


def to_onnx(model, path, **options):
    """``ks.export.to_onnx`` of ``emission_network(model)``."""
    from keras_seqmodels.export.onnx_export import to_onnx

    return to_onnx(emission_network(model), path, **options)


WORDS = 64  # word positions of the LiteRT file: pad a sentence's ids, split a longer one


def to_litert(model, path, *, words=WORDS, **options):
    """``ks.export.to_litert`` of the emission network at a fixed shape.

    LiteRT's converter lowers the character BiLSTM's loop (all the words of
    a sentence at once) to builtin ops only when its batch, the number of
    word positions, is known: the file takes ``batch_size`` rows (default 1)
    of ``words`` word ids and the vectorizer's ``max_chars`` (20) character
    ids per word, 0 for padding, and returns the tag scores of every
    position. Its LSTMs are masked, so they are loops of builtin ops, not
    the fused kernel; scores of padded positions are to be ignored.
    """
    import keras

    from keras_seqmodels.export.litert_export import to_litert

    network = emission_network(model)
    batch = options.pop("batch_size", None) or 1
    chars = model.get_layer("vectorizer").max_chars
    word_ids = keras.Input((words,), batch_size=batch, dtype="int32", name="word_ids")
    char_ids = keras.Input((words, chars), batch_size=batch, dtype="int32", name="char_ids")
    fixed = keras.Model([word_ids, char_ids], network([word_ids, char_ids]), name=network.name)
    return to_litert(fixed, path, **options)
