"""The ptb-lstm network and its stream: vocabulary, TBPTT windows and the
stateful copy that scores a stream.

The network is the package's word LSTM
(``keras_seqmodels.language_model.network.word_lstm``, the network of
``WordLanguageModel`` too) with Zaremba et al.'s (2014) uniform
initialisation; one continuous token stream is cut into rows and read in
windows whose LSTM states carry over, and scored by the package's one
``perplexity`` (``keras_seqmodels.language_model.network``).
"""

from keras_seqmodels.data.vocabulary import build_vocabulary as _count_vocabulary


def build_vocabulary(train_tokens):
    """The train words, most frequent first (ties alphabetically); no reserved words."""
    return _count_vocabulary(train_tokens)


def stream_batches(ids, batch, bptt):
    """(inputs, targets) arrays of shape (steps, batch, bptt) for TBPTT."""
    rows = (len(ids) - 1) // batch
    x = ids[: rows * batch].reshape(batch, rows)
    y = ids[1 : rows * batch + 1].reshape(batch, rows)
    steps = rows // bptt
    x = x[:, : steps * bptt].reshape(batch, steps, bptt).transpose(1, 0, 2)
    y = y[:, : steps * bptt].reshape(batch, steps, bptt).transpose(1, 0, 2)
    return x, y


def build_model(vocab_size, units=200, layers=2, dropout=0.0, batch=None, bptt=None,
                stateful=False, unroll=False, init_scale=0.1, precompute_inputs=False,
                seed=1, recurrent_dropout=0.0, variational=False, tie_weights=False):  # fmt: skip
    """ptb-lstm's network: the package's word LSTM (``word_lstm``) with
    Zaremba et al.'s initialisation (every weight uniform in ``[-init_scale,
    init_scale]``, the forget bias at 0), seeded by ``seed``, named
    ``ptb_lstm``; ``bptt`` is its window. The variants (``variational``,
    ``recurrent_dropout``, ``tie_weights``) are ``word_lstm``'s."""
    from keras_seqmodels.language_model.network import word_lstm

    return word_lstm(
        vocab_size, units, layers, dropout, batch=batch, window=bptt, stateful=stateful,
        unroll=unroll, precompute_inputs=precompute_inputs, init_scale=init_scale, seed=seed,
        recurrent_dropout=recurrent_dropout, variational=variational, tie_weights=tie_weights,
        name="ptb_lstm",
    )  # fmt: skip


def is_tied(model):
    """Whether ``model`` (made by ``build_model``) ties its logits to the embedding."""
    import keras

    return isinstance(model.get_layer("embedding"), keras.layers.ReversibleEmbedding)


def model_shape(model):
    """(units, layers) of a model made by ``build_model``."""
    lstms = [layer for layer in model.layers if layer.name.startswith("lstm_")]
    return lstms[0].cell.units, len(lstms)


def stream_evaluator(model, batch=10):
    """The stateful, dropout-free copy of ``model`` (made by ``build_model``)
    that ``perplexity`` scores a stream with (``batch`` rows); reuse it
    across calls to compile its forward pass once."""
    units, layers = model_shape(model)
    return build_model(model.get_layer("embedding").input_dim, units, layers, 0.0,
                       batch=batch, stateful=True, tie_weights=is_tied(model))  # fmt: skip


def load_vocabulary(path):
    with open(path, encoding="utf-8") as f:
        return [line.rstrip("\n") for line in f if line.rstrip("\n")]
