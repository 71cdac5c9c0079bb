"""Request-size limits that an exported signature checks inside its graph.

Each exporter documents the largest request its ``serving_default`` accepts
(batch size, bytes per string, tokens, tree depth and nodes, image shape,
sequence length) and checks it in TensorFlow before the work that grows with
it, so that a served model refuses an oversized request with one
``InvalidArgumentError`` whose message names the limit, instead of running
out of memory or time. The checks are ``tf.debugging`` assertions that the
following ops depend on (``guard``), so they run first in the graph.

    >>> import tensorflow as tf
    >>> text = tf.constant(["a b", "c"])
    >>> text = guard([text], [at_most("my-model", "strings per request", tf.size(text), 8)])[0]
    >>> text.shape
    TensorShape([2])
"""


def at_most(model, what, value, limit):
    """An assertion that ``value <= limit``, failing with a message naming both.

    Args:
        model: the served model's name, the start of the message.
        what: the quantity limited, e.g. ``"strings per request"``.
        value: a scalar integer tensor.
        limit: the documented bound (a Python int).

    Returns:
        The assertion op (``None`` when executing eagerly, where it has run).
    """
    import tensorflow as tf

    return tf.debugging.assert_less_equal(
        tf.cast(value, tf.int64),
        tf.constant(int(limit), tf.int64),
        message=f"{model}: request too large: at most {limit:,} {what} (a limit of this export)",
    )


def exactly(model, what, value, expected):
    """An assertion that ``value == expected`` (e.g. an image side)."""
    import tensorflow as tf

    return tf.debugging.assert_equal(
        tf.cast(value, tf.int64),
        tf.constant(int(expected), tf.int64),
        message=f"{model}: wrong request shape: {what} must be {expected}",
    )


def checked_shape(model, name, x, shape, form=None):
    """``x``, refused unless its full shape is ``shape`` (``None``: any size).

    A loaded SavedModel does not check a request against its signature's
    ``TensorSpec``: a string of rank 0 or 2 sent to a ``(batch,)`` input
    runs into the graph and fails deep inside (``ConcatOp : Can't
    concatenate scalars``), and a numeric one may run reshaped. Every
    exported signature therefore passes each input through this check
    first. It compares the request's run-time shape, written out as text,
    with ``shape``: that is what TensorFlow's graph optimizer cannot fold
    away (it folds ``tf.rank`` and ``tf.size(tf.shape(x))`` to the
    signature's rank, so that such a check never fails). ``tf.ensure_shape``
    then gives the result the static shape for the ops that follow.

    Args:
        model: the served model's name, the start of the message.
        name: the input's name in the signature, e.g. ``"text"``.
        x: the request tensor.
        shape: the expected shape, e.g. ``[None]`` or ``[None, 28, 28]``.
        form: optional words for the expected shape, e.g. ``"(batch,), one
            string per text"`` (default: ``shape`` as a tuple, ``None`` for
            any size).

    Returns:
        ``x``, with the static shape ``shape``, after the check has run.

    Raises:
        tf.errors.InvalidArgumentError: (when the graph runs) ``"{model}:
            wrong request shape: `{name}` must have shape {form}. Received
            shape [1,1]"``.

    Example:

    >>> import tensorflow as tf
    >>> checked_shape("tagger", "text", tf.constant(["a b", "c"]), [None]).shape
    TensorShape([2])
    >>> checked_shape("tagger", "text", tf.constant([["a"]]), [None])
    Traceback (most recent call last):
    ...
    tensorflow.python.framework.errors_impl.InvalidArgumentError: ...
    """
    import tensorflow as tf

    dims = tf.TensorShape(shape).as_list()
    if form is None:
        form = "(" + ", ".join(map(str, dims)) + ("," if len(dims) == 1 else "") + ")"
    pattern = ",".join(r"\d+" if d is None else str(d) for d in dims)
    received = tf.strings.reduce_join(
        tf.strings.as_string(tf.shape(x, out_type=tf.int64)), separator=","
    )
    message = f"{model}: wrong request shape: `{name}` must have shape {form}. Received shape ["
    check = tf.debugging.Assert(
        tf.strings.regex_full_match(received, pattern),
        [tf.strings.join([message, received, "]"])],
    )
    return tf.ensure_shape(guard([x], [check])[0], dims)


def guard(tensors, checks):
    """``tensors``, made to depend on ``checks`` (so that these run first)."""
    import tensorflow as tf

    checks = [c for c in checks if c is not None]
    if not checks:
        return list(tensors)
    with tf.control_dependencies(checks):
        return [tf.identity(t) for t in tensors]


def string_checks(model, strings, max_batch, max_bytes, noun="strings"):
    """Checks of a ``(batch,)`` string input: batch size and bytes per string."""
    import tensorflow as tf

    return [
        at_most(model, f"{noun} per request", tf.size(strings), max_batch),
        at_most(
            model,
            f"bytes per {noun.rstrip('s')}",
            max_or_zero(tf.strings.length(strings)),
            max_bytes,
        ),
    ]


def max_or_zero(values):
    """The largest element of an integer tensor, 0 when it is empty."""
    import tensorflow as tf

    flat = tf.reshape(values, [-1])
    return tf.reduce_max(tf.concat([tf.zeros([1], flat.dtype), flat], 0))


def merge_limits(caller, defaults, limits):
    """The defaults with a user's overrides; unknown names or non-positive values refused."""
    out = dict(defaults)
    for key, value in (limits or {}).items():
        if key not in defaults:
            raise ValueError(
                f"{caller}: unknown limit {key!r}; the limits are {sorted(defaults)}"
            )
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(
                f"{caller}: limit {key!r} must be a positive integer. Received: {value!r}"
            )
        out[key] = value
    return out
