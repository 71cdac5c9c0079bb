"""Linear-chain conditional random field: forward-algorithm loss, Viterbi."""

import keras
from keras import ops

from keras_seqmodels._compat import backend_rnn
from keras_seqmodels.utils import validation

_NEG = -1e4  # a "minus infinity" that keeps logsumexp and its gradient finite


def _prepare(potentials, mask):
    """Time-major float potentials, a float mask and the 'first step' flag."""
    batch, time = ops.shape(potentials)[0], ops.shape(potentials)[1]
    if mask is None:
        mask = ops.ones((batch, time), dtype="bool")
    mask = ops.cast(mask, "bool")
    first = ops.equal(ops.arange(time), 0)
    first = ops.broadcast_to(ops.expand_dims(first, 0), (batch, time))
    return mask, first


def crf_log_norm(potentials, mask, transitions, start, end):
    """log Z: the forward algorithm over the unmasked prefix of each row.

    alpha(0) = start + e(0);  alpha(t)_j = logsumexp_i(alpha(t-1)_i + A_ij) + e(t)_j;
    log Z = logsumexp_j(alpha(T-1)_j + end_j).  Rows with no unmasked step
    give 0.

    Args:
        potentials: float ``(batch, time, num_tags)`` emission scores e.
        mask: boolean ``(batch, time)`` (padding at the end) or None.
        transitions: ``(num_tags, num_tags)`` scores A_ij of tag i → tag j.
        start, end: ``(num_tags,)`` scores of the first and last tag.

    Returns:
        ``(batch,)`` log partition function.
    """
    mask, first = _prepare(potentials, mask)
    dtype = potentials.dtype
    inputs = ops.concatenate([potentials, ops.expand_dims(ops.cast(first, dtype), -1)], axis=-1)
    trans = ops.expand_dims(ops.cast(transitions, dtype), 0)
    start = ops.cast(start, dtype)

    def step(x_t, states):
        alpha = states[0]
        e_t, is_first = x_t[:, :-1], x_t[:, -1:]
        moved = ops.logsumexp(ops.expand_dims(alpha, -1) + trans, axis=1)
        new = ops.where(is_first > 0, start + e_t, moved + e_t)
        return new, [new]

    init = ops.zeros_like(potentials[:, 0, :])
    _, _, states = backend_rnn(
        step,
        inputs,
        [init],
        mask=mask,
        zero_output_for_mask=True,
        return_all_outputs=False,
    )
    log_z = ops.logsumexp(states[0] + ops.cast(end, dtype), axis=-1)
    nonempty = ops.any(mask, axis=1)
    return ops.where(nonempty, log_z, ops.zeros_like(log_z))


def crf_sequence_score(potentials, tags, mask, transitions, start, end):
    """Score of a tag sequence: start + Σ e(t)[y_t] + Σ A[y_{t-1}, y_t] + end.

    Only the unmasked prefix of each row counts. Returns ``(batch,)``.
    """
    mask, _ = _prepare(potentials, mask)
    dtype = potentials.dtype
    tags = ops.cast(tags, "int32")
    m = ops.cast(mask, dtype)
    emit = ops.take_along_axis(potentials, ops.expand_dims(tags, -1), axis=-1)
    score = ops.sum(emit[..., 0] * m, axis=1)
    num_tags = ops.shape(potentials)[-1]
    pair = tags[:, :-1] * num_tags + tags[:, 1:]
    trans = ops.take(ops.reshape(ops.cast(transitions, dtype), (-1,)), pair)
    score = score + ops.sum(trans * m[:, 1:], axis=1)
    lengths = ops.sum(ops.cast(mask, "int32"), axis=1)
    nonempty = ops.cast(lengths > 0, dtype)
    first_tag = tags[:, 0]
    last_tag = ops.take_along_axis(tags, ops.expand_dims(ops.maximum(lengths - 1, 0), -1), axis=1)[
        :, 0
    ]
    score = score + nonempty * (
        ops.take(ops.cast(start, dtype), first_tag) + ops.take(ops.cast(end, dtype), last_tag)
    )
    return score


def crf_log_likelihood(potentials, tags, mask, transitions, start, end):
    """log p(tags | potentials) = score(tags) - log Z, ``(batch,)``."""
    return crf_sequence_score(potentials, tags, mask, transitions, start, end) - crf_log_norm(
        potentials, mask, transitions, start, end
    )


def crf_decode(potentials, mask, transitions, start, end):
    """Viterbi decoding inside the graph (no Python loop over time).

    delta(0) = start + e(0); delta(t)_j = max_i(delta(t-1)_i + A_ij) + e(t)_j
    with back-pointers argmax_i; the best path is read backwards from
    argmax_j(delta(T-1)_j + end_j).

    Returns:
        ``(tags, best_score)``: int32 ``(batch, time)`` with 0 at padding, and
        the ``(batch,)`` score of the best path.
    """
    mask, first = _prepare(potentials, mask)
    dtype = potentials.dtype
    num_tags = ops.shape(potentials)[-1]
    inputs = ops.concatenate([potentials, ops.expand_dims(ops.cast(first, dtype), -1)], axis=-1)
    trans = ops.expand_dims(ops.cast(transitions, dtype), 0)
    start = ops.cast(start, dtype)
    identity = ops.arange(num_tags, dtype="int32")

    def step(x_t, states):
        delta = states[0]
        e_t, is_first = x_t[:, :-1], x_t[:, -1:]
        scores = ops.expand_dims(delta, -1) + trans
        moved = ops.max(scores, axis=1)
        pointers = ops.cast(ops.argmax(scores, axis=1), dtype)
        new = ops.where(is_first > 0, start + e_t, moved + e_t)
        return pointers, [new]

    init = ops.zeros_like(potentials[:, 0, :])
    _, pointers, states = backend_rnn(
        step,
        inputs,
        [init],
        mask=mask,
        zero_output_for_mask=True,
        return_all_outputs=True,
    )
    pointers = ops.cast(pointers, "int32")
    # Padded steps point every tag to itself, so the backward pass carries
    # the last real tag through the padding unchanged.
    pointers = ops.where(ops.expand_dims(mask, -1), pointers, identity)
    final = states[0] + ops.cast(end, dtype)
    best_last = ops.cast(ops.argmax(final, axis=-1), "int32")
    best_score = ops.max(final, axis=-1)

    def back(p_t, states):
        tag = states[0]
        previous = ops.take_along_axis(p_t, ops.expand_dims(tag, -1), axis=-1)
        return tag, [previous[:, 0]]

    _, path, _ = backend_rnn(
        back, pointers, [best_last], go_backwards=True, return_all_outputs=True
    )
    path = ops.flip(path, axis=1)
    tags = ops.where(mask, path, ops.zeros_like(path))
    nonempty = ops.any(mask, axis=1)
    best_score = ops.where(nonempty, best_score, ops.zeros_like(best_score))
    return tags, best_score


@keras.saving.register_keras_serializable(package="keras_seqmodels")
class CRF(keras.layers.Layer):
    """Linear-chain CRF output layer: Viterbi tags out, forward-algorithm loss.

    For emission scores e(t) (a ``Dense(num_tags)`` over a sequence encoder)
    and learned transition scores A, start and end scores s and f, a tag
    sequence y has score

        S(y) = s[y_0] + Σ_t e(t)[y_t] + Σ_{t≥1} A[y_{t-1}, y_t] + f[y_{T-1}]

    and probability p(y) = exp S(y) / Z, Z summed over all sequences by the
    forward algorithm. ``call`` returns the Viterbi path argmax_y S(y),
    computed in the graph (so an exported model decodes by itself). Given
    gold ``tags``, ``call`` also adds the mean negative log-likelihood
    -log p(tags) to the layer's losses, so a model whose only loss is the CRF
    compiles with ``loss=None``.

    To train with ``compile(...)`` / ``fit(x, y)`` on integer tag targets
    (with metrics, ``validation_data`` and ``evaluate``), wrap the model that
    computes the potentials in ``keras_seqmodels.tagging.CRFTagger``: a
    ``keras.Model(x, CRF(k)(potentials))`` cannot take ``y`` because Keras's
    losses see only the decoded tags, not the potentials and transitions.

    New relative to Keras: Keras 3 has no CRF layer (TensorFlow Addons' CRF
    was TF-only and is unmaintained); this one uses ``keras.ops`` only and
    runs on every backend.

    Args:
        num_tags: positive integer, number of tags K.
        transitions_initializer: initializer of A, start and end scores
            (default ``"zeros"``).
        **kwargs: base layer arguments.

    Call arguments:
        potentials: float ``(batch, time, num_tags)`` emission scores.
        tags: optional int ``(batch, time)`` gold tags; adds the loss.
        mask: optional boolean ``(batch, time)``; padding must be at the end
            of each row. Usually propagated from ``Embedding(mask_zero=True)``.

    Returns:
        int32 ``(batch, time)`` best tags, 0 at padded steps.

    Example:

    >>> import numpy as np, keras_seqmodels as ks
    >>> crf = ks.tagging.CRF(3)
    >>> crf(np.random.rand(2, 5, 3).astype("float32")).shape
    (2, 5)

    Reference:
        Lafferty, McCallum & Pereira 2001, "Conditional Random Fields";
        Lample et al. 2016, "Neural Architectures for Named Entity
        Recognition" (BiLSTM-CRF); Jurafsky & Martin, SLP3 ch. 8 (Viterbi).
    """

    def __init__(self, num_tags, transitions_initializer="zeros", **kwargs):
        super().__init__(**kwargs)
        self.num_tags = validation.check_positive_int(self.name, "num_tags", num_tags)
        self.transitions_initializer = keras.initializers.get(transitions_initializer)
        self.supports_masking = True

    def build(self, potentials_shape, tags_shape=None):
        validation.check_rank(
            self.name, "potentials", potentials_shape, 3, "(batch, time, num_tags)"
        )
        if potentials_shape[-1] not in (None, self.num_tags):
            raise ValueError(
                f"{self.name}: the last dimension of `potentials` must be "
                f"num_tags={self.num_tags}. Received shape {tuple(potentials_shape)}"
            )
        k = self.num_tags
        init = self.transitions_initializer
        self.transitions = self.add_weight(shape=(k, k), initializer=init, name="transitions")
        self.start_transitions = self.add_weight(
            shape=(k,), initializer=init, name="start_transitions"
        )
        self.end_transitions = self.add_weight(shape=(k,), initializer=init, name="end_transitions")

    def _params(self):
        return self.transitions, self.start_transitions, self.end_transitions

    def _check(self, potentials, mask):
        """Shapes and dtype of a call (build checked only the first shape)."""
        shape = tuple(potentials.shape)
        validation.check_rank(self.name, "potentials", shape, 3, "(batch, time, num_tags)")
        if shape[-1] not in (None, self.num_tags):
            raise ValueError(
                f"{self.name}: the last dimension of `potentials` must be "
                f"num_tags={self.num_tags}. Received shape {shape}"
            )
        validation.check_float_dtype(self.name, "potentials", potentials.dtype)
        if mask is not None:
            mask_shape = tuple(ops.shape(mask))
            if len(mask_shape) != 2 or any(
                isinstance(a, int) and isinstance(b, int) and a != b
                for a, b in zip(mask_shape, shape[:2])
            ):
                raise ValueError(
                    f"{self.name}: `mask` must have shape (batch, time) = {shape[:2]}. "
                    f"Received shape {mask_shape}"
                )
        # Nothing to score: an empty batch or zero steps (known statically).
        return 0 in shape[:2]

    def log_likelihood(self, potentials, tags, mask=None):
        """log p(tags | potentials) per row, ``(batch,)``."""
        if self._check(potentials, mask):
            return ops.zeros(tuple(ops.shape(potentials))[:1], "float32")
        return crf_log_likelihood(potentials, tags, mask, *self._params())

    def decode(self, potentials, mask=None):
        """Viterbi path and its score: ``(tags, best_score)``."""
        if self._check(potentials, mask):
            shape = tuple(ops.shape(potentials))
            return ops.zeros(shape[:2], "int32"), ops.zeros(shape[:1], potentials.dtype)
        return crf_decode(potentials, mask, *self._params())

    def call(self, potentials, tags=None, mask=None):
        self._check(potentials, mask)
        # The recursions run in float32 (or float64) even under mixed
        # precision: logsumexp over long chains loses too much in float16.
        if keras.backend.standardize_dtype(potentials.dtype) != "float64":
            potentials = ops.cast(potentials, "float32")
        if tags is not None:
            self.add_loss(-ops.mean(self.log_likelihood(potentials, tags, mask)))
        return self.decode(potentials, mask)[0]

    def compute_output_shape(self, potentials_shape, tags_shape=None):
        return tuple(potentials_shape[:2])

    def compute_output_spec(self, potentials, tags=None, mask=None):
        return keras.KerasTensor(tuple(potentials.shape[:2]), dtype="int32")

    def compute_mask(self, potentials, tags=None, mask=None):
        return mask

    def get_config(self):
        return {
            **super().get_config(),
            "num_tags": self.num_tags,
            "transitions_initializer": keras.initializers.serialize(self.transitions_initializer),
        }
