"""Weights of PyTorch's and Keras's recurrent layers, in the layout of the package's cells.

The package's ``LSTMCell``, ``GRUCell`` and ``ElmanCell`` keep Keras's layout,
so Keras weights carry over unchanged; PyTorch stores transposed matrices, a
different GRU gate order and two biases. The mapping, for hidden size ``H``
and one layer ``k`` and direction (``_reverse`` for the backward one) of a
``torch.nn.LSTM`` / ``GRU`` / ``RNN`` state dict:

======================  ===========================  ====================================
PyTorch                 package cell                 mapping
======================  ===========================  ====================================
``nn.LSTM``             ``LSTMCell(H)``              kernel = ``weight_ih_lk.T``
                                                     (gates i, f, g, o in both);
                                                     recurrent_kernel = ``weight_hh_lk.T``;
                                                     bias = ``bias_ih_lk + bias_hh_lk``
``nn.GRU``              ``GRUCell(H)``               gates r, z, n become u (= z), r, h:
                        (``reset_after=True``)       blocks reordered [1, 0, 2];
                                                     kernel = ``weight_ih_lk.T``,
                                                     recurrent_kernel = ``weight_hh_lk.T``
                                                     (reordered); bias = ``stack([bias_ih,
                                                     bias_hh])`` (reordered), shape (2, 3H):
                                                     the recurrent bias of n stays inside
                                                     the reset gate, as in PyTorch
``nn.RNN``              ``ElmanCell(H)``             kernel = ``weight_ih_lk.T``,
                        (``activation`` = the        recurrent_kernel = ``weight_hh_lk.T``,
                        RNN's ``nonlinearity``)      bias = ``bias_ih_lk + bias_hh_lk``
======================  ===========================  ====================================

A layer built with ``bias=False`` has no bias entries; the cell then needs
``use_bias=False``. LSTM projections (``proj_size > 0``) have no counterpart.
From Keras, ``keras.layers.LSTM`` / ``LSTMCell`` map to ``LSTMCell``,
``GRU`` / ``GRUCell`` to ``GRUCell`` with the same ``reset_after``, and
``SimpleRNN`` / ``SimpleRNNCell`` to ``ElmanCell``, each weight unchanged.
"""

import numpy as np

from keras_seqmodels.cells.elman_cell import ElmanCell
from keras_seqmodels.cells.gru_cell import GRUCell
from keras_seqmodels.cells.lstm_cell import LSTMCell

_TORCH_KINDS = {4: "lstm", 3: "gru", 1: "rnn"}
_TORCH_GRU_ORDER = [1, 0, 2]  # torch (r, z, n) -> (z, r, n), Keras's order


def _to_numpy(value):
    if hasattr(value, "detach"):  # a torch tensor, without importing torch
        value = value.detach().cpu().numpy()
    return np.asarray(value)


def _reorder(array, order, axis):
    blocks = np.split(array, len(order), axis=axis)
    return np.concatenate([blocks[i] for i in order], axis=axis)


def weights_from_torch(state_dict, layer=0, go_backwards=False, prefix="", kind=None):
    """One layer and direction of a PyTorch recurrent layer, in ``set_weights`` form.

    See the module docstring for the mapping. The result goes to
    ``LSTMCell(H)``, ``GRUCell(H)`` (reset after, the default) or
    ``ElmanCell(H)`` built for the layer's input width; a layer without
    biases (``bias=False``) needs a cell with ``use_bias=False``.

    Args:
        state_dict: ``torch.nn.LSTM`` / ``GRU`` / ``RNN`` module, or its
            ``state_dict()`` (tensors or NumPy arrays), or a larger model's
            state dict with ``prefix`` naming the recurrent layer.
        layer: which stacked layer (``_l{layer}``), default 0.
        go_backwards: the backward direction of a bidirectional layer
            (the ``_reverse`` entries), for a cell run with
            ``go_backwards=True``.
        prefix: prepended to every key, e.g. ``"encoder.rnn."``.
        kind: ``"lstm"``, ``"gru"`` or ``"rnn"``; by default inferred from
            the number of gate blocks (4, 3 or 1).

    Returns:
        A list of NumPy arrays: ``[kernel, recurrent_kernel, bias]`` (no
        ``bias`` for a layer without biases).

    Raises:
        ValueError: missing entries, an unknown ``kind``, or an LSTM with
            projections.

    Example:

    >>> import numpy as np, keras_seqmodels as ks
    >>> rng = np.random.default_rng(0)
    >>> sd = {"weight_ih_l0": rng.normal(size=(9, 4)),  # a torch.nn.GRU(4, 3)
    ...       "weight_hh_l0": rng.normal(size=(9, 3)),
    ...       "bias_ih_l0": rng.normal(size=9), "bias_hh_l0": rng.normal(size=9)}
    >>> [w.shape for w in ks.cells.weights_from_torch(sd)]
    [(4, 9), (3, 9), (2, 9)]
    >>> cell = ks.cells.GRUCell(3)
    >>> cell.build((None, 4)); cell.set_weights(ks.cells.weights_from_torch(sd))
    """
    name = "weights_from_torch"
    if hasattr(state_dict, "state_dict") and callable(state_dict.state_dict):
        state_dict = state_dict.state_dict()
    if not hasattr(state_dict, "keys"):
        raise ValueError(
            f"{name}: `state_dict` must be a torch.nn.LSTM/GRU/RNN module or a "
            f"mapping of its weights. Received: state_dict={type(state_dict).__name__}"
        )
    if isinstance(layer, bool) or not isinstance(layer, (int, np.integer)) or layer < 0:
        raise ValueError(
            f"{name}: `layer` must be a non-negative integer. Received: layer={layer!r}"
        )
    suffix = f"_l{int(layer)}" + ("_reverse" if go_backwards else "")
    keys = {k: f"{prefix}{k}{suffix}" for k in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")}
    if f"{prefix}weight_hr{suffix}" in state_dict:
        raise ValueError(
            f"{name}: LSTMs with projections (proj_size > 0) have no counterpart "
            f"in the package's cells. Received an entry {prefix}weight_hr{suffix}"
        )
    missing = [keys[k] for k in ("weight_ih", "weight_hh") if keys[k] not in state_dict]
    if missing:
        available = sorted(k for k in state_dict.keys() if k.startswith(prefix))[:8]
        raise ValueError(
            f"{name}: no entries {missing} in `state_dict` (layer={layer}, "
            f"go_backwards={go_backwards}, prefix={prefix!r}). Available keys: {available}"
        )
    w_ih = _to_numpy(state_dict[keys["weight_ih"]])
    w_hh = _to_numpy(state_dict[keys["weight_hh"]])
    units = w_hh.shape[1]
    blocks = w_ih.shape[0] // units
    if kind is None:
        if w_ih.shape[0] % units or blocks not in _TORCH_KINDS:
            raise ValueError(
                f"{name}: cannot tell the layer type from weight_ih of shape "
                f"{w_ih.shape} and weight_hh of shape {w_hh.shape}; pass "
                "kind='lstm', 'gru' or 'rnn'"
            )
        kind = _TORCH_KINDS[blocks]
    if kind not in ("lstm", "gru", "rnn"):
        raise ValueError(
            f"{name}: `kind` must be one of ['gru', 'lstm', 'rnn']. Received: kind={kind!r}"
        )
    expected = {"lstm": 4, "gru": 3, "rnn": 1}[kind] * units
    if w_ih.shape[0] != expected or w_hh.shape != (expected, units):
        raise ValueError(
            f"{name}: a {kind} layer of hidden size {units} has weight_ih of "
            f"shape ({expected}, input_size) and weight_hh of shape "
            f"({expected}, {units}). Received {w_ih.shape} and {w_hh.shape}"
        )
    has_bias = keys["bias_ih"] in state_dict
    b_ih = _to_numpy(state_dict[keys["bias_ih"]]) if has_bias else None
    b_hh = _to_numpy(state_dict[keys["bias_hh"]]) if has_bias else None
    kernel, recurrent = w_ih.T, w_hh.T
    if kind == "gru":
        kernel = _reorder(kernel, _TORCH_GRU_ORDER, axis=1)
        recurrent = _reorder(recurrent, _TORCH_GRU_ORDER, axis=1)
        if has_bias:
            bias = np.stack([b_ih, b_hh])
            bias = _reorder(bias, _TORCH_GRU_ORDER, axis=1)
    elif has_bias:
        bias = b_ih + b_hh
    weights = [np.ascontiguousarray(kernel), np.ascontiguousarray(recurrent)]
    if has_bias:
        weights.append(np.ascontiguousarray(bias))
    return weights


def _keras_cell(layer):
    import keras

    cell = getattr(layer, "cell", layer)
    kind = None
    for cls, name in (
        (keras.layers.LSTMCell, "lstm"),
        (keras.layers.GRUCell, "gru"),
        (keras.layers.SimpleRNNCell, "rnn"),
    ):
        if isinstance(cell, cls):
            kind = name
    if kind is None:
        raise ValueError(
            "weights_from_keras: `layer` must be a keras.layers.LSTM, GRU or "
            "SimpleRNN layer (or its cell). Received: "
            f"layer={type(layer).__name__}"
        )
    if not cell.built:
        raise ValueError(
            f"weights_from_keras: `layer` ({type(layer).__name__}) has no "
            "weights yet; build it (call it on an input) first"
        )
    return cell, kind


def weights_from_keras(layer):
    """Weights of a Keras ``LSTM`` / ``GRU`` / ``SimpleRNN`` for the package's cell.

    The package's cells keep Keras's layout, so this checks the layer type
    and returns its cell's weights unchanged: ``[kernel, recurrent_kernel,
    bias]`` (no bias with ``use_bias=False``). Use ``cell_from_keras`` to get
    a matching cell with these weights in one step.

    Args:
        layer: a built ``keras.layers.LSTM``, ``GRU`` or ``SimpleRNN``, or
            the corresponding ``*Cell``.

    Returns:
        A list of NumPy arrays.

    Example:

    >>> import keras, numpy as np, keras_seqmodels as ks
    >>> gru = keras.layers.GRU(3)
    >>> _ = gru(np.zeros((1, 2, 4), "float32"))
    >>> [w.shape for w in ks.cells.weights_from_keras(gru)]
    [(4, 9), (3, 9), (2, 9)]
    """
    cell, _ = _keras_cell(layer)
    return [np.asarray(w) for w in cell.get_weights()]


def cell_from_keras(layer):
    """The package's cell equal to a Keras recurrent layer, built, with its weights.

    ``keras.layers.LSTM`` gives an ``LSTMCell``, ``GRU`` a ``GRUCell`` with
    the same ``reset_after``, ``SimpleRNN`` an ``ElmanCell``; units,
    activations, ``use_bias``, dropout rates and dtype policy are copied.
    Wrapped in ``keras_seqmodels.layers.Recurrent`` with the Keras layer's
    ``return_sequences`` / ``go_backwards``, it gives the same outputs.

    Args:
        layer: a built ``keras.layers.LSTM``, ``GRU`` or ``SimpleRNN``, or
            the corresponding ``*Cell``.

    Returns:
        A built ``LSTMCell``, ``GRUCell`` or ``ElmanCell``.

    Example:

    >>> import keras, numpy as np, keras_seqmodels as ks
    >>> lstm = keras.layers.LSTM(3)
    >>> x = np.random.rand(2, 5, 4).astype("float32")
    >>> expected = lstm(x)
    >>> ours = ks.layers.Recurrent(ks.cells.cell_from_keras(lstm))
    >>> bool(np.allclose(ours(x), expected, atol=1e-6))
    True
    """
    import keras

    cell, kind = _keras_cell(layer)
    common = dict(
        units=cell.units,
        activation=keras.activations.serialize(cell.activation),
        use_bias=cell.use_bias,
        dropout=cell.dropout,
        recurrent_dropout=cell.recurrent_dropout,
        dtype=cell.dtype_policy,
    )
    if kind == "lstm":
        ours = LSTMCell(
            recurrent_activation=keras.activations.serialize(cell.recurrent_activation),
            unit_forget_bias=cell.unit_forget_bias,
            **common,
        )
    elif kind == "gru":
        ours = GRUCell(
            recurrent_activation=keras.activations.serialize(cell.recurrent_activation),
            reset_after=cell.reset_after,
            **common,
        )
    else:
        ours = ElmanCell(**common)
    ours.build((None, cell.kernel.shape[0]))
    ours.set_weights(weights_from_keras(cell))
    return ours
