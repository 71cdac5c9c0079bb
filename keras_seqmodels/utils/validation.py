"""Argument and input checks shared by every layer of the package.

Each check raises an error that names the layer, the argument and the
expected form, and says what it received.
"""

import numbers

from keras import backend

from keras_seqmodels.utils import bounds


def is_int(value):
    """True for Python and NumPy integers (``np.int64(8)``), not for bools."""
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def is_real(value):
    """True for Python and NumPy integers and floats, not for bools."""
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def check_positive_int(layer_name, arg_name, value):
    """``value`` as a Python ``int``; NumPy integers are accepted, as in Keras."""
    if not is_int(value) or value <= 0:
        raise ValueError(
            f"{layer_name}: `{arg_name}` must be a positive integer. Received: {arg_name}={value!r}"
        )
    # A size-like argument (units, layers, beam_size, ...) also has an upper
    # bound, so a crafted config cannot make the constructor allocate without
    # limit (keras_seqmodels.utils.bounds).
    bounds.check_size(layer_name, arg_name, value)
    return int(value)


def check_positive_ints(caller, **values):
    """Each keyword a positive integer (and within its size limit, if it has
    one); returns the values as Python ints, in order.

    For the numeric arguments of an entry point (``epochs``, ``batch_size``,
    ``min_count``, ...), checked before any file is read:

    >>> check_positive_ints("train_x", epochs=2, batch_size=32)
    [2, 32]
    """
    return [check_positive_int(caller, arg, value) for arg, value in values.items()]


def check_positive_float(caller, arg_name, value):
    """``value`` as a ``float`` if it is a finite number > 0 (a learning rate)."""
    import math

    if not is_real(value) or not math.isfinite(value) or value <= 0:
        raise ValueError(
            f"{caller}: `{arg_name}` must be a finite number > 0. Received: {arg_name}={value!r}"
        )
    return float(value)


def check_cell_instance(layer_name, arg_name, value):
    """A cell class passed where an instance belongs gets an error that says so."""
    if isinstance(value, type):
        raise ValueError(
            f"{layer_name}: `{arg_name}` must be a cell instance, e.g. "
            f"{value.__name__}(32), not the class itself. Received: "
            f"{arg_name}={value!r}"
        )


def check_rate(layer_name, arg_name, value):
    if not is_real(value):
        raise ValueError(
            f"{layer_name}: `{arg_name}` must be a float in [0, 1). Received: {arg_name}={value!r}"
        )
    if not 0.0 <= float(value) < 1.0:
        raise ValueError(
            f"{layer_name}: `{arg_name}` must be a float in [0, 1). Received: {arg_name}={value!r}"
        )
    return float(value)


def check_choice(layer_name, arg_name, value, choices):
    if value not in choices:
        raise ValueError(
            f"{layer_name}: `{arg_name}` must be one of {sorted(choices)}. "
            f"Received: {arg_name}={value!r}"
        )
    return value


def check_rank(layer_name, arg_name, shape, rank, form):
    if shape is None or len(shape) != rank:
        raise ValueError(
            f"{layer_name}: `{arg_name}` must have rank {rank}, {form}. "
            f"Received shape {tuple(shape) if shape is not None else None}"
        )


def check_last_dim_known(layer_name, arg_name, shape):
    if shape[-1] is None:
        raise ValueError(
            f"{layer_name}: the last dimension of `{arg_name}` must be "
            f"defined. Received shape {tuple(shape)}"
        )


def check_float_dtype(layer_name, arg_name, dtype):
    dtype = backend.standardize_dtype(dtype)
    if "float" not in dtype:
        raise ValueError(
            f"{layer_name}: `{arg_name}` must be a floating-point tensor "
            f"(embed integer ids first, e.g. with keras.layers.Embedding). "
            f"Received dtype={dtype}"
        )


def concrete_value(x):
    """``x`` as a NumPy array when its values are known now, else ``None``.

    Values are known for NumPy inputs and eager tensors; they are not for
    symbolic Keras tensors, TensorFlow graph tensors (``tf.function``) and
    JAX tracers (``jit``, ``grad``, ``vmap``), so checks of values run
    eagerly and never break tracing.
    """
    import numpy as np

    if isinstance(x, (np.ndarray, np.generic, int, float, list, tuple)):
        return np.asarray(x)
    if backend.is_keras_tensor(x):
        return None
    name = backend.backend()
    if name == "tensorflow":
        import tensorflow as tf

        if not tf.executing_eagerly() or tf.is_symbolic_tensor(x):
            return None
    elif name == "jax":
        import jax

        if isinstance(x, jax.core.Tracer):
            return None
    elif name == "torch":
        import torch

        if torch.compiler.is_compiling():
            return None
    from keras import ops

    return ops.convert_to_numpy(x)


def check_token_ids(layer_name, arg_name, x, vocab_size, form):
    """``x`` must hold integer token ids in ``[0, vocab_size)``.

    The dtype is checked always; the values when they are concrete
    (``concrete_value``): out-of-range ids would otherwise embed silently as
    zero vectors.
    """
    dtype = backend.standardize_dtype(x.dtype)
    expected = f"an integer tensor {form} of token ids in [0, vocab_size={vocab_size})"
    if "int" not in dtype:
        raise ValueError(f"{layer_name}: `{arg_name}` must be {expected}. Received dtype={dtype}")
    values = concrete_value(x)
    if values is None or values.size == 0:
        return
    low, high = int(values.min()), int(values.max())
    if low < 0 or high >= vocab_size:
        bad = low if low < 0 else high
        raise ValueError(
            f"{layer_name}: `{arg_name}` must be {expected}. "
            f"Received an id of {bad} (ids range from {low} to {high})"
        )
