"""``ud-ewt-upos`` as one ONNX file: its emission network.

The served tagger takes raw strings and decodes with a CRF: the string
preprocessing (tokenizer, word and character vocabularies) and the Viterbi
decoding (a dynamic program over the tags, a loop in ONNX) stay in Python.
What the file holds is the id-level ensemble up to the CRF: word ids
``(batch, words)`` and character ids ``(batch, words, 20)`` in, the mean tag
scores ``(batch, words, tags)`` out, with every LSTM as the runtime's native
recurrent kernel (``LSTM`` nodes with sequence lengths). There is no LiteRT
file of this model: its masked LSTMs would be loops (LiteRT's fused LSTM
takes no sequence lengths), and the character BiLSTM's loop runs over all the
words of a sentence at once, a batch size known only at run time, which the
converter cannot lower to builtin ops. Decode the scores
with the model's CRF::

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
    from keras_seqmodels import export

    return export.to_onnx(emission_network(model), path, **options)


def to_litert(model, path, **options):
    """Refused: the character BiLSTM's loop has a batch (the sentence's words)
    known only at run time, which LiteRT's converter cannot lower to builtin
    ops; the emission network goes to ONNX."""
    raise ValueError(
        "to_litert: the tagger's character BiLSTM runs over all the words of a "
        "sentence at once, a masked loop whose batch is known only at run time, which "
        "LiteRT's converter cannot lower to builtin ops; export its emission network "
        "with --format onnx, or the whole tagger as a SavedModel"
    )
