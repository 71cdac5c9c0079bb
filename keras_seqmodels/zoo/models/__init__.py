"""Zoo models as importable code, one subpackage per model.

The folder of model ``name`` is ``name`` with hyphens replaced by
underscores (``ud-ewt-upos`` -> ``ud_ewt_upos``). Each holds the model's task
class (``task.py``: raw input in, plain Python answer out) and its recipe
hooks.
"""

MODEL_PACKAGES = {
    "babi-memn2n": "babi_memn2n",
    "mnist-renet": "mnist_renet",
    "multi30k-en-de": "multi30k_en_de",
    "ntm-copy": "ntm_copy",
    "ptb-lstm": "ptb_lstm",
    "sst-treelstm": "sst_treelstm",
    "ud-ewt-upos": "ud_ewt_upos",
}


def package_name(name):
    """Module name of the folder of zoo model ``name``.

    Example:

    >>> package_name("ud-ewt-upos")
    'keras_seqmodels.zoo.models.ud_ewt_upos'
    """
    return "keras_seqmodels.zoo.models." + name.replace("-", "_")
