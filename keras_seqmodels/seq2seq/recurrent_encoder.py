"""Embedding plus a stack of (bidirectional) recurrent layers."""

import keras
from keras import ops

from keras_seqmodels.cells import registry
from keras_seqmodels.layers import Recurrent
from keras_seqmodels.utils import validation

# The names `cell_type` accepts; saved models rebuild their cells from it
# through the package's table, where "gru" stays the reset-before GRU.
CELLS = registry.subset("lstm", "gru")


@keras.saving.register_keras_serializable(package="keras_seqmodels")
class RecurrentEncoder(keras.layers.Layer):
    """Reads token ids into a sequence of states and a summary context.

    For each layer l (x^0 = embedding of the source ids):
    h_fwd^l(t) = cell_fwd(x^l(t), h_fwd^l(t-1)),
    h_bwd^l(t) = cell_bwd(x^l(t), h_bwd^l(t+1)),
    x^{l+1}(t) = [h_fwd^l(t); h_bwd^l(t)] (or h_fwd^l(t) alone when not
    bidirectional). The context C is the sequence of top-layer states (for
    attention) and the final states of the top layer (the summary).

    New relative to Keras: the backward direction starts at each sequence's
    last real token, not at the padded end (each row is reversed within its
    own length, which needs no mask inside the time loop), and the summary
    of both directions is returned for bridging to a decoder. Padding must
    come after the tokens (id 0 at the end of each row).

    Args:
        vocabulary_size: number of source token ids (id 0 is padding).
        embedding_dim: width of the token embeddings.
        units: width of each direction's state.
        num_layers: number of stacked recurrent layers.
        bidirectional: read the source in both directions.
        cell_type: ``"lstm"`` or ``"gru"`` (the package's cells).
        dropout: dropout rate on the embeddings and between layers.

    Call arguments:
        source_ids: int ``(batch, source_time)``; 0 marks padding.
        training: whether dropout is active.

    Returns:
        ``(states, summary, mask)``: ``(batch, source_time, d)`` with
        ``d = units * (2 if bidirectional else 1)``, the final states
        ``(batch, d)`` (for an LSTM the hidden state h), and the boolean mask.

    Example:

    >>> import numpy as np
    >>> from keras_seqmodels.seq2seq import RecurrentEncoder
    >>> enc = RecurrentEncoder(50, 8, 16, bidirectional=True)
    >>> seq, summary, mask = enc(np.array([[4, 5, 6, 0]]))
    >>> seq.shape, summary.shape
    ((1, 4, 32), (1, 32))

    Reference:
        Schuster & Paliwal 1997 (bidirectional RNNs); Bahdanau, Cho & Bengio
        2015, section 3.2; Deep Learning, sections 10.3 and 10.4.
    """

    def __init__(
        self,
        vocabulary_size,
        embedding_dim,
        units,
        num_layers=1,
        bidirectional=True,
        cell_type="lstm",
        dropout=0.0,
        **kwargs,
    ):
        super().__init__(**kwargs)
        name = type(self).__name__
        self.vocabulary_size = validation.check_positive_int(
            name, "vocabulary_size", vocabulary_size
        )
        self.embedding_dim = validation.check_positive_int(name, "embedding_dim", embedding_dim)
        self.units = validation.check_positive_int(name, "units", units)
        self.num_layers = validation.check_positive_int(name, "num_layers", num_layers)
        self.bidirectional = bool(bidirectional)
        self.cell_type = validation.check_choice(name, "cell_type", cell_type, CELLS)
        self.dropout = validation.check_rate(name, "dropout", dropout)
        self.embedding = keras.layers.Embedding(vocabulary_size, embedding_dim, name="embedding")
        self.drop = keras.layers.Dropout(self.dropout)
        self.forward_layers = []
        self.backward_layers = []
        for i in range(num_layers):
            self.forward_layers.append(
                Recurrent(
                    CELLS[cell_type](units),
                    return_sequences=True,
                    return_state=True,
                    name=f"forward_{i}",
                )
            )
            if self.bidirectional:
                self.backward_layers.append(
                    Recurrent(
                        CELLS[cell_type](units),
                        return_sequences=True,
                        return_state=True,
                        name=f"backward_{i}",
                    )
                )

    @property
    def output_dim(self):
        return self.units * (2 if self.bidirectional else 1)

    def build(self, source_shape):
        validation.check_rank(self.name, "source_ids", source_shape, 2, "(batch, source_time)")
        self.embedding.build(source_shape)
        width = self.embedding_dim
        for i in range(self.num_layers):
            shape = (source_shape[0], source_shape[1], width)
            self.forward_layers[i].build(shape)
            if self.bidirectional:
                self.backward_layers[i].build(shape)
            width = self.output_dim

    def call(self, source_ids, training=False):
        validation.check_rank(
            self.name, "source_ids", tuple(source_ids.shape), 2, "(batch, source_time)"
        )
        if "int" not in keras.backend.standardize_dtype(source_ids.dtype):
            raise ValueError(
                f"{self.name}: `source_ids` must be integer token ids (batch, "
                f"source_time). Received dtype={source_ids.dtype}"
            )
        mask = ops.not_equal(source_ids, 0)
        lengths = ops.sum(ops.cast(mask, "int32"), axis=1)
        # Padding comes after the tokens, so instead of masking inside the
        # time loop the encoder reads each sentence reversed within its own
        # length (for the backward direction) and picks the state at the
        # last real position (for the summary). This is exact, runs with
        # an unknown time dimension under tf.function, and skips the
        # per-step mask selects.
        last = ops.expand_dims(ops.expand_dims(ops.maximum(lengths - 1, 0), 1), 2)
        reverse = _reverse_index(lengths, ops.shape(source_ids)[1])
        keep = ops.expand_dims(ops.cast(mask, self.compute_dtype), -1)
        x = self.drop(self.embedding(source_ids), training=training)
        for i in range(self.num_layers):
            seq = self.forward_layers[i](x, training=training)[0]
            summary = ops.take_along_axis(seq, last, axis=1)[:, 0]
            if self.bidirectional:
                x_rev = ops.take_along_axis(x, reverse, axis=1)
                back = self.backward_layers[i](x_rev, training=training)[0]
                summary = ops.concatenate(
                    [summary, ops.take_along_axis(back, last, axis=1)[:, 0]], axis=-1
                )
                seq = ops.concatenate([seq, ops.take_along_axis(back, reverse, axis=1)], axis=-1)
            x = seq * keep
            if i + 1 < self.num_layers:
                x = self.drop(x, training=training)
        return x, summary, mask

    def compute_output_spec(self, source_ids, training=False):
        batch, time = source_ids.shape
        return (
            keras.KerasTensor((batch, time, self.output_dim), self.compute_dtype),
            keras.KerasTensor((batch, self.output_dim), self.compute_dtype),
            keras.KerasTensor((batch, time), "bool"),
        )

    def get_config(self):
        config = {
            "vocabulary_size": self.vocabulary_size,
            "embedding_dim": self.embedding_dim,
            "units": self.units,
            "num_layers": self.num_layers,
            "bidirectional": self.bidirectional,
            "cell_type": self.cell_type,
            "dropout": self.dropout,
        }
        return {**super().get_config(), **config}


def _reverse_index(lengths, time):
    """Index ``(batch, time, 1)`` that reverses each row within its length."""
    t = ops.expand_dims(ops.arange(time, dtype="int32"), 0)
    n = ops.expand_dims(ops.cast(lengths, "int32"), 1)
    return ops.expand_dims(ops.where(t < n, n - 1 - t, t), -1)
