"""Readers of the standard data formats the zoo recipes use.

TFDS builders over local copies (nothing downloaded): UD English EWT and PTB
text in ``keras_seqmodels.data.tfds_builders`` (``load_local``), Multi30k in
``keras_seqmodels.data.multi30k``; both import TFDS, so this package imports
neither.
"""

from keras_seqmodels.data.babi import read_babi
from keras_seqmodels.data.conllu import read_conllu


def load_local(name, manual_dir, split, data_dir):
    """Build (once) and load a split of a TFDS builder over the local data.

    See ``keras_seqmodels.data.tfds_builders.load_local``; TFDS is imported
    only when this is called.

    Args:
        name: ``"ud_english_ewt"`` or ``"ptb_text"``.
        manual_dir: folder holding the original files.
        split: a split name (``"train"``, ``"dev"``/``"valid"``, ``"test"``).
        data_dir: where TFDS writes and reads its records.

    Returns:
        A ``tf.data.Dataset`` of feature dicts.

    Example (needs ``../shared/data``; builds the records on first use):

    >>> ds = load_local("ud_english_ewt", "../shared/data/ud_english_ewt",  # doctest: +SKIP
    ...                 "dev", "runs/tfds")
    """
    from keras_seqmodels.data import tfds_builders  # imports TFDS only when used

    return tfds_builders.load_local(name, manual_dir, split, data_dir)


__all__ = ["read_babi", "load_local", "read_conllu"]
