"""Argument and input checks shared by every layer of the package.

Each check raises an error that names the layer, the argument and the
expected form, and says what it received.
"""

from keras import backend


def check_positive_int(layer_name, arg_name, value):
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ValueError(
            f"{layer_name}: `{arg_name}` must be a positive integer. Received: {arg_name}={value!r}"
        )
    return value


def check_rate(layer_name, arg_name, value):
    if isinstance(value, bool) or not isinstance(value, (int, float)):
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
