"""The pixel-mnist network: an MNIST digit read as a sequence of 784 pixels.

Pixels ``(batch, 28, 28)`` 0-255 -> scaled by 1/255 -> 784 steps of one
value (raster order, or one fixed permutation, ``permutation_seed``) ->
Dense(units) -> ``blocks`` x residual block [LayerNorm -> recurrent layer ->
GLU -> Dropout, added to the block's input] -> LayerNorm -> mean (or last)
over the steps -> Dropout -> Dense(10) logits. With ``chrono``, the gated
layers' forget biases start at time constants up to 784 steps
(``chrono_biases``).

Only Keras's and the package's registered layers: the permutation is a
frozen 0/1 ``Dense`` (784 x 784, exact in float32 and float16: each output
is one pixel times 1 plus zeros), so a ``.keras`` file loads with
``keras.saving.load_model`` alone and exports as any Dense.
"""

import numpy as np

from keras_seqmodels.zoo.models.pixel_mnist.config import PIXELS

LAYERS = ("lstm", "mingru", "minlstm", "lru", "hawk")
POOLS = ("mean", "last")


def permutation(seed):
    """The fixed pixel order of the permuted task: ``order[t]`` is the raster
    index of the pixel read at step ``t``."""
    return np.random.default_rng(seed).permutation(PIXELS)


def permutation_matrix(order):
    """``P`` with ``(x @ P)[:, t] == x[:, order[t]]``."""
    matrix = np.zeros((PIXELS, PIXELS), "float32")
    matrix[order, np.arange(PIXELS)] = 1.0
    return matrix


def recurrent_layer(kind, units, name):
    """The recurrent layer of one block: ``(batch, steps, units)`` in and out."""
    from keras_seqmodels import layers

    if kind == "lstm":
        return layers.LSTM(units, return_sequences=True, name=name)
    from keras_seqmodels import linear_rnn  # the parallel-scan layers

    if kind == "mingru":
        return linear_rnn.MinGRU(units, return_sequences=True, name=name)
    if kind == "minlstm":
        return linear_rnn.MinLSTM(units, return_sequences=True, name=name)
    if kind == "lru":
        return linear_rnn.LRU(units, return_sequences=True, name=name)
    return linear_rnn.HawkBlock(units, return_sequences=True, name=name)


def chrono_biases(kind, bias, units, rng, t_max=PIXELS):
    """``bias`` of a gated layer with the chrono initialisation (Tallec and
    Ollivier 2018): each unit's forget gate starts at a time constant ``tau``
    drawn uniformly in ``[2, t_max]``, so that at the start of training some
    units keep what they read for hundreds of steps (a zero bias halves the
    state at every step). ``lstm`` (gates ``i, f, g, o``): ``b_f = log(tau - 1)``,
    ``b_i = -b_f``; ``minlstm`` (``f, i, h``): the same, so ``f / (f + i) = 1 -
    1 / tau``; ``mingru`` (``z, h``): ``b_z = -log(tau - 1)``, so ``1 - z = 1 - 1
    / tau``. Other layers are returned unchanged (the LRU and Hawk draw their
    own decay rates)."""
    bias = np.array(bias)
    log_tau = np.log(rng.uniform(1.0, t_max - 1.0, units))
    if kind == "lstm":
        bias[:units], bias[units : 2 * units] = -log_tau, log_tau
    elif kind == "minlstm":
        bias[:units], bias[units : 2 * units] = log_tau, -log_tau
    elif kind == "mingru":
        bias[:units] = -log_tau
    return bias


def check_options(config, owner="pixel-mnist"):
    """Named errors for options the argument parser cannot check."""
    if config["layer"] not in LAYERS:
        raise ValueError(
            f"{owner}: `layer` must be one of {', '.join(LAYERS)}. Received: "
            f"layer={config['layer']!r}"
        )
    if config["pool"] not in POOLS:
        raise ValueError(
            f"{owner}: `pool` must be one of {', '.join(POOLS)}. Received: pool={config['pool']!r}"
        )
    if not isinstance(config["blocks"], int) or config["blocks"] < 1:
        raise ValueError(
            f"{owner}: `blocks` must be a positive integer. Received: blocks={config['blocks']!r}"
        )


def build_model(config, name="pixel-mnist"):
    """The network of ``config`` (``config.CONFIG``'s keys; a
    ``permutation_seed`` key makes it read the pixels in that permutation)."""
    import keras

    check_options(config, name)
    units, dropout = config["units"], config["dropout"]
    inputs = keras.Input((28, 28), name="pixels")
    x = keras.layers.Rescaling(1.0 / 255.0, name="scale")(inputs)
    x = keras.layers.Reshape((PIXELS,), name="raster")(x)
    if config.get("permutation_seed") is not None:
        permute = keras.layers.Dense(PIXELS, use_bias=False, trainable=False, name="permutation")
        x = permute(x)
        permute.set_weights([permutation_matrix(permutation(config["permutation_seed"]))])
    x = keras.layers.Reshape((PIXELS, 1), name="steps")(x)
    x = keras.layers.Dense(units, name="encoder")(x)
    for i in range(1, config["blocks"] + 1):
        y = keras.layers.LayerNormalization(name=f"block_{i}_norm")(x)
        recurrent = recurrent_layer(config["layer"], units, f"block_{i}_{config['layer']}")
        y = recurrent(y)
        if config.get("chrono", False) and config["layer"] in ("lstm", "minlstm", "mingru"):
            *matrices, bias = recurrent.get_weights()
            rng = np.random.default_rng(config["seed"] * 100 + i)
            recurrent.set_weights([*matrices, chrono_biases(config["layer"], bias, units, rng)])
        value = keras.layers.Dense(units, name=f"block_{i}_value")(y)
        gate = keras.layers.Dense(units, activation="sigmoid", name=f"block_{i}_gate")(y)
        y = keras.layers.Multiply(name=f"block_{i}_glu")([value, gate])
        y = keras.layers.Dropout(dropout, name=f"block_{i}_dropout")(y)
        x = keras.layers.Add(name=f"block_{i}")([x, y])
    x = keras.layers.LayerNormalization(name="norm")(x)
    if config["pool"] == "mean":
        x = keras.layers.GlobalAveragePooling1D(name="pool")(x)
    else:
        x = keras.layers.Cropping1D((PIXELS - 1, 0), name="last_step")(x)
        x = keras.layers.Flatten(name="pool")(x)
    x = keras.layers.Dropout(dropout, name="dropout")(x)
    # float32 scores under a mixed-precision policy: the softmax loss needs them.
    outputs = keras.layers.Dense(10, name="scores", dtype="float32")(x)
    return keras.Model(inputs, outputs, name=name)


def trainable_parameters(model):
    """The number of trained weights (the frozen permutation left out)."""
    return int(sum(np.prod(v.shape) for v in model.trainable_weights))
