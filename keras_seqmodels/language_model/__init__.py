"""Word-level language models from your own text: train, generate, export.

``train_language_model(train_path, validation_path)`` reads plain-text files
(one sentence per line), builds the vocabulary, trains an LSTM
(``network.word_lstm``, through ``keras_seqmodels.training.loop.fit``) and
returns a ``WordLanguageModel``: ids-to-logits Keras model with its
vocabulary in its config, text-level ``next_words``, ``log_likelihood``,
``generate`` and ``perplexity`` (``network.perplexity``). Save it with
``model.save``; export it for serving with
``keras_seqmodels.export.language_model.export_language_model`` or
``seqmodels export mine.keras DIR``.
"""

from keras_seqmodels.language_model.model import WordLanguageModel, train_language_model
from keras_seqmodels.language_model.text import build_vocabulary, read_words

__all__ = ["WordLanguageModel", "build_vocabulary", "read_words", "train_language_model"]
