"""Readers of the standard data formats the zoo recipes use."""

from keras_seqmodels.data.conllu import read_conllu

__all__ = ["read_conllu"]
