"""In-graph decoding: greedy, sampling and batched beam search.

Every search here is one ``keras.ops.while_loop`` over output positions, with
the batch (and the beams) vectorised inside each step. On the TensorFlow
backend they trace to stock ops only (``While``, ``TopKV2``, ``GatherV2``,
element-wise maths): no gather-tree or other custom kernel, so an exported
SavedModel runs on a plain TensorFlow Serving build. Back-pointers are
resolved by re-ordering the token history of the surviving beams at every
step (one gather over ``(batch, beam, max_length)``), which replaces the
gather-tree pass.

All three take a ``step_fn(tokens, state, memory) -> (logits, new_state)``:
``tokens`` is int ``(n,)``, ``state`` any nested structure of tensors with
leading dimension ``n`` (the decoder's recurrent states), ``memory`` a nested
structure with leading dimension ``n`` that does not change (the encoder's
states), and ``logits`` is ``(n, vocabulary)``.

Reference:
    Graves 2012 and Sutskever, Vinyals & Le 2014 (beam search for sequence
    transduction); Wu et al. 2016, section 7 (length normalisation
    ((5 + |Y|) / 6)^alpha); Fan, Lewis & Dauphin 2018 (top-k sampling).
"""

from keras import ops, tree

NEG_INF = -1e9


def _positions(max_length):
    return ops.arange(max_length, dtype="int32")


def _write(history, t, tokens, max_length):
    """history[..., t] = tokens, element-wise (no scatter)."""
    at_t = ops.equal(_positions(max_length), t)
    return ops.where(at_t, ops.expand_dims(tokens, -1), history)


def length_penalty(lengths, alpha):
    """GNMT length normalisation ``((5 + length) / 6) ** alpha``.

    Beam search divides a hypothesis' log-probability by this (Wu et al.
    2016), so that longer outputs are not ranked down merely for their length.

    Args:
        lengths: tensor of output lengths (end token included).
        alpha: strength; 0 gives 1 (no normalisation).

    Returns:
        A float32 tensor shaped as ``lengths``.

    Example:

    >>> from keras import ops
    >>> ops.convert_to_numpy(length_penalty([1, 7], 1.0)).tolist()
    [1.0, 2.0]
    """
    lengths = ops.cast(lengths, "float32")
    return ops.power((5.0 + lengths) / 6.0, alpha)


def _run_loop(body, loop_vars, max_length):
    def cond(t, *rest):
        finished = rest[-1]
        return ops.logical_and(
            ops.less(t, max_length), ops.logical_not(ops.all(finished))
        )

    return ops.while_loop(cond, body, loop_vars)


def _pick_by_sampling(logits, noise, temperature, top_k):
    logits = ops.cast(logits, "float32") / temperature
    if top_k:
        kth = ops.top_k(logits, top_k, sorted=True)[0][:, -1:]
        logits = ops.where(logits < kth, NEG_INF, logits)
    cdf = ops.cumsum(ops.softmax(logits, axis=-1), axis=-1)
    # Inverse-CDF draw: the first token whose cumulative probability
    # exceeds u. The uniforms are drawn before the loop, so this runs
    # inside jit-compiled loops on every backend.
    index = ops.sum(ops.cast(cdf < noise[:, None], "int32"), axis=-1)
    return ops.minimum(index, ops.shape(logits)[-1] - 1)


def _check_max_length(caller, max_length):
    """A Python ``max_length`` must be a non-negative int (tensors pass)."""
    if isinstance(max_length, bool) or (
        isinstance(max_length, (int, float)) and (max_length < 0 or max_length != int(max_length))
    ):
        raise ValueError(
            f"{caller}: `max_length` must be a non-negative integer. "
            f"Received: max_length={max_length!r}"
        )


def greedy_decode(
    step_fn,
    initial_state,
    memory,
    batch_size,
    start_id,
    end_id,
    max_length,
    pad_id=0,
    temperature=None,
    top_k=0,
    seed=None,
):
    """Greedy (or sampled) decoding until end-of-sequence or ``max_length``.

    y(t) = argmax_v p(v | y(<t), x); with ``temperature`` set, y(t) is drawn
    from softmax(logits / temperature) restricted to the ``top_k`` most
    likely tokens (all tokens if ``top_k`` is 0).

    Args:
        step_fn, initial_state, memory: see the module docstring.
        batch_size: number of sequences (int or scalar tensor).
        start_id: first decoder input; end_id: end-of-sequence id.
        max_length: most tokens to generate (int, or a scalar tensor on
            TensorFlow).
        pad_id: written after a sequence's end.
        temperature: None for greedy; a positive float to sample.
        top_k: with sampling, keep only the k most likely tokens.
        seed: int seed of the sampling noise.

    Returns:
        ``(tokens, lengths)``: int32 ``(batch, max_length)`` with the end id
        included and ``pad_id`` after it, and the number of tokens produced
        (end id included).

    Example:

    >>> import numpy as np
    >>> from keras import ops
    >>> table = np.log(np.array([[.1, .1, .8], [.1, .1, .8], [.1, .8, .1]]))
    >>> def step(tokens, state, memory):
    ...     return ops.take(ops.convert_to_tensor(table), tokens, axis=0), state
    >>> tokens, lengths = greedy_decode(step, [], [], 1, 0, 1, 5)
    >>> ops.convert_to_numpy(tokens).tolist(), int(lengths[0])
    ([[2, 1, 0, 0, 0]], 2)
    """
    _check_max_length("greedy_decode", max_length)
    sampling = temperature is not None
    if sampling:
        if not temperature > 0:
            raise ValueError(
                f"greedy_decode: `temperature` must be positive. "
                f"Received: temperature={temperature!r}"
            )
        from keras import random

        noise = random.uniform((max_length, batch_size), seed=seed)
    tokens = ops.full((batch_size,), start_id, dtype="int32")
    history = ops.full((batch_size, max_length), pad_id, dtype="int32")
    lengths = ops.zeros((batch_size,), dtype="int32")
    finished = ops.zeros((batch_size,), dtype="bool")

    def body(t, tokens, state, history, lengths, finished):
        logits, state = step_fn(tokens, state, memory)
        if sampling:
            chosen = _pick_by_sampling(logits, noise[t], temperature, top_k)
        else:
            chosen = ops.argmax(logits, axis=-1)
        chosen = ops.where(finished, pad_id, ops.cast(chosen, "int32"))
        history = _write(history, t, chosen, max_length)
        lengths = lengths + ops.cast(ops.logical_not(finished), "int32")
        finished = ops.logical_or(finished, ops.equal(chosen, end_id))
        return t + 1, chosen, state, history, lengths, finished

    out = _run_loop(
        body,
        (ops.convert_to_tensor(0, "int32"), tokens, initial_state, history,
         lengths, finished),
        max_length,
    )
    return out[3], out[4]


def sample_decode(step_fn, initial_state, memory, batch_size, start_id, end_id,
                  max_length, temperature=1.0, top_k=0, seed=None, pad_id=0):
    """Ancestral sampling with temperature and top-k; see ``greedy_decode``.

    y(t) is drawn from softmax(logits / temperature) restricted to the
    ``top_k`` most likely tokens (all if ``top_k`` is 0), until ``end_id`` or
    ``max_length``; the uniform numbers are drawn before the loop, so it runs
    inside compiled loops on every backend.

    Args:
        step_fn, initial_state, memory: see the module docstring.
        batch_size, start_id, end_id, max_length, pad_id: as in
            ``greedy_decode``.
        temperature: positive float; lower is closer to greedy.
        top_k: keep only the k most likely tokens (0: all).
        seed: int seed of the sampling noise.

    Returns:
        ``(tokens, lengths)`` as in ``greedy_decode``.

    Example:

    >>> import numpy as np
    >>> from keras import ops
    >>> table = np.log(np.array([[.1, .1, .8], [.1, .1, .8], [.1, .8, .1]]))
    >>> def step(tokens, state, memory):
    ...     return ops.take(ops.convert_to_tensor(table), tokens, axis=0), state
    >>> tokens, lengths = sample_decode(step, [], [], 4, 0, 1, 6, top_k=1, seed=0)
    >>> ops.convert_to_numpy(tokens)[0].tolist()  # top_k=1 is greedy
    [2, 1, 0, 0, 0, 0]
    """
    return greedy_decode(
        step_fn, initial_state, memory, batch_size, start_id, end_id,
        max_length, pad_id=pad_id, temperature=temperature, top_k=top_k,
        seed=seed,
    )


def tile_beams(structure, beam_size):
    """Repeat each row ``beam_size`` times: ``(n, ...)`` to ``(n * k, ...)``."""
    return tree.map_structure(
        lambda x: ops.repeat(x, beam_size, axis=0), structure
    )


def beam_search(
    step_fn,
    initial_state,
    memory,
    batch_size,
    start_id,
    end_id,
    max_length,
    beam_size=5,
    alpha=0.6,
    pad_id=0,
):
    """Batched beam search with an end-of-sequence stop and length penalty.

    Keeps, for every sentence, the ``beam_size`` prefixes of highest
    log-probability sum(log p(y(i) | y(<i), x)). A prefix that emitted
    ``end_id`` is finished: it keeps its score and only extends with
    ``pad_id`` at no cost. The search stops when every beam of every sentence
    is finished or after ``max_length`` tokens. Hypotheses are then ranked
    by score / ((5 + length) / 6) ** alpha (``alpha=0`` ranks by raw
    log-probability). With ``beam_size=1`` this is exactly greedy decoding.

    Args:
        step_fn, initial_state, memory: see the module docstring (given for
            ``batch_size`` rows; they are tiled to ``batch_size * beam_size``).
        batch_size, start_id, end_id, max_length, pad_id: as in
            ``greedy_decode``.
        beam_size: positive int, hypotheses kept per sentence (at most the
            vocabulary size).
        alpha: length-normalisation exponent.

    Returns:
        ``(tokens, scores, lengths)``: int32 ``(batch, beam, max_length)``,
        float32 normalised scores ``(batch, beam)`` in decreasing order, and
        int32 lengths ``(batch, beam)`` (end id included).

    Example:

    >>> import numpy as np
    >>> from keras import ops
    >>> table = np.log(np.array([[.1, .1, .8], [.1, .1, .8], [.1, .8, .1]]))
    >>> def step(tokens, state, memory):
    ...     return ops.take(ops.convert_to_tensor(table), tokens, axis=0), state
    >>> tokens, scores, _ = beam_search(step, [], [], 1, 0, 1, 4, beam_size=2)
    >>> ops.convert_to_numpy(tokens[0, 0]).tolist()
    [2, 1, 0, 0]
    """
    if isinstance(beam_size, bool) or not isinstance(beam_size, int) or beam_size < 1:
        raise ValueError(
            "beam_search: `beam_size` must be a positive integer. "
            f"Received: beam_size={beam_size!r}"
        )
    _check_max_length("beam_search", max_length)
    k = beam_size
    state = tile_beams(initial_state, k)
    memory = tile_beams(memory, k)
    tokens = ops.full((batch_size * k,), start_id, dtype="int32")
    history = ops.full((batch_size, k, max_length), pad_id, dtype="int32")
    # Only the first beam is live at the start, so the first step chooses
    # k different tokens rather than k copies of the best one.
    first = ops.cast(ops.equal(ops.arange(k), 0), "float32")
    scores = ops.tile(ops.expand_dims((1.0 - first) * NEG_INF, 0), (batch_size, 1))
    lengths = ops.zeros((batch_size, k), dtype="int32")
    finished = ops.zeros((batch_size, k), dtype="bool")
    row_offset = ops.expand_dims(ops.arange(batch_size, dtype="int32") * k, 1)

    def body(t, tokens, state, history, scores, lengths, finished):
        logits, state = step_fn(tokens, state, memory)
        vocab = logits.shape[-1]
        # Candidates per beam: the k best of a sentence's k * V extensions
        # are among its beams' own k best (scores add a constant per beam),
        # so two small top-k replace one over k * V (same result and order).
        c = k if vocab is None else min(k, vocab)
        logp = ops.log_softmax(ops.cast(logits, "float32"), axis=-1)
        top_logp, top_token = ops.top_k(logp, c, sorted=True)
        top_logp = ops.reshape(top_logp, (batch_size, k, c))
        top_token = ops.reshape(ops.cast(top_token, "int32"), (batch_size, k, c))
        # A finished hypothesis extends only with padding, at no cost.
        done = ops.expand_dims(finished, -1)
        pad_first = ops.where(ops.equal(ops.arange(c), 0), 0.0, NEG_INF)
        top_logp = ops.where(done, pad_first, top_logp)
        top_token = ops.where(done, pad_id, top_token)
        total = ops.reshape(ops.expand_dims(scores, -1) + top_logp, (batch_size, k * c))
        scores, flat_index = ops.top_k(total, k, sorted=True)
        flat_index = ops.cast(flat_index, "int32")
        parent = flat_index // c
        chosen = ops.take_along_axis(
            ops.reshape(top_token, (batch_size, k * c)), flat_index, axis=1
        )
        history = ops.take_along_axis(history, ops.expand_dims(parent, -1), axis=1)
        history = _write(history, t, chosen, max_length)
        was_finished = ops.take_along_axis(finished, parent, axis=1)
        lengths = ops.take_along_axis(lengths, parent, axis=1) + ops.cast(
            ops.logical_not(was_finished), "int32"
        )
        finished = ops.logical_or(was_finished, ops.equal(chosen, end_id))
        rows = ops.reshape(row_offset + parent, (-1,))
        state = tree.map_structure(lambda s: ops.take(s, rows, axis=0), state)
        return (t + 1, ops.reshape(chosen, (-1,)), state, history, scores,
                lengths, finished)

    out = _run_loop(
        body,
        (ops.convert_to_tensor(0, "int32"), tokens, state, history, scores,
         lengths, finished),
        max_length,
    )
    history, scores, lengths = out[3], out[4], out[5]
    normalised = scores / length_penalty(ops.maximum(lengths, 1), alpha)
    normalised, order = ops.top_k(normalised, k, sorted=True)
    history = ops.take_along_axis(history, ops.expand_dims(order, -1), axis=1)
    lengths = ops.take_along_axis(lengths, order, axis=1)
    return history, normalised, lengths
