"""Character-level word encoder: a bidirectional RNN over each word's characters."""

import keras
from keras import ops

from keras_seqmodels.utils import validation


@keras.saving.register_keras_serializable(package="keras_seqmodels")
class CharacterEncoder(keras.layers.Layer):
    """Encodes every word of a batch of sentences from its characters.

    For word w with characters c_1..c_n (embedded as x_1..x_n):

        h_fwd = LSTM(x_1..x_n)[n],  h_bwd = LSTM(x_n..x_1)[n],
        r(w) = [h_fwd; h_bwd]

    All words of the batch run as one batch of ``batch * words`` character
    sequences (no loop over words). A word the tagger has never seen still
    gets a representation from its spelling (suffixes, capitals, digits).

    New relative to Keras: Keras has no layer that runs an RNN over an inner
    axis with masking on both axes; ``TimeDistributed(Bidirectional(...))``
    does not pass the character mask through.

    Args:
        num_chars: size of the character vocabulary (id 0 is padding).
        embedding_dim: width of the character embeddings.
        units: width of each direction's LSTM state; the output is ``2*units``.
        **kwargs: base layer arguments.

    Call arguments:
        char_ids: int ``(batch, words, chars)``; 0 marks padding.

    Returns:
        ``(batch, words, 2 * units)``; all-padding words give zeros. The
        output mask is ``True`` for words with at least one character.

    Example:

    >>> import numpy as np, keras_seqmodels as ks
    >>> enc = ks.tagging.CharacterEncoder(num_chars=30, embedding_dim=8, units=4)
    >>> enc(np.array([[[3, 4, 0], [5, 0, 0]]])).shape
    (1, 2, 8)

    Reference:
        Ling et al. 2015, "Finding Function in Form: Compositional Character
        Models for Open Vocabulary Word Representation"; Plank, Søgaard &
        Goldberg 2016, "Multilingual POS Tagging with Bi-LSTMs".
    """

    def __init__(self, num_chars, embedding_dim=32, units=32, **kwargs):
        super().__init__(**kwargs)
        self.num_chars = validation.check_positive_int(self.name, "num_chars", num_chars)
        self.embedding_dim = validation.check_positive_int(
            self.name, "embedding_dim", embedding_dim
        )
        self.units = validation.check_positive_int(self.name, "units", units)
        self.embedding = keras.layers.Embedding(
            num_chars,
            embedding_dim,
            mask_zero=True,
            name="char_embedding",
            dtype=self.dtype_policy,
        )
        # Keras's LSTM layer: on TensorFlow it keeps the cuDNN/fused path
        # where one exists, which our generic runner does not.
        self.forward = keras.layers.LSTM(units, name="forward", dtype=self.dtype_policy)
        self.backward = keras.layers.LSTM(
            units, go_backwards=True, name="backward", dtype=self.dtype_policy
        )

    def build(self, char_ids_shape):
        validation.check_rank(self.name, "char_ids", char_ids_shape, 3, "(batch, words, chars)")
        self.embedding.build((None, char_ids_shape[-1]))
        shape = (None, char_ids_shape[-1], self.embedding_dim)
        self.forward.build(shape)
        self.backward.build(shape)

    def call(self, char_ids):
        char_ids = ops.cast(char_ids, "int32")
        shape = ops.shape(char_ids)
        flat = ops.reshape(char_ids, (-1, shape[2]))
        mask = ops.not_equal(flat, 0)
        x = self.embedding(flat)
        h = ops.concatenate([self.forward(x, mask=mask), self.backward(x, mask=mask)], axis=-1)
        return ops.reshape(h, (shape[0], shape[1], 2 * self.units))

    def compute_mask(self, char_ids, mask=None):
        return ops.any(ops.not_equal(char_ids, 0), axis=-1)

    def compute_output_shape(self, char_ids_shape):
        return tuple(char_ids_shape[:2]) + (2 * self.units,)

    def get_config(self):
        return {
            **super().get_config(),
            "num_chars": self.num_chars,
            "embedding_dim": self.embedding_dim,
            "units": self.units,
        }
