"""Argument types that check a numeric option's range when it is parsed.

Each returns a function for ``argparse``'s ``type=``: a value out of range is a
usage error naming the option, its range and what was given, e.g.
``seqmodels translate: error: argument --beam: must be an integer from 1 to 64;
got '0'``.
"""

import argparse
import math

from keras_seqmodels.utils.errors import UserError

MAX_BEAM = 64  # beam search keeps beam x vocabulary scores per sentence and step


def int_range(low, high=None):
    """An integer type accepting ``low <= value`` (``<= high`` when given).

    Example:

    >>> int_range(1, 64)("5")
    5
    """
    expected = f"an integer from {low} to {high}" if high is not None else (
        f"an integer >= {low}"
    )

    def parse(text):
        try:
            value = int(text)
        except (TypeError, ValueError):
            raise argparse.ArgumentTypeError(f"must be {expected}; got {text!r}") from None
        if value < low or (high is not None and value > high):
            raise argparse.ArgumentTypeError(f"must be {expected}; got {text!r}")
        return value

    parse.__name__ = expected
    return parse


def positive_float(high=None):
    """A finite float type accepting ``0 < value`` (``<= high`` when given).

    Example:

    >>> positive_float()("0.7")
    0.7
    """
    expected = f"a number > 0 and <= {high:g}" if high is not None else "a number > 0"

    def parse(text):
        try:
            value = float(text)
        except (TypeError, ValueError):
            raise argparse.ArgumentTypeError(f"must be {expected}; got {text!r}") from None
        if not math.isfinite(value) or value <= 0 or (high is not None and value > high):
            raise argparse.ArgumentTypeError(f"must be {expected}; got {text!r}")
        return value

    parse.__name__ = expected
    return parse


positive_int = int_range(1)
beam_size = int_range(1, MAX_BEAM)
seed = int_range(0, 2**32 - 1)


def require_tensorflow():
    """Refuse to run, in one line, under a Keras backend other than TensorFlow.

    The text models of the zoo (the translator, the tagger, the sentiment
    classifier) read strings with TensorFlow ops inside the model, which
    JAX and PyTorch arrays cannot hold; their commands call this before
    loading one.
    """
    import keras

    backend = keras.config.backend()
    if backend != "tensorflow":
        raise UserError(
            f"this command needs the TensorFlow backend (its model reads text with "
            f"TensorFlow string ops) and Keras is running on {backend!r}; run it with "
            "KERAS_BACKEND=tensorflow"
        )
