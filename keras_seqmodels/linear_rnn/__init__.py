"""Recurrences linear in their state, trained in parallel by a scan.

``LinearRecurrent`` is the base (masks, states, streaming ``step``);
``linear_scan`` / ``complex_linear_scan`` the scan every layer runs, its
kernel chosen per backend and device (``keras_seqmodels.linear_rnn.scan``).
"""

from keras_seqmodels.linear_rnn.base import LinearRecurrent
from keras_seqmodels.linear_rnn.hawk_block import HawkBlock
from keras_seqmodels.linear_rnn.lru import LRU
from keras_seqmodels.linear_rnn.min_gru import MinGRU
from keras_seqmodels.linear_rnn.min_lstm import MinLSTM
from keras_seqmodels.linear_rnn.rg_lru import RGLRU
from keras_seqmodels.linear_rnn.scan import complex_linear_scan, linear_scan, use_kernels
from keras_seqmodels.linear_rnn.selective_ssm import SelectiveSSM

__all__ = [
    "HawkBlock",
    "LRU",
    "LinearRecurrent",
    "MinGRU",
    "MinLSTM",
    "RGLRU",
    "SelectiveSSM",
    "complex_linear_scan",
    "linear_scan",
    "use_kernels",
]
