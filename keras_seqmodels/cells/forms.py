"""What a cell computes, declared once: its *form*.

A cell whose step is one of the standard recurrences declares it in its own
file, as a method ``form()`` returning a key of ``FORMS`` (``"elman"``,
``"gated"``, ``"lstm"``, ``"gru"``: reset gate before the recurrent
product, ``"gru_after"``: after it, as Keras's and cuDNN's GRU), whatever its
non-linearities. Every place that needs to know reads it here:

- ``fused_form(cell)``: the form with the standard non-linearities (tanh,
  sigmoid gates); the runner's kernel registry (``layers/kernels.py``,
  ``layers/fused_rnn.py``) and the backends' own kernels
  (``layers/backend_rnn.py``) run those equations;
- ``cell_form(cell)``: the form with any non-linearities, also of Keras's
  own ``LSTMCell``, ``GRUCell`` and ``SimpleRNNCell``; the ONNX writer turns
  it into a native ``LSTM`` / ``GRU`` / ``RNN`` node and the LiteRT writer
  into its fused LSTM and RNN ops (``export/onnx_recurrent.py``,
  ``export/litert_layers.py``).

Only a declaration of the cell's own class counts: a subclass may change
``step``, so it is generic (no form) unless it declares ``form()`` again.
The equations of each form are the step functions of ``cells/steps.py``,
which the cells and the fused loop both call. The weights are read by their
Keras names (``kernel``, ``recurrent_kernel``, ``bias``, and for the LSTM
``peephole_kernel``).
"""

# Width of the input projection, in units, of each form (its gate blocks).
FORMS = {"elman": 1, "gated": 2, "lstm": 4, "gru": 3, "gru_after": 3}


def declared_form(cell):
    """The key of ``FORMS`` that ``cell``'s own class declares (``form()``), or ``None``."""
    declare = type(cell).__dict__.get("form")
    form = declare(cell) if callable(declare) else None
    return form if form in FORMS else None


def _keras_form(cell):
    """The form of Keras's own cells (exact classes), or ``None``."""
    import keras

    kind = type(cell)
    if kind is keras.layers.LSTMCell:
        return "lstm"
    if kind is keras.layers.GRUCell:
        return "gru_after" if cell.reset_after else "gru"
    if kind is keras.layers.SimpleRNNCell:
        return "elman"
    return None


def cell_form(cell):
    """The form of ``cell``, with any non-linearities: its own declaration or,
    for Keras's ``LSTMCell``, ``GRUCell`` and ``SimpleRNNCell``, theirs.

    Example:

    >>> import keras
    >>> from keras_seqmodels.cells import GRUCell, LeakyCell
    >>> cell_form(GRUCell(3, activation="relu")), cell_form(LeakyCell(3))
    ('gru_after', None)
    >>> cell_form(keras.layers.GRUCell(3, reset_after=False))
    'gru'
    """
    return declared_form(cell) or _keras_form(cell)


def fused_form(cell):
    """The form the runner's fused kernels compute for ``cell``, or ``None``:
    its declared form with tanh (and sigmoid gates). Keras's own cells keep
    Keras's own kernels.

    Example:

    >>> from keras_seqmodels.cells import LSTMCell
    >>> fused_form(LSTMCell(3)), fused_form(LSTMCell(3, recurrent_activation="hard_sigmoid"))
    ('lstm', None)
    """
    import keras

    form = declared_form(cell)
    if form is None or cell.activation is not keras.activations.tanh:
        return None
    if form != "elman" and cell.recurrent_activation is not keras.activations.sigmoid:
        return None
    return form


__all__ = ["FORMS", "cell_form", "declared_form", "fused_form"]
