"""End-to-end memory network (MemN2N)."""

import keras
from keras import ops

from keras_seqmodels.memory.addressing import masked_softmax
from keras_seqmodels.utils import validation


def position_encoding(mask, embed_dim, dtype="float32"):
    """MemN2N position-encoding weights of each word of each sentence.

    l_kj = (1 - j/J) - (k/d) (1 - 2 j/J), with j = 1..J the word's position,
    J the sentence's number of words and k = 1..d the embedding dimension.

    Args:
        mask: ``(..., length)`` with 1 for words, 0 for padding (words first).
        embed_dim: d.

    Returns:
        ``(..., length, embed_dim)``, zero at padding.
    """
    mask = ops.cast(mask, dtype)
    length = ops.maximum(ops.sum(mask, axis=-1, keepdims=True), 1.0)
    j = ops.cast(ops.arange(1, mask.shape[-1] + 1), dtype) / length
    k = ops.cast(ops.arange(1, embed_dim + 1), dtype) / embed_dim
    j = ops.expand_dims(j, -1)
    weights = (1.0 - j) - k * (1.0 - 2.0 * j)
    return weights * ops.expand_dims(mask, -1)


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
    bag of words when disabled). During *linear start* the hop softmax is
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

    def _check_shapes(self, stories_shape, queries_shape):
        name = self.name
        validation.check_rank(
            name, "stories", stories_shape, 3, "(batch, memory_size, sentence_length)"
        )
        validation.check_rank(name, "queries", queries_shape, 2, "(batch, query_length)")
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

    def _encode(self, tokens, embeddings):
        """Σ_j l_j ⊙ E x_j for every embedding matrix at once.

        With l_kj = a_k + (j/J) b_k, a_k = 1 - k/d, b_k = 2k/d - 1, the sum is
        a ⊙ (c E) + b ⊙ (c' E) with c the bag of words and c' the bag weighted
        by j/J: two dense matrix products instead of a gather of every word
        (whose gradient is a scatter-add).
        """
        dtype = self.compute_dtype
        mask = ops.cast(ops.not_equal(tokens, 0), dtype)
        one_hot = ops.one_hot(ops.cast(tokens, "int32"), self.vocab_size, dtype=dtype)
        one_hot = one_hot * ops.expand_dims(mask, -1)
        bag = ops.sum(one_hot, axis=-2)
        encoded = self._project(bag, embeddings)
        if not self.position_encoding:
            return encoded
        length = ops.maximum(ops.sum(mask, axis=-1, keepdims=True), 1.0)
        position = ops.cast(ops.arange(1, tokens.shape[-1] + 1), dtype) / length
        weighted = ops.sum(one_hot * ops.expand_dims(position, -1), axis=-2)
        k = ops.cast(ops.arange(1, self.embed_dim + 1), dtype) / self.embed_dim
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
        embeddings = ops.cast(self.embeddings, self.compute_dtype)
        # (hops + 1, batch, memory_size, embed_dim): memory under every E_k.
        memories = self._encode(stories, embeddings)
        if self.temporal_encoding:
            temporal = ops.cast(self.temporal_embeddings, self.compute_dtype)
            slots = stories.shape[1]
            if slots is None:
                slots = ops.shape(stories)[1]
            memories = memories + ops.expand_dims(temporal[:, :slots], 1)
        u = self._encode(queries, embeddings[:1])[0]
        slot_mask = ops.any(ops.not_equal(stories, 0), axis=-1)
        gate = ops.cast(self.attention_softmax, self.compute_dtype)
        attention = []
        for k in range(self.hops):
            scores = ops.einsum("bsd,bd->bs", memories[k], u)
            p_soft = masked_softmax(scores, slot_mask)
            p_linear = scores * ops.cast(slot_mask, scores.dtype)
            p = gate * p_soft + (1.0 - gate) * p_linear
            u = u + ops.einsum("bs,bsd->bd", p, memories[k + 1])
            attention.append(p)
        logits = ops.matmul(u, ops.transpose(embeddings[self.hops]))
        if self.return_attention:
            return logits, ops.stack(attention, axis=1)
        return logits

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
        }
        return {**super().get_config(), **config}
