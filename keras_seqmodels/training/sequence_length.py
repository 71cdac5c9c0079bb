"""The three ways an RNN decides the length of the sequence it generates.

1. An end-of-sequence symbol appended to every training sequence: generation
   stops when it is emitted (``append_end_symbol``, ``lengths_from_end_symbol``).
2. An extra Bernoulli output, "halt here", trained with cross-entropy on
   targets that are 1 at the last step (``halt_targets``; read back with
   ``lengths_from_halt``). Use a ``keras.layers.Dense(1, activation="sigmoid")``
   head and ``binary_crossentropy`` with ``sequence_mask`` as sample weights.
3. Predicting the length τ (e.g. a regression head on the conditioning
   input) and feeding the number of remaining steps τ - t as an extra input
   at every step (``remaining_steps``, ``append_remaining_steps``).

All functions are vectorised ``keras.ops`` (no loop over time or rows) and
accept integer ``lengths`` of shape ``(batch,)``.

Reference: Deep Learning, section 10.2.3.
"""

from keras import ops


def sequence_mask(lengths, time):
    """``(batch, time)`` boolean, True at steps t < length."""
    steps = ops.arange(time)
    return ops.expand_dims(steps, 0) < ops.expand_dims(ops.cast(lengths, steps.dtype), 1)


def append_end_symbol(ids, lengths, end_id, pad_id=0):
    """Write ``end_id`` right after each sequence and ``pad_id`` after that.

    Args:
        ids: ``(batch, time)`` integer symbols; position ``lengths[b]`` must
            exist (leave one free step of padding).
        lengths: ``(batch,)`` the true lengths (without the end symbol).

    Returns:
        ``(batch, time)`` ids; the new lengths are ``lengths + 1``.
    """
    time = ids.shape[1]
    steps = ops.expand_dims(ops.arange(time), 0)
    lengths = ops.expand_dims(ops.cast(lengths, steps.dtype), 1)
    out = ops.where(steps < lengths, ids, ops.cast(pad_id, ids.dtype))
    return ops.where(steps == lengths, ops.cast(end_id, ids.dtype), out)


def lengths_from_end_symbol(ids, end_id):
    """Length up to and including the first ``end_id`` (``time`` if none)."""
    time = ids.shape[1]
    is_end = ops.cast(ops.equal(ids, end_id), "int32")
    # Steps before the first end symbol have a zero running count.
    before = ops.sum(ops.cast(ops.cumsum(is_end, axis=1) == 0, "int32"), axis=1)
    return ops.minimum(before + 1, time)


def halt_targets(lengths, time):
    """``(batch, time, 1)`` float targets: 1 at step length-1, else 0."""
    steps = ops.expand_dims(ops.arange(time), 0)
    last = ops.expand_dims(ops.cast(lengths, steps.dtype) - 1, 1)
    return ops.expand_dims(ops.cast(steps == last, "float32"), -1)


def lengths_from_halt(halt_probabilities, threshold=0.5):
    """Length of each generated sequence: the first step whose halt
    probability exceeds ``threshold``, plus one (``time`` if none)."""
    p = halt_probabilities
    if len(p.shape) == 3:
        p = p[..., 0]
    time = p.shape[1]
    fired = ops.cast(p > threshold, "int32")
    before = ops.sum(ops.cast(ops.cumsum(fired, axis=1) == 0, "int32"), axis=1)
    return ops.minimum(before + 1, time)


def remaining_steps(lengths, time, normalize=None):
    """``(batch, time, 1)``: τ - t at step t (0 past the end), optionally
    divided by ``normalize`` (e.g. the maximum length) to keep it O(1)."""
    steps = ops.expand_dims(ops.arange(time), 0)
    tau = ops.expand_dims(ops.cast(lengths, steps.dtype), 1)
    left = ops.cast(ops.maximum(tau - steps, 0), "float32")
    if normalize:
        left = left / float(normalize)
    return ops.expand_dims(left, -1)


def append_remaining_steps(inputs, lengths, normalize=None):
    """Concatenate ``remaining_steps`` to ``(batch, time, features)`` inputs."""
    extra = ops.cast(remaining_steps(lengths, inputs.shape[1], normalize), inputs.dtype)
    return ops.concatenate([inputs, extra], axis=-1)
