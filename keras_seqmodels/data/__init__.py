"""Readers of the standard data formats the zoo recipes use."""

from keras_seqmodels.data.babi import read_babi
from keras_seqmodels.data.conllu import read_conllu


def load_local(name, manual_dir, split, data_dir):
    """TFDS builders over the local data; see ``data.tfds_builders.load_local``."""
    from keras_seqmodels.data import tfds_builders  # imports TFDS only when used

    return tfds_builders.load_local(name, manual_dir, split, data_dir)


__all__ = ["read_babi", "load_local", "read_conllu"]
