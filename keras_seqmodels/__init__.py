"""keras_seqmodels: recurrent and recursive sequence models for Keras 3."""

import os as _os
import sys as _sys

from keras_seqmodels.version import __version__

_saved_stderr = None
if _os.path.basename(_sys.argv[0] if _sys.argv else "") == "seqmodels":
    # The command line shows its own output only, not TensorFlow's start-up
    # log (set before TensorFlow is first imported, below). TensorFlow 2.21
    # and XLA also write native absl lines while loading, before any log
    # level is read, so file descriptor 2 points to /dev/null during the
    # imports and is restored right after (also when an import fails).
    _os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    try:
        _saved_stderr = _os.dup(2)
        _devnull = _os.open(_os.devnull, _os.O_WRONLY)
        _os.dup2(_devnull, 2)
        _os.close(_devnull)
    except OSError:
        _saved_stderr = None

try:
    from keras_seqmodels import (
        cells,
        data,
        initializers,
        layers,
        memory,
        seq2seq,
        training,
        trees,
        zoo,
    )
finally:
    if _saved_stderr is not None:
        _os.dup2(_saved_stderr, 2)
        _os.close(_saved_stderr)

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
