"""Sequence to sequence: encoder-decoder with attention and in-graph decoding.

String-level pieces (``Translator``, the tokenizer, the Multi30k builder)
need TensorFlow and are imported from their modules:
``keras_seqmodels.seq2seq.translator``, ``.text``, ``.multi30k``.
"""

from keras_seqmodels.seq2seq.attention_decoder import AttentionDecoder
from keras_seqmodels.seq2seq.decoding import (
    beam_search,
    greedy_decode,
    length_penalty,
    sample_decode,
)
from keras_seqmodels.seq2seq.encoder_decoder import EncoderDecoder
from keras_seqmodels.seq2seq.masked_accuracy import MaskedAccuracy
from keras_seqmodels.seq2seq.masked_sparse_crossentropy import (
    MaskedSparseCrossentropy,
)
from keras_seqmodels.seq2seq.recurrent_encoder import RecurrentEncoder

__all__ = [
    "AttentionDecoder",
    "EncoderDecoder",
    "MaskedAccuracy",
    "MaskedSparseCrossentropy",
    "RecurrentEncoder",
    "beam_search",
    "greedy_decode",
    "length_penalty",
    "sample_decode",
]
