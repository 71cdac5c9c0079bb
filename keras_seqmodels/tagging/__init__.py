"""Sequence tagging: the tagging layers, and your own CoNLL-U files to a
trained tagger (strings in, tag strings out).

The layers: ``CRF`` (linear-chain CRF output layer, Viterbi in the graph),
``CRFTagger`` (trains a model of emission scores with the CRF loss),
``CharacterEncoder`` (a BiLSTM over each word's characters), and the string
preprocessing kept inside a saved tagger, ``SentenceVectorizer`` (sentences
to word and character ids) and ``TagLookup`` (tag ids back to strings).

``train_tagger`` reads a CoNLL-U treebank, builds the vocabularies and the
tag set, trains a BiLSTM-CRF with ``fit`` and returns a Keras model that
tags whitespace-separated tokens; ``build_tagger`` builds the same model
untrained. Export it for serving raw text with
``keras_seqmodels.export.tagging.export_tagger`` (or ``seqmodels export``).
String layers and the tagger: TensorFlow backend (string tensors).
"""

from keras_seqmodels.tagging.character_encoder import CharacterEncoder
from keras_seqmodels.tagging.conllu_tagger import build_tagger, train_tagger
from keras_seqmodels.tagging.crf import CRF
from keras_seqmodels.tagging.crf_tagger import CRFTagger
from keras_seqmodels.tagging.sentence_vectorizer import SentenceVectorizer
from keras_seqmodels.tagging.tag_lookup import TagLookup

__all__ = [
    "CRF",
    "CRFTagger",
    "CharacterEncoder",
    "SentenceVectorizer",
    "TagLookup",
    "build_tagger",
    "train_tagger",
]
