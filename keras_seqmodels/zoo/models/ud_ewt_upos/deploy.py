"""``ud-ewt-upos`` as one ONNX file: its emission network.

The served tagger takes raw strings and decodes with a CRF: the string
preprocessing (tokenizer, word and character vocabularies) and the Viterbi
decoding (a dynamic program over the tags, a loop in ONNX) stay in Python.
What the file holds is the id-level ensemble up to the CRF: word ids
``(batch, words)`` and character ids ``(batch, words, 20)`` in, the mean tag
scores ``(batch, words, tags)`` out, with every LSTM as the runtime's native
recurrent kernel (``LSTM`` nodes with sequence lengths). LiteRT's fused LSTM
takes no mask, so there is no LiteRT file of this model. Decode the scores
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
    """Refused: the tagger's LSTMs take masks (padded words and characters),
    which LiteRT's fused LSTM cannot; the emission network goes to ONNX."""
    raise ValueError(
        "to_litert: the tagger's BiLSTMs take masks (padded words and characters), "
        "which LiteRT's fused LSTM cannot; export its emission network with "
        "--format onnx, or the whole tagger as a SavedModel"
    )
