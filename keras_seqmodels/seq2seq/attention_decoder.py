"""A recurrent decoder conditioned on an encoder, with attention."""

import keras
from keras import ops

from keras_seqmodels._compat import backend_rnn
from keras_seqmodels.cells import registry
from keras_seqmodels.layers import Recurrent
from keras_seqmodels.seq2seq import decoding
from keras_seqmodels.utils import validation

# The names `cell_type` accepts; saved models rebuild their cells from it
# through the package's table, where "gru" stays the reset-before GRU.
CELLS = registry.subset("lstm", "gru")
ATTENTION = ("multiplicative", "additive", "none")
SAMPLING = ("sample", "argmax")


@keras.saving.register_keras_serializable(package="keras_seqmodels")
class AttentionDecoder(keras.layers.Layer):
    """Recurrent decoder with global attention over the encoder states.

    With y(t-1) the previous target token, m the encoder summary and
    H = (h_1 .. h_S) the encoder states:

    s^0 = tanh(B m)                                   (initial state)
    s(t) = RNN([E y(t-1); m; o(t-1)], s(t-1))         (m only if context_input,
                                                      o(t-1) only if input_feeding)
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

    Input feeding (``input_feeding=True``, Luong et al. 2015, section 3.3):
    the previous attentional vector o(t-1) (o(0) = 0) is concatenated to the
    next step's input, so the decoder knows what it attended to before. The
    recurrence then passes through the attention, so teacher forcing runs
    the whole step (RNN, attention, output layer) in one backend time loop
    instead of one RNN loop followed by attention over all steps at once.

    Scheduled sampling (``scheduled_sampling=True``, Bengio et al. 2015): in
    training, the input at step t > 1 is the ground-truth y(t-1) with
    probability ε (the non-trainable ``teacher_probability`` weight, 1 at
    first) and otherwise the decoder's own token for position t-1, drawn from
    softmax(logits(t-1)) (``sampling="sample"``) or its argmax
    (``sampling="argmax"``); no gradient flows through the choice. The coin
    flips and the sampling uniforms are drawn before the loop, and the steps
    run in the same single time loop as input feeding. The callback
    ``keras_seqmodels.training.ScheduledSampling`` lowers ε on a schedule.
    Outside training (``evaluate``, ``predict``) the inputs are the ground
    truth.

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
        input_feeding: feed the previous attentional vector o(t-1) as an
            extra input (needs attention).
        scheduled_sampling: in training, feed the decoder's own previous
            token with probability 1 - ``teacher_probability``.
        sampling: ``"sample"`` (draw from the softmax, as in Bengio et al.)
            or ``"argmax"``: how scheduled sampling picks the own token.
        seed: seed of the scheduled-sampling draws.

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
        Manning 2015 (multiplicative attention, attentional hidden state,
        input feeding); Bengio, Vinyals, Jaitly & Shazeer 2015 (scheduled
        sampling); Press & Wolf 2017 (tied embeddings); Deep Learning,
        section 10.4.
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
        input_feeding=False,
        scheduled_sampling=False,
        sampling="sample",
        seed=None,
        **kwargs,
    ):
        super().__init__(**kwargs)
        name = type(self).__name__
        self.vocabulary_size = validation.check_positive_int(
            name, "vocabulary_size", vocabulary_size
        )
        self.embedding_dim = validation.check_positive_int(name, "embedding_dim", embedding_dim)
        self.units = validation.check_positive_int(name, "units", units)
        self.memory_dim = validation.check_positive_int(name, "memory_dim", memory_dim)
        self.num_layers = validation.check_positive_int(name, "num_layers", num_layers)
        self.cell_type = validation.check_choice(name, "cell_type", cell_type, CELLS)
        self.attention = validation.check_choice(name, "attention", attention, ATTENTION)
        self.context_input = bool(context_input)
        self.tie_embeddings = bool(tie_embeddings)
        self.dropout = validation.check_rate(name, "dropout", dropout)
        self.input_feeding = bool(input_feeding)
        if self.input_feeding and attention == "none":
            raise ValueError(
                f"{name}: `input_feeding=True` feeds the previous attentional "
                "vector, so it needs attention='multiplicative' or 'additive'. "
                f"Received: attention={attention!r}"
            )
        self.scheduled_sampling = bool(scheduled_sampling)
        self.sampling = validation.check_choice(name, "sampling", sampling, SAMPLING)
        self.seed = seed
        if self.scheduled_sampling:
            # Only then: the shipped models' layers keep their variables.
            self.seed_generator = keras.random.SeedGenerator(seed)
            # Made here, not in build: a subclassed model is built by its
            # first train step, after the callback has set ε for the epoch.
            self.teacher_probability = self.add_weight(
                shape=(),
                initializer="ones",
                trainable=False,
                name="teacher_probability",
            )

        self.embedding = keras.layers.Embedding(vocabulary_size, embedding_dim, name="embedding")
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
            self.key_projection = keras.layers.Dense(units, use_bias=False, name="key_projection")
            self.query_projection = None
            self.attention_layer = keras.layers.Attention(name="attention")
        elif attention == "additive":
            self.key_projection = keras.layers.Dense(units, use_bias=False, name="key_projection")
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
        width += self.units if self.input_feeding else 0
        for rnn in self.rnns:
            rnn.build((batch, None, width))
            width = self.units
        if self.attention != "none":
            self.key_projection.build((batch, None, self.memory_dim))
            if self.query_projection is not None:
                self.query_projection.build((batch, None, self.units))
            self.attention_layer.build(
                [
                    (batch, None, self.units),
                    (batch, None, self.memory_dim),
                    (batch, None, self.units),
                ]
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
        """Decoder states from the encoder summary: a flat list.

        With input feeding, the last entry is o(0) = 0, the previous
        attentional vector.
        """
        summary = memory[1]
        flat = self.bridge(summary)
        states = list(ops.split(flat, self.states_per_layer * self.num_layers, axis=-1))
        if self.input_feeding:
            states.append(ops.zeros_like(states[0]))
        return states

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

    def _attend(self, s, prepared, training):
        """The attentional vector o (s itself without attention) and weights."""
        states, _, mask, keys = prepared
        if self.attention == "none":
            return s, None
        query = s
        if self.query_projection is not None:
            query = self.query_projection(s)
        context, weights = self.attention_layer(
            [query, states, keys],
            mask=[None, mask],
            return_attention_scores=True,
            training=training,
        )
        return self.combine(ops.concatenate([context, s], axis=-1)), weights

    def _attend_and_predict(self, s, prepared, training):
        o, weights = self._attend(s, prepared, training)
        return self._predict(self.drop(o, training=training)), weights

    def _predict(self, o):
        if self.tie_embeddings:
            e = self.output_projection(o)
            table = ops.cast(self.embedding.embeddings, e.dtype)
            logits = ops.matmul(e, ops.transpose(table)) + ops.cast(self.output_bias, e.dtype)
        else:
            logits = self.output_layer(o)
        return logits

    # Teacher forcing -----------------------------------------------------

    def call(self, target_ids, memory, training=False, return_attention=False):
        prepared = self.prepare_memory(memory)
        states = self.initial_state(memory)
        if self.input_feeding or (training and self.scheduled_sampling):
            logits, weights = self._stepwise(target_ids, prepared, states, training)
            if return_attention:
                return logits, weights
            return logits
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

    # The whole step in one time loop (input feeding, scheduled sampling) --

    def _stepwise(self, target_ids, prepared, states, training):
        """Teacher forcing or scheduled sampling, one step at a time.

        One backend time loop (``tf.while_loop`` / ``lax.scan``) runs RNN,
        attention and output layer per step; everything random (coins,
        sampling uniforms, dropout masks) is drawn before the loop.
        """
        target_ids = ops.cast(target_ids, "int32")
        batch, steps = ops.shape(target_ids)[0], ops.shape(target_ids)[1]
        sampling = bool(training) and self.scheduled_sampling
        ints = [ops.expand_dims(target_ids, -1)]
        floats = []
        if sampling:
            u = keras.random.uniform((batch, steps), seed=self.seed_generator)
            teacher = ops.logical_or(
                u < ops.cast(self.teacher_probability, "float32"),
                ops.expand_dims(ops.equal(ops.arange(steps), 0), 0),  # start token
            )
            ints.append(ops.expand_dims(ops.cast(teacher, "int32"), -1))
            if self.sampling == "sample":
                floats.append(keras.random.uniform((batch, steps, 1), seed=self.seed_generator))
        dropping = bool(training) and self.dropout > 0
        if dropping:
            widths = [self.embedding_dim] + [self.units] * self.num_layers
            ones = ops.ones((batch, steps, sum(widths)), "float32")
            floats.append(self.drop(ones, training=True))
        loop_inputs = [ops.concatenate(ints, axis=-1)]
        if floats:
            loop_inputs.append(ops.concatenate(floats, axis=-1))
        summary = prepared[1]
        vocab = self.vocabulary_size
        # The previous own token rides along as a last, integer state.
        loop_states = list(states)
        if sampling:
            loop_states.append(ops.zeros((batch,), "int32"))

        def step(inputs_t, loop_states):
            loop_states = list(loop_states)
            ids_t = inputs_t[0][:, 0]
            f_t = inputs_t[1] if floats else None
            if sampling:
                own = loop_states.pop()
                token = ops.where(inputs_t[0][:, 1] > 0, ids_t, own)
            else:
                token = ids_t
            x = self.embedding(token)
            masks = None
            if dropping:
                offset = 1 if sampling and self.sampling == "sample" else 0
                masks, start = [], offset
                for width in widths:
                    masks.append(ops.cast(f_t[:, start : start + width], x.dtype))
                    start += width
                x = x * masks[0]
            if self.context_input:
                x = ops.concatenate([x, ops.cast(summary, x.dtype)], axis=-1)
            logits, new_states, weights = self._core_step(
                x,
                loop_states,
                prepared,
                training,
                layer_masks=masks[1:-1] if masks else None,
                out_mask=masks[-1] if masks else None,
            )
            out = logits
            if weights is not None:
                out = ops.concatenate([logits, ops.cast(weights, logits.dtype)], axis=-1)
            if sampling:
                z = ops.stop_gradient(ops.cast(logits, "float32"))
                if self.sampling == "sample":
                    chosen = decoding._pick_by_sampling(z, f_t[:, 0], 1.0, 0)
                else:
                    chosen = ops.argmax(z, axis=-1)
                new_states.append(ops.cast(chosen, "int32"))
            return out, new_states

        _, outputs, _ = backend_rnn(
            step,
            tuple(loop_inputs),
            loop_states,
            input_length=target_ids.shape[1],
            return_all_outputs=True,
        )
        if self.attention == "none":
            return outputs, None
        return outputs[..., :vocab], outputs[..., vocab:]

    # One decoding step ---------------------------------------------------

    def _core_step(self, x, states, prepared, training, layer_masks=None, out_mask=None):
        """RNN layers, attention and output layer on one step's input x."""
        states = list(states)
        if self.input_feeding:
            x = ops.concatenate([x, ops.cast(states[-1], x.dtype)], axis=-1)
        n = self.states_per_layer
        new_states = []
        for i, rnn in enumerate(self.rnns):
            x, s = rnn.cell(x, list(states[i * n : (i + 1) * n]))
            new_states.extend(s if isinstance(s, (list, tuple)) else [s])
            if layer_masks is not None and i + 1 < self.num_layers:
                x = x * layer_masks[i]
        o, weights = self._attend(ops.expand_dims(x, 1), prepared, training)
        o = o[:, 0]
        if self.input_feeding:
            new_states.append(o)
        if out_mask is not None:
            o = o * out_mask
        logits = self._predict(ops.expand_dims(o, 1))[:, 0]
        if weights is not None:
            weights = weights[:, 0]
        return logits, new_states, weights

    def step(self, token_ids, states, prepared):
        """One step: ids ``(batch,)`` and flat states to logits ``(batch, V)``.

        Returns ``(logits, new_states, attention_weights)``; the weights are
        ``(batch, source_time)`` (None without attention). With input
        feeding the last state is the attentional vector o(t).
        """
        x = self._inputs(ops.expand_dims(token_ids, 1), prepared[1], False)[:, 0]
        return self._core_step(x, states, prepared, False)

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
            "input_feeding": self.input_feeding,
            "scheduled_sampling": self.scheduled_sampling,
            "sampling": self.sampling,
            "seed": self.seed,
        }
        return {**super().get_config(), **config}
