"""Sequence tagging: your own CoNLL-U files to a trained tagger (strings in,
tag strings out).

``train_tagger`` reads a CoNLL-U treebank, builds the vocabularies and the
tag set, trains a BiLSTM-CRF with ``fit`` and returns a Keras model that
tags whitespace-separated tokens; ``build_tagger`` builds the same model
untrained. Export it for serving raw text with
``keras_seqmodels.export.tagging.export_tagger`` (or ``seqmodels export``).
TensorFlow backend (string tensors).
"""

from keras_seqmodels.tagging.conllu_tagger import build_tagger, train_tagger

__all__ = ["build_tagger", "train_tagger"]
