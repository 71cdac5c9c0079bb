"""keras_seqmodels: recurrent and recursive sequence models for Keras 3."""

import os as _os
import sys as _sys

if _os.path.basename(_sys.argv[0] if _sys.argv else "") == "seqmodels":
    # The command line shows its own output only, not TensorFlow's start-up
    # log (set before TensorFlow is first imported, below).
    _os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

from keras_seqmodels import cells, data, initializers, layers, memory, seq2seq, training, trees, zoo
from keras_seqmodels.version import __version__

__all__ = [
    "cells",
    "data",
    "initializers",
    "layers",
    "memory",
    "seq2seq",
    "training",
    "trees",
    "zoo",
    "__version__",
]
