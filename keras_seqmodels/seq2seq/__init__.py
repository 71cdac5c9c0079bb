"""Sequence to sequence: encoder-decoder with attention and in-graph decoding.

``Translator`` (strings in, strings out) and the tokenizer in ``.text`` run
on TensorFlow only (string tensors); importing them does not import it. The
Multi30k TFDS builder is in ``keras_seqmodels.data.multi30k``.
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
from keras_seqmodels.seq2seq.parallel_text import read_parallel_text
from keras_seqmodels.seq2seq.recurrent_encoder import RecurrentEncoder
from keras_seqmodels.seq2seq.translator import Translator, train_translator

__all__ = [
    "AttentionDecoder",
    "EncoderDecoder",
    "MaskedAccuracy",
    "MaskedSparseCrossentropy",
    "RecurrentEncoder",
    "Translator",
    "beam_search",
    "greedy_decode",
    "length_penalty",
    "read_parallel_text",
    "sample_decode",
    "train_translator",
]
