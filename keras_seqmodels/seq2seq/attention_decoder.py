"""A recurrent decoder conditioned on an encoder, with attention."""

import keras
from keras import ops

from keras_seqmodels.cells import GRUCell, LSTMCell
from keras_seqmodels.layers import Recurrent
from keras_seqmodels.utils import validation

CELLS = {"lstm": LSTMCell, "gru": GRUCell}
ATTENTION = ("multiplicative", "additive", "none")


@keras.saving.register_keras_serializable(package="keras_seqmodels")
class AttentionDecoder(keras.layers.Layer):
    """Recurrent decoder with global attention over the encoder states.

    With y(t-1) the previous target token, m the encoder summary and
    H = (h_1 .. h_S) the encoder states:

    s^0 = tanh(B m)                                   (initial state)
    s(t) = RNN([E y(t-1); m], s(t-1))                 (m only if context_input)
    a(t) = softmax_j(score(s(t), h_j)) over unpadded j
    score = s(t)^T W h_j                              (multiplicative, Luong)
          = v^T tanh(W_q s(t) + W_k h_j)              (additive, Bahdanau)
    c(t) = sum_j a_j(t) h_j,  o(t) = tanh(W_c [c(t); s(t)])
    p(y(t) | ...) = softmax(E' o(t) + b)             (E' = E with tied weights)

    The attention is Keras's own ``keras.layers.Attention`` (on projected
    keys: multiplicative) or ``keras.layers.AdditiveAttention`` (on projected
    queries and keys, its learned scale playing v); the recurrence is the
    package's ``Recurrent`` runner. New relative to Keras: the decoder is
    conditioned on the encoder both as initial state and (optionally) as an
    extra input at every step, and ``step`` runs one decoding step with the
    same weights, for in-graph greedy and beam search.

    Args:
        vocabulary_size: number of target ids (0 is padding).
        embedding_dim: width of the target embeddings.
        units: width of the decoder state.
        memory_dim: width of the encoder states it attends over.
        num_layers: stacked decoder layers.
        cell_type: ``"lstm"`` or ``"gru"``.
        attention: ``"multiplicative"``, ``"additive"`` or ``"none"``.
        context_input: feed the encoder summary as an extra input every step.
        tie_embeddings: share the output layer with the target embedding
            (through a projection to ``embedding_dim``).
        dropout: dropout rate on embeddings, between layers and before the
            output layer.

    Call arguments:
        target_ids: int ``(batch, target_time)``, the decoder inputs (teacher
            forcing: the target shifted right, starting with the start id).
        memory: the encoder's ``(states, summary, mask)``.
        training: whether dropout is active.
        return_attention: also return the attention weights.

    Returns:
        logits ``(batch, target_time, vocabulary_size)`` (and the attention
        weights ``(batch, target_time, source_time)``).

    Example:

    >>> import numpy as np
    >>> from keras_seqmodels.seq2seq import AttentionDecoder, RecurrentEncoder
    >>> enc = RecurrentEncoder(30, 8, 8)
    >>> dec = AttentionDecoder(40, 8, 16, memory_dim=16)
    >>> memory = enc(np.array([[5, 6, 7, 0]]))
    >>> dec(np.array([[1, 9, 9]]), memory).shape
    (1, 3, 40)

    Reference:
        Bahdanau, Cho & Bengio 2015 (additive attention); Luong, Pham &
        Manning 2015 (multiplicative attention, attentional hidden state);
        Press & Wolf 2017 (tied embeddings); Deep Learning, section 10.4.
    """

    def __init__(
        self,
        vocabulary_size,
        embedding_dim,
        units,
        memory_dim,
        num_layers=1,
        cell_type="lstm",
        attention="multiplicative",
        context_input=True,
        tie_embeddings=True,
        dropout=0.0,
        **kwargs,
    ):
        super().__init__(**kwargs)
        name = type(self).__name__
        self.vocabulary_size = validation.check_positive_int(
            name, "vocabulary_size", vocabulary_size
        )
        self.embedding_dim = validation.check_positive_int(
            name, "embedding_dim", embedding_dim
        )
        self.units = validation.check_positive_int(name, "units", units)
        self.memory_dim = validation.check_positive_int(name, "memory_dim", memory_dim)
        self.num_layers = validation.check_positive_int(name, "num_layers", num_layers)
        self.cell_type = validation.check_choice(name, "cell_type", cell_type, CELLS)
        self.attention = validation.check_choice(name, "attention", attention, ATTENTION)
        self.context_input = bool(context_input)
        self.tie_embeddings = bool(tie_embeddings)
        self.dropout = validation.check_rate(name, "dropout", dropout)

        self.embedding = keras.layers.Embedding(
            vocabulary_size, embedding_dim, name="embedding"
        )
        self.drop = keras.layers.Dropout(self.dropout)
        self.states_per_layer = 2 if cell_type == "lstm" else 1
        self.bridge = keras.layers.Dense(
            units * self.states_per_layer * num_layers, activation="tanh", name="bridge"
        )
        self.rnns = [
            Recurrent(
                CELLS[cell_type](units),
                return_sequences=True,
                return_state=True,
                name=f"rnn_{i}",
            )
            for i in range(num_layers)
        ]
        if attention == "multiplicative":
            self.key_projection = keras.layers.Dense(
                units, use_bias=False, name="key_projection"
            )
            self.query_projection = None
            self.attention_layer = keras.layers.Attention(name="attention")
        elif attention == "additive":
            self.key_projection = keras.layers.Dense(
                units, use_bias=False, name="key_projection"
            )
            self.query_projection = keras.layers.Dense(
                units, use_bias=True, name="query_projection"
            )
            self.attention_layer = keras.layers.AdditiveAttention(name="attention")
        if attention != "none":
            self.combine = keras.layers.Dense(units, activation="tanh", name="combine")
        if self.tie_embeddings:
            self.output_projection = keras.layers.Dense(
                embedding_dim, use_bias=False, name="output_projection"
            )
        else:
            self.output_layer = keras.layers.Dense(vocabulary_size, name="output")

    def build(self, target_ids_shape, memory_shape=None):
        # Named after call()'s first argument, so Keras can build the layer
        # when it is called on its own.
        target_shape = target_ids_shape
        batch = target_shape[0]
        self.embedding.build(target_shape)
        self.bridge.build((batch, self.memory_dim))
        width = self.embedding_dim + (self.memory_dim if self.context_input else 0)
        for rnn in self.rnns:
            rnn.build((batch, None, width))
            width = self.units
        if self.attention != "none":
            self.key_projection.build((batch, None, self.memory_dim))
            if self.query_projection is not None:
                self.query_projection.build((batch, None, self.units))
            self.attention_layer.build(
                [(batch, None, self.units), (batch, None, self.memory_dim),
                 (batch, None, self.units)]
            )
            self.combine.build((batch, None, self.units + self.memory_dim))
        if self.tie_embeddings:
            self.output_projection.build((batch, None, self.units))
            self.output_bias = self.add_weight(
                shape=(self.vocabulary_size,), initializer="zeros", name="output_bias"
            )
        else:
            self.output_layer.build((batch, None, self.units))

    # Pieces shared by teacher forcing and step-by-step decoding ----------

    def initial_state(self, memory):
        """Decoder states from the encoder summary: a flat list."""
        summary = memory[1]
        flat = self.bridge(summary)
        return list(ops.split(flat, self.states_per_layer * self.num_layers, axis=-1))

    def prepare_memory(self, memory):
        """Project the encoder states into attention keys once per sentence."""
        states, summary, mask = memory
        keys = self.key_projection(states) if self.attention != "none" else states
        return states, summary, mask, keys

    def _inputs(self, target_ids, summary, training):
        x = self.drop(self.embedding(target_ids), training=training)
        if self.context_input:
            ctx = ops.expand_dims(ops.cast(summary, x.dtype), 1)
            x = ops.concatenate(
                [x, ops.broadcast_to(ctx, ops.shape(x)[:2] + (self.memory_dim,))],
                axis=-1,
            )
        return x

    def _attend_and_predict(self, s, prepared, training):
        states, _, mask, keys = prepared
        weights = None
        o = s
        if self.attention != "none":
            query = s
            if self.query_projection is not None:
                query = self.query_projection(s)
            context, weights = self.attention_layer(
                [query, states, keys],
                mask=[None, mask],
                return_attention_scores=True,
                training=training,
            )
            o = self.combine(ops.concatenate([context, s], axis=-1))
        o = self.drop(o, training=training)
        if self.tie_embeddings:
            e = self.output_projection(o)
            table = ops.cast(self.embedding.embeddings, e.dtype)
            logits = ops.matmul(e, ops.transpose(table)) + ops.cast(
                self.output_bias, e.dtype
            )
        else:
            logits = self.output_layer(o)
        return logits, weights

    # Teacher forcing -----------------------------------------------------

    def call(self, target_ids, memory, training=False, return_attention=False):
        prepared = self.prepare_memory(memory)
        states = self.initial_state(memory)
        x = self._inputs(target_ids, prepared[1], training)
        n = self.states_per_layer
        for i, rnn in enumerate(self.rnns):
            out = rnn(x, initial_state=states[i * n : (i + 1) * n], training=training)
            x = out[0]
            if i + 1 < self.num_layers:
                x = self.drop(x, training=training)
        logits, weights = self._attend_and_predict(x, prepared, training)
        if return_attention:
            return logits, weights
        return logits

    # One decoding step ---------------------------------------------------

    def step(self, token_ids, states, prepared):
        """One step: ids ``(batch,)`` and flat states to logits ``(batch, V)``.

        Returns ``(logits, new_states, attention_weights)``; the weights are
        ``(batch, source_time)`` (None without attention).
        """
        x = self._inputs(ops.expand_dims(token_ids, 1), prepared[1], False)[:, 0]
        n = self.states_per_layer
        new_states = []
        for i, rnn in enumerate(self.rnns):
            x, s = rnn.cell(x, list(states[i * n : (i + 1) * n]))
            new_states.extend(s if isinstance(s, (list, tuple)) else [s])
        logits, weights = self._attend_and_predict(
            ops.expand_dims(x, 1), prepared, False
        )
        if weights is not None:
            weights = weights[:, 0]
        return logits[:, 0], new_states, weights

    def get_config(self):
        config = {
            "vocabulary_size": self.vocabulary_size,
            "embedding_dim": self.embedding_dim,
            "units": self.units,
            "memory_dim": self.memory_dim,
            "num_layers": self.num_layers,
            "cell_type": self.cell_type,
            "attention": self.attention,
            "context_input": self.context_input,
            "tie_embeddings": self.tie_embeddings,
            "dropout": self.dropout,
        }
        return {**super().get_config(), **config}
