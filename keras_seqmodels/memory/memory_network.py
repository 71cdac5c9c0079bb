"""End-to-end memory network (MemN2N)."""

import keras
from keras import ops

from keras_seqmodels.memory.addressing import masked_softmax
from keras_seqmodels.utils import validation


def position_encoding(mask, embed_dim, dtype="float32", length=None):
    """MemN2N position-encoding weights of each word of each sentence.

    The paper's form (``length=None``): l_kj = (1 - j/J) - (k/d) (1 - 2 j/J),
    with j = 1..J the word's position, J the sentence's number of words and
    k = 1..d the embedding dimension.

    The authors' code's form (``length=J``, a fixed J for every sentence,
    facebook/MemNN ``MemN2N-babi-matlab/build_model.m``):
    l_kj = 1 + 4 (k - (d+1)/2) (j - (J+1)/2) / (d J).

    Args:
        mask: ``(..., length)`` with 1 for words, 0 for padding (words first).
        embed_dim: d.
        length: None (the paper's form) or the fixed J of the code's form.

    Returns:
        ``(..., length, embed_dim)``, zero at padding.
    """
    mask = ops.cast(mask, dtype)
    positions = ops.cast(ops.arange(1, mask.shape[-1] + 1), dtype)
    k = ops.cast(ops.arange(1, embed_dim + 1), dtype)
    if length is None:
        j = ops.expand_dims(positions / ops.maximum(ops.sum(mask, axis=-1, keepdims=True), 1.0), -1)
        weights = (1.0 - j) - (k / embed_dim) * (1.0 - 2.0 * j)
    else:
        weights = 1.0 + ops.expand_dims(_code_slope(positions, length), -1) * _code_scale(
            k, embed_dim
        )
    return weights * ops.expand_dims(mask, -1)


def _code_scale(k, embed_dim):
    """a_k = 4 (k - (d+1)/2) / d of the code's l_kj = 1 + a_k b_j."""
    return 4.0 * (k - (embed_dim + 1) / 2.0) / embed_dim


def _code_slope(j, length):
    """b_j = (j - (J+1)/2) / J of the code's l_kj = 1 + a_k b_j."""
    return (j - (length + 1) / 2.0) / length


@keras.saving.register_keras_serializable(package="keras_seqmodels")
class MemoryNetwork(keras.layers.Layer):
    """End-to-end memory network with K hops and adjacent weight tying.

    With embedding matrices E_0..E_K (adjacent tying: A^k = E_{k-1},
    C^k = E_k, question embedding B = E_0, answer matrix W = E_K^T) and
    temporal embeddings T_0..T_K of the memory slots:

        u^1 = Σ_j l_j ⊙ B q_j
        m_i = Σ_j l_j ⊙ A^k x_ij + T_A^k(i),   c_i = Σ_j l_j ⊙ C^k x_ij + T_C^k(i)
        p = softmax(u^k · m),   o^k = Σ_i p_i c_i,   u^{k+1} = u^k + o^k
        logits = W u^{K+1}

    where l_j are the position-encoding weights (``position_encoding``; plain
    bag of words when disabled).

    ``position_form="code"`` and ``mask_empty_slots=False`` give the
    authors' MATLAB code (facebook/MemNN ``MemN2N-babi-matlab``) instead of
    the paper's text: there a time word is appended to each sentence, so
    J = sentence_length + 1 for every sentence and question, and the
    temporal embedding T(i) is weighted like a word at position J
    (``l_J ⊙ T(i)``); an empty memory slot is a zero vector that still takes
    a share of each hop's softmax (score 0). During *linear start* the hop softmax is
    removed (p = u·m); ``enable_softmax()`` (or the ``attention_softmax``
    weight set to 1) re-inserts it, as in the paper's training schedule.

    New relative to Keras: Keras has no memory network layer; this one adds
    position and temporal encoding, tied embeddings, linear start and masking
    of empty memory slots.

    Args:
        vocab_size: positive integer, number of token ids (0 is padding).
        embed_dim: positive integer, d.
        memory_size: positive integer, number of memory slots (sentences).
        hops: positive integer, K (default 3).
        position_encoding: weight words by position (default True); else a
            bag of words.
        temporal_encoding: add a learned embedding of the slot index
            (default True).
        linear_start: start with the hop softmax removed (default False).
        return_attention: also return the attention weights of every hop.
        embeddings_initializer: initializer of the embeddings, default
            ``RandomNormal(stddev=0.1)`` as in the paper.
        position_form: ``"paper"`` (default): l_kj = (1 - j/J) - (k/d)(1 -
            2j/J) with J the sentence's own number of words; ``"code"``:
            the authors' code's l_kj = 1 + 4 (k - (d+1)/2)(j - (J+1)/2)/(dJ)
            with J = sentence_length (+ 1 for the time word with temporal
            encoding), the same J for every sentence and the question, and
            the temporal embedding weighted by l_J. Needs a static
            sentence length.
        mask_empty_slots: True (default): empty slots get no attention;
            False: an empty slot (also one absent from a ``stories`` with
            fewer than ``memory_size`` slots) is a zero memory, without
            temporal embedding, with score 0 in each hop's softmax (the
            authors' code).

    Call arguments:
        inputs: a list ``[stories, queries]``: ``stories`` int
            ``(batch, memory_size, sentence_length)`` with slot 0 the most
            recent sentence, ``queries`` int ``(batch, query_length)``.
            Token id 0 is padding; a slot of padding only is an empty slot
            and gets no attention. Ids must be integers in
            ``[0, vocab_size)``: float tensors raise a ``ValueError``, and
            so do out-of-range ids whenever their values are known (eager
            calls; inside ``jit``/``tf.function`` they are not checked).
            ``stories`` may have fewer than ``memory_size`` slots (the
            oldest slots then are simply absent, which gives the same
            result as passing them empty): batches of short stories can be
            cut to save compute.

    Returns:
        ``logits`` ``(batch, vocab_size)`` over answer words (use
        ``from_logits=True``), and with ``return_attention=True`` also the
        attention weights ``(batch, hops, memory_size)``.

    Example:

    >>> import numpy as np, keras_seqmodels as ks
    >>> net = ks.memory.MemoryNetwork(vocab_size=20, embed_dim=8, memory_size=5)
    >>> stories = np.random.randint(0, 20, (2, 5, 4))
    >>> queries = np.random.randint(1, 20, (2, 3))
    >>> tuple(net([stories, queries]).shape)
    (2, 20)

    Reference:
        Sukhbaatar, Szlam, Weston & Fergus, "End-To-End Memory Networks",
        NeurIPS 2015, sections 2 and 4.
    """

    def __init__(
        self,
        vocab_size,
        embed_dim,
        memory_size,
        hops=3,
        position_encoding=True,
        temporal_encoding=True,
        linear_start=False,
        return_attention=False,
        embeddings_initializer=None,
        position_form="paper",
        mask_empty_slots=True,
        **kwargs,
    ):
        super().__init__(**kwargs)
        name = type(self).__name__
        self.vocab_size = validation.check_positive_int(name, "vocab_size", vocab_size)
        self.embed_dim = validation.check_positive_int(name, "embed_dim", embed_dim)
        self.memory_size = validation.check_positive_int(name, "memory_size", memory_size)
        self.hops = validation.check_positive_int(name, "hops", hops)
        self.position_encoding = bool(position_encoding)
        self.temporal_encoding = bool(temporal_encoding)
        self.linear_start = bool(linear_start)
        self.return_attention = bool(return_attention)
        if embeddings_initializer is None:
            embeddings_initializer = keras.initializers.RandomNormal(stddev=0.1)
        self.embeddings_initializer = keras.initializers.get(embeddings_initializer)
        if position_form not in ("paper", "code"):
            raise ValueError(
                f"{name}: position_form must be 'paper' or 'code'. Received: {position_form!r}"
            )
        self.position_form = position_form
        self.mask_empty_slots = bool(mask_empty_slots)

    def _check_shapes(self, stories_shape, queries_shape):
        name = self.name
        validation.check_rank(
            name, "stories", stories_shape, 3, "(batch, memory_size, sentence_length)"
        )
        validation.check_rank(name, "queries", queries_shape, 2, "(batch, query_length)")
        if self.position_encoding and self.position_form == "code" and stories_shape[2] is None:
            raise ValueError(
                f"{name}: position_form='code' needs a static sentence length "
                f"(axis 2 of `stories`). Received shape {tuple(stories_shape)}"
            )
        if stories_shape[1] is not None and stories_shape[1] > self.memory_size:
            raise ValueError(
                f"{name}: `stories` must have at most memory_size="
                f"{self.memory_size} slots on axis 1. Received shape "
                f"{tuple(stories_shape)}"
            )

    def build(self, input_shape):
        if not isinstance(input_shape, (list, tuple)) or len(input_shape) != 2:
            raise ValueError(
                f"{self.name}: inputs must be a list [stories, queries]. "
                f"Received input shape {input_shape}"
            )
        self._check_shapes(*input_shape)
        self.embeddings = self.add_weight(
            shape=(self.hops + 1, self.vocab_size, self.embed_dim),
            name="embeddings",
            initializer=self.embeddings_initializer,
        )
        if self.temporal_encoding:
            self.temporal_embeddings = self.add_weight(
                shape=(self.hops + 1, self.memory_size, self.embed_dim),
                name="temporal_embeddings",
                initializer=self.embeddings_initializer,
            )
        self.attention_softmax = self.add_weight(
            shape=(),
            name="attention_softmax",
            initializer="zeros" if self.linear_start else "ones",
            trainable=False,
        )

    def enable_softmax(self):
        """End linear start: put the softmax back into every hop."""
        self.attention_softmax.assign(1.0)

    def _code_length(self, stories):
        """J of the code's position encoding: the sentence length (+ 1 time word)."""
        return stories.shape[-1] + (1 if self.temporal_encoding else 0)

    def _encode(self, tokens, embeddings, code_length=None):
        """Σ_j l_j ⊙ E x_j for every embedding matrix at once.

        With l_kj = a_k + (j/J) b_k, a_k = 1 - k/d, b_k = 2k/d - 1, the sum is
        a ⊙ (c E) + b ⊙ (c' E) with c the bag of words and c' the bag weighted
        by j/J: two dense matrix products instead of a gather of every word
        (whose gradient is a scatter-add). The code's form (``code_length``
        J) is l_kj = 1 + a_k b_j: c E + a ⊙ (c' E), c' weighted by b_j.
        """
        dtype = self.compute_dtype
        mask = ops.cast(ops.not_equal(tokens, 0), dtype)
        one_hot = ops.one_hot(ops.cast(tokens, "int32"), self.vocab_size, dtype=dtype)
        one_hot = one_hot * ops.expand_dims(mask, -1)
        bag = ops.sum(one_hot, axis=-2)
        encoded = self._project(bag, embeddings)
        if not self.position_encoding:
            return encoded
        position = ops.cast(ops.arange(1, tokens.shape[-1] + 1), dtype)
        k = ops.cast(ops.arange(1, self.embed_dim + 1), dtype)
        if code_length is not None:
            slope = _code_slope(position, code_length)
            weighted = ops.sum(one_hot * ops.expand_dims(slope, -1), axis=-2)
            scale = _code_scale(k, self.embed_dim)
            return encoded + scale * self._project(weighted, embeddings)
        length = ops.maximum(ops.sum(mask, axis=-1, keepdims=True), 1.0)
        weighted = ops.sum(one_hot * ops.expand_dims(position / length, -1), axis=-2)
        k = k / self.embed_dim
        return (1.0 - k) * encoded + (2.0 * k - 1.0) * self._project(weighted, embeddings)

    def _project(self, bags, embeddings):
        """Bags ``(batch, [slots,] vocab)`` times every E_k: ``(k, batch, [slots,] d)``."""
        if len(bags.shape) == 3:
            return ops.einsum("bsv,kvd->kbsd", bags, embeddings)
        return ops.einsum("bv,kvd->kbd", bags, embeddings)

    def call(self, inputs):
        stories, queries = inputs
        self._check_shapes(stories.shape, queries.shape)
        for arg, x, form in (
            ("stories", stories, "(batch, memory_size, sentence_length)"),
            ("queries", queries, "(batch, query_length)"),
        ):
            validation.check_token_ids(self.name, arg, x, self.vocab_size, form)
        dtype = self.compute_dtype
        embeddings = ops.cast(self.embeddings, dtype)
        code_length = None
        if self.position_encoding and self.position_form == "code":
            code_length = self._code_length(stories)
        # (hops + 1, batch, memory_size, embed_dim): memory under every E_k.
        memories = self._encode(stories, embeddings, code_length)
        slot_mask = ops.any(ops.not_equal(stories, 0), axis=-1)
        if self.temporal_encoding:
            temporal = ops.cast(self.temporal_embeddings, dtype)
            slots = stories.shape[1]
            if slots is None:
                slots = ops.shape(stories)[1]
            temporal = ops.expand_dims(temporal[:, :slots], 1)
            if code_length is not None:  # the time word, at position J
                k = ops.cast(ops.arange(1, self.embed_dim + 1), dtype)
                slope = _code_slope(float(code_length), code_length)
                temporal = temporal * (1.0 + slope * _code_scale(k, self.embed_dim))
            if not self.mask_empty_slots:  # an empty slot holds no time word
                temporal = temporal * ops.cast(ops.expand_dims(slot_mask, -1), dtype)
            memories = memories + temporal
        u = self._encode(queries, embeddings[:1], code_length)[0]
        gate = ops.cast(self.attention_softmax, dtype)
        attention = []
        for k in range(self.hops):
            scores = ops.einsum("bsd,bd->bs", memories[k], u)
            if self.mask_empty_slots:
                p_soft = masked_softmax(scores, slot_mask)
                p_linear = scores * ops.cast(slot_mask, scores.dtype)
            else:
                p_soft = self._softmax_with_absent_slots(scores)
                p_linear = scores
            p = gate * p_soft + (1.0 - gate) * p_linear
            u = u + ops.einsum("bs,bsd->bd", p, memories[k + 1])
            attention.append(p)
        logits = ops.matmul(u, ops.transpose(embeddings[self.hops]))
        if self.return_attention:
            return logits, ops.stack(attention, axis=1)
        return logits

    def _softmax_with_absent_slots(self, scores):
        """Softmax over ``memory_size`` slots, the absent ones scoring 0."""
        slots = scores.shape[-1]
        if slots is None:
            slots = ops.shape(scores)[-1]
        absent = ops.cast(self.memory_size - slots, scores.dtype)
        top = ops.maximum(ops.max(scores, axis=-1, keepdims=True), 0.0)
        weights = ops.exp(scores - top)
        total = ops.sum(weights, axis=-1, keepdims=True) + absent * ops.exp(-top)
        return weights / total

    def compute_output_shape(self, input_shape):
        batch = input_shape[0][0]
        logits = (batch, self.vocab_size)
        if self.return_attention:
            return logits, (batch, self.hops, self.memory_size)
        return logits

    def get_config(self):
        config = {
            "vocab_size": self.vocab_size,
            "embed_dim": self.embed_dim,
            "memory_size": self.memory_size,
            "hops": self.hops,
            "position_encoding": self.position_encoding,
            "temporal_encoding": self.temporal_encoding,
            "linear_start": self.linear_start,
            "return_attention": self.return_attention,
            "embeddings_initializer": keras.initializers.serialize(self.embeddings_initializer),
            "position_form": self.position_form,
            "mask_empty_slots": self.mask_empty_slots,
        }
        return {**super().get_config(), **config}
