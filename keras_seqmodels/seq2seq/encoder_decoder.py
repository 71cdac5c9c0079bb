"""The encoder-decoder (sequence-to-sequence) model with attention."""

import keras
from keras import ops

from keras_seqmodels.seq2seq import decoding
from keras_seqmodels.seq2seq.attention_decoder import AttentionDecoder
from keras_seqmodels.seq2seq.recurrent_encoder import RecurrentEncoder
from keras_seqmodels.utils import bounds, validation


@keras.saving.register_keras_serializable(package="keras_seqmodels")
class EncoderDecoder(keras.Model):
    """RNN encoder-decoder with attention, trained by teacher forcing.

    The encoder reads the source x(1..S) into states H and a summary m; the
    decoder models p(y | x) = prod_t p(y(t) | y(<t), H, m), starting from an
    initial state computed from m, optionally with m as an extra input at
    every step, and attending over H (see ``RecurrentEncoder`` and
    ``AttentionDecoder`` for the equations). Source and target lengths and
    vocabularies are independent, and so are the encoder and decoder widths.

    Training (``fit``) uses teacher forcing: the inputs are
    ``(source_ids, decoder_input_ids)`` where the decoder inputs are the
    targets shifted right behind ``start_id``; compile with
    ``MaskedSparseCrossentropy`` so padding does not count. With
    ``scheduled_sampling=True`` the decoder feeds, in training, its own
    previous token instead of the ground truth with probability
    1 - ε; the callback ``keras_seqmodels.training.ScheduledSampling`` moves
    ε from 1 down on a linear, exponential or inverse-sigmoid schedule
    (Bengio et al. 2015). ``input_feeding=True`` feeds the previous
    attentional vector to the next step (Luong et al. 2015). Decoding
    (``greedy``, ``sample``, ``beam``) runs in the graph with
    ``keras.ops.while_loop``.

    Args:
        source_vocabulary_size, target_vocabulary_size: id counts (0 = pad).
        embedding_dim: width of both embeddings.
        encoder_units: width of each encoder direction.
        decoder_units: width of the decoder state.
        encoder_layers, decoder_layers: stacked layers.
        bidirectional: bidirectional encoder.
        cell_type: ``"lstm"`` or ``"gru"``.
        attention: ``"multiplicative"``, ``"additive"`` or ``"none"``.
        context_input: feed the encoder summary to every decoder step.
        tie_embeddings: tie the output layer to the target embedding.
        dropout: dropout rate.
        start_id, end_id: the target's start and end-of-sequence ids.
        input_feeding: feed the previous attentional vector to the decoder.
        scheduled_sampling: mix ground-truth and own previous tokens in
            training (see ``AttentionDecoder``).
        sampling: ``"sample"`` or ``"argmax"``, how the own token is picked.
        seed: seed of the scheduled-sampling draws.

    Call arguments:
        inputs: ``(source_ids, decoder_input_ids)``, int tensors
            ``(batch, S)`` and ``(batch, T)``; 0 is padding.
        training: whether dropout is active.

    Returns:
        logits ``(batch, T, target_vocabulary_size)``.

    Example:

    >>> import numpy as np
    >>> from keras_seqmodels.seq2seq import EncoderDecoder
    >>> model = EncoderDecoder(20, 30, 8, 8, 16, start_id=1, end_id=2)
    >>> model((np.array([[5, 6, 0]]), np.array([[1, 7]]))).shape
    (1, 2, 30)
    >>> tokens, lengths = model.greedy(np.array([[5, 6, 0]]), max_length=4)
    >>> tokens.shape
    (1, 4)

    Reference:
        Cho et al. 2014; Sutskever, Vinyals & Le 2014; Bahdanau, Cho & Bengio
        2015; Luong, Pham & Manning 2015; Deep Learning, section 10.4.
    """

    def __init__(
        self,
        source_vocabulary_size,
        target_vocabulary_size,
        embedding_dim,
        encoder_units,
        decoder_units,
        encoder_layers=1,
        decoder_layers=1,
        bidirectional=True,
        cell_type="lstm",
        attention="multiplicative",
        context_input=True,
        tie_embeddings=True,
        dropout=0.0,
        start_id=1,
        end_id=2,
        input_feeding=False,
        scheduled_sampling=False,
        sampling="sample",
        seed=None,
        **kwargs,
    ):
        super().__init__(**kwargs)
        name = type(self).__name__
        self.start_id = validation.check_positive_int(name, "start_id", start_id)
        self.end_id = validation.check_positive_int(name, "end_id", end_id)
        self.encoder = RecurrentEncoder(
            source_vocabulary_size,
            embedding_dim,
            encoder_units,
            num_layers=encoder_layers,
            bidirectional=bidirectional,
            cell_type=cell_type,
            dropout=dropout,
            name="encoder",
        )
        self.decoder = AttentionDecoder(
            target_vocabulary_size,
            embedding_dim,
            decoder_units,
            memory_dim=self.encoder.output_dim,
            num_layers=decoder_layers,
            cell_type=cell_type,
            attention=attention,
            context_input=context_input,
            tie_embeddings=tie_embeddings,
            dropout=dropout,
            input_feeding=input_feeding,
            scheduled_sampling=scheduled_sampling,
            sampling=sampling,
            seed=seed,
            name="decoder",
        )
        self._config = dict(
            source_vocabulary_size=source_vocabulary_size,
            target_vocabulary_size=target_vocabulary_size,
            embedding_dim=embedding_dim,
            encoder_units=encoder_units,
            decoder_units=decoder_units,
            encoder_layers=encoder_layers,
            decoder_layers=decoder_layers,
            bidirectional=bool(bidirectional),
            cell_type=cell_type,
            attention=attention,
            context_input=bool(context_input),
            tie_embeddings=bool(tie_embeddings),
            dropout=float(dropout),
            start_id=start_id,
            end_id=end_id,
            input_feeding=bool(input_feeding),
            scheduled_sampling=bool(scheduled_sampling),
            sampling=sampling,
            seed=seed,
        )

    def _split_inputs(self, inputs):
        if isinstance(inputs, dict):
            return inputs["source_ids"], inputs["decoder_input_ids"]
        if not isinstance(inputs, (list, tuple)) or len(inputs) != 2:
            raise ValueError(
                f"{self.name}: inputs must be (source_ids, decoder_input_ids) "
                f"or a dict with those keys. Received: {type(inputs).__name__}"
            )
        return inputs[0], inputs[1]

    def build(self, input_shape):
        if isinstance(input_shape, dict):
            source_shape = input_shape["source_ids"]
            target_shape = input_shape["decoder_input_ids"]
        elif (
            isinstance(input_shape, (list, tuple))
            and len(input_shape) == 2
            and all(isinstance(s, (list, tuple)) for s in input_shape)
        ):
            source_shape, target_shape = input_shape
        else:
            raise ValueError(
                f"{self.name}: inputs must be (source_ids, decoder_input_ids), "
                "two int tensors (batch, source_time) and (batch, target_time). "
                f"Received input shape {input_shape}"
            )
        self.encoder.build(source_shape)
        self.decoder.build(target_shape)
        self.built = True

    @property
    def _default_save_signature(self):
        # On TensorFlow, saving an object that tracks this model (e.g. the
        # Translator's export) would trace a default signature with float
        # inputs, which the encoder refuses: its inputs are integer ids and
        # keras_seqmodels.export writes the serving signatures explicitly.
        return None

    def call(self, inputs, training=False, return_attention=False):
        source_ids, target_ids = self._split_inputs(inputs)
        memory = self.encoder(source_ids, training=training)
        return self.decoder(
            target_ids, memory, training=training, return_attention=return_attention
        )

    # Decoding ------------------------------------------------------------

    def _prepare(self, source_ids):
        source_ids = ops.convert_to_tensor(source_ids, "int32")
        if not self.built:
            self.build((tuple(source_ids.shape), (source_ids.shape[0], None)))
        memory = self.encoder(source_ids, training=False)
        prepared = tuple(self.decoder.prepare_memory(memory))
        state = self.decoder.initial_state(memory)
        return source_ids, prepared, state

    def _step(self, tokens, state, prepared):
        logits, state, _ = self.decoder.step(tokens, state, prepared)
        return logits, state

    def default_max_length(self, source_ids):
        """2 S + 10 output tokens for a source of S tokens (S with padding)."""
        return 2 * source_ids.shape[1] + 10

    def greedy(self, source_ids, max_length=None, temperature=None, top_k=0, seed=None):
        """Greedy (or, with ``temperature``, sampled) translation of id batches.

        Returns ``(tokens (batch, max_length), lengths (batch,))``; see
        ``decoding.greedy_decode``.
        """
        source_ids, prepared, state = self._prepare(source_ids)
        if max_length is None:
            max_length = self.default_max_length(source_ids)
        return decoding.greedy_decode(
            self._step, state, prepared, ops.shape(source_ids)[0],
            self.start_id, self.end_id, max_length,
            temperature=temperature, top_k=top_k, seed=seed,
        )

    def beam(self, source_ids, beam_size=5, alpha=0.6, max_length=None):
        """Beam-search translation; see ``decoding.beam_search``.

        Returns ``(tokens (batch, beam, max_length), scores (batch, beam),
        lengths (batch, beam))``, best hypothesis first.
        """
        source_ids, prepared, state = self._prepare(source_ids)
        if max_length is None:
            max_length = self.default_max_length(source_ids)
        return decoding.beam_search(
            self._step, state, prepared, ops.shape(source_ids)[0],
            self.start_id, self.end_id, max_length,
            beam_size=beam_size, alpha=alpha,
        )

    def get_config(self):
        return {**super().get_config(), **self._config}

    @classmethod
    def from_config(cls, config):
        bounds.check_config(cls.__name__, config)
        return cls(**config)
