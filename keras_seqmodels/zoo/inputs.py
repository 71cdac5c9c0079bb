"""Which Python values a zoo task's ``predict`` takes, checked before any model runs.

Three kinds cover the zoo (``Task.input_kind``):

- ``"text"``: a ``str``, or a list (any iterable but a mapping or set) of
  ``str``; a 1-D NumPy array of strings too.
- ``"array"``: numbers of one shape, as nested lists or a NumPy array of a
  boolean, integer or floating dtype (the task checks the shape and range).
- ``"pair"``: one ``(story, question)`` tuple or ``{"story": ...,
  "question": ...}`` dict, or a list of them (the task checks each).

``check(kind, inputs, batch)`` returns ``(problem, inputs)``: ``problem`` is
``None`` for a value of the kind (and ``inputs`` the value to use: a list
where an iterable was given) or a short phrase naming what was received.
"""

import numbers

EXPECTED = {
    "text": "a string or a list of strings",
    "array": "numbers of one shape (nested lists or a NumPy array of numbers)",
    "pair": 'a (story, question) pair or {"story": ..., "question": ...}, or a list of them',
}


def describe(value):
    """A short phrase for a received value: ``None``, ``bytes (decode ...)``,
    ``the number 5``, ``a NumPy array of dtype int64``, ``a dict``..."""
    import numpy as np

    if value is None:
        return "None"
    if isinstance(value, (bytes, bytearray)):
        return f"{type(value).__name__} (decode them to str first)"
    if isinstance(value, bool):
        return f"the boolean {value}"
    if isinstance(value, numbers.Number):
        return f"the number {value!r}"
    if isinstance(value, np.ndarray):
        return f"a NumPy array of dtype {value.dtype} and shape {value.shape}"
    name = type(value).__name__
    return f"an {name}" if name[:1].lower() in "aeiou" else f"a {name}"


def check(kind, inputs, batch=False):
    """``(problem, inputs)`` for ``inputs`` given to ``predict`` (``batch``:
    to ``predict_batch``, which takes a list) of a task of ``kind``."""
    if kind not in EXPECTED:
        raise ValueError(f"input kind must be one of {sorted(EXPECTED)}. Received: {kind!r}")
    return {"text": _text, "array": _array, "pair": _pair}[kind](inputs, batch)


def _scalar_like(value):
    return (
        value is None
        or isinstance(value, (bytes, bytearray, numbers.Number, dict, set, frozenset))
        or not hasattr(value, "__iter__")
    )


def _text(inputs, batch):
    import numpy as np

    if isinstance(inputs, str):
        if batch:
            return "a single string where a list of strings is taken", None
        return None, inputs
    if isinstance(inputs, np.ndarray):
        if inputs.dtype.kind != "U" or inputs.ndim != 1:
            return describe(inputs), None
        return None, [str(s) for s in inputs]
    if _scalar_like(inputs):
        return describe(inputs), None
    items = list(inputs)
    for i, item in enumerate(items):
        if not isinstance(item, str):
            return f"item {i} is {describe(item)}", None
    return None, items


def _array(inputs, batch):
    import numpy as np

    if isinstance(inputs, (str, bytes, bytearray, dict, set, frozenset)) or inputs is None:
        return describe(inputs), None
    try:
        values = np.asarray(inputs)
    except (TypeError, ValueError):
        return "values that are not numbers of one shape", None
    if values.dtype.kind not in "biuf":
        if values.dtype.kind == "O":
            return "values that are not numbers of one shape", None
        return f"values of dtype {values.dtype}", None
    if values.ndim == 0:
        return describe(inputs), None
    return None, inputs


def _pair(inputs, batch):
    import numpy as np

    one = isinstance(inputs, (dict, str)) or (
        isinstance(inputs, tuple) and len(inputs) == 2 and isinstance(inputs[0], str)
    )
    if one and not batch:
        return None, inputs  # the task checks its parts
    if one or isinstance(inputs, np.ndarray) or _scalar_like(inputs):
        return describe(inputs), None
    return None, list(inputs)
