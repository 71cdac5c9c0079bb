"""The word-level LSTM network and its perplexity, written once.

``word_lstm`` is the id-level network of ``WordLanguageModel`` and of the
zoo's word-level LSTM language models: Embedding -> (Dropout -> LSTM) x layers ->
Dropout -> Dense(vocabulary) logits, the LSTMs being the package's
``Recurrent(LSTMCell)`` and dropout acting on the non-recurrent connections
only (Zaremba et al. 2014). ``perplexity`` is the one perplexity of a word
stream that every caller scores with: windows from zero states (what
``WordLanguageModel.perplexity`` reports), or the states carried from
window to window by a stateful copy (what the zoo's recipes select on).
"""

import math

import numpy as np


def word_lstm(vocabulary_size, units, layers, dropout=0.0, *, embedding_dim=None, batch=None,
              window=None, stateful=False, unroll=False, precompute_inputs=False,
              init_scale=None, seed=None, recurrent_dropout=0.0, variational=False,
              tie_weights=False, name="word_lstm"):  # fmt: skip
    """Embedding -> (Dropout -> LSTM) x ``layers`` -> Dropout -> Dense logits.

    Args:
        vocabulary_size: number of word ids (the logits' width).
        units: LSTM units per layer.
        layers: number of stacked LSTM layers.
        dropout: rate on the non-recurrent connections, while training.
        embedding_dim: width of the word vectors (default: ``units``).
        batch, window: the input's fixed batch and length (None: free);
            a ``stateful`` network needs ``batch``.
        stateful: the LSTMs carry their states from one call to the next.
        unroll, precompute_inputs: ``Recurrent``'s options.
        init_scale: every weight uniform in ``[-init_scale, init_scale]``
            and the forget bias at 0, as in Zaremba et al.; None: Keras's
            default initializers (and a forget bias of 1).
        seed: seeds of the initializers and dropout layers (None: drawn
            from Keras's global seed).
        recurrent_dropout: dropout on ``h(t-1)`` inside each LSTM (the
            cell's own per-sequence mask; those LSTMs then train through
            the generic loop, not the fused kernel).
        variational: one dropout mask per row and window on each
            non-recurrent connection instead of one per token (Gal &
            Ghahramani 2016).
        tie_weights: the logits are ``h E^T + b`` with ``E`` the embedding
            matrix (Press & Wolf 2017; Inan et al. 2017): Keras's
            ``ReversibleEmbedding`` called twice and ``ks.layers.Bias``;
            needs ``embedding_dim == units``.
        name: the Keras model's name.

    Returns:
        A functional ``keras.Model`` from int ids ``(batch, time)`` to float32
        logits ``(batch, time, vocabulary_size)``.
    """
    import keras

    from keras_seqmodels import cells
    from keras_seqmodels import layers as ks_layers

    embedding_dim = embedding_dim or units
    if tie_weights and embedding_dim != units:
        raise ValueError(
            f"word_lstm: `tie_weights` needs `embedding_dim` equal to `units`. Received: "
            f"embedding_dim={embedding_dim}, units={units}"
        )

    def seeded(offset):
        return None if seed is None else seed * 100 + offset

    def uniform(i):  # with init_scale only
        return keras.initializers.RandomUniform(-init_scale, init_scale, seed=seeded(i))

    noise_shape = (None, 1, None) if variational else None
    ids = keras.Input(batch_shape=(batch, window), dtype="int32", name="ids")
    embedded = {} if init_scale is None else {"embeddings_initializer": uniform(0)}
    if tie_weights:
        embedding = keras.layers.ReversibleEmbedding(
            vocabulary_size, embedding_dim, **embedded, reverse_dtype="float32", name="embedding"
        )
    else:
        embedding = keras.layers.Embedding(
            vocabulary_size, embedding_dim, **embedded, name="embedding"
        )
    x = embedding(ids)
    for i in range(layers):
        x = keras.layers.Dropout(dropout, noise_shape=noise_shape, seed=seeded(50 + i),
                                 name=f"dropout_{i}")(x)  # fmt: skip
        options = {}
        if init_scale is not None:
            options = dict(kernel_initializer=uniform(3 * i + 1),
                           recurrent_initializer=uniform(3 * i + 2),
                           bias_initializer=uniform(3 * i + 3), unit_forget_bias=False)  # fmt: skip
        if recurrent_dropout:
            options.update(recurrent_dropout=recurrent_dropout, seed=seeded(60 + i))
        cell = cells.LSTMCell(units, name=f"lstm_cell_{i}", **options)
        x = ks_layers.Recurrent(
            cell,
            return_sequences=True,
            stateful=stateful,
            unroll=unroll,
            precompute_inputs=precompute_inputs,
            name=f"lstm_{i}",
        )(x)
    x = keras.layers.Dropout(dropout, noise_shape=noise_shape, seed=seeded(99),
                             name="dropout_out")(x)  # fmt: skip
    # float32 logits also under a mixed precision policy (a stable softmax).
    if tie_weights:
        bias = {} if init_scale is None else {"bias_initializer": uniform(91)}
        logits = ks_layers.Bias(**bias, dtype="float32",
                                name="logits")(embedding(x, reverse=True))  # fmt: skip
    else:
        dense = {}
        if init_scale is not None:
            dense = dict(kernel_initializer=uniform(90), bias_initializer=uniform(91))
        logits = keras.layers.Dense(vocabulary_size, **dense, dtype="float32",
                                    name="logits")(x)  # fmt: skip
    return keras.Model(ids, logits, name=name)


def copy_weights(source, target):
    """Copy the trainable weights (not the carried LSTM states) between two
    networks of the same form."""
    import keras

    for src, dst in zip(source.trainable_variables, target.trainable_variables):
        # A copy, not the same buffer: on JAX, predict donates the model's
        # buffers, which would delete the source model's weights.
        dst.assign(keras.ops.convert_to_numpy(src))


def reset_states(model):
    """Zero the carried states of ``model``'s stateful layers."""
    for layer in model.layers:
        if getattr(layer, "stateful", False):
            layer.reset_state()


def perplexity(network, ids, window=35, rows=32, evaluator=None):
    """Perplexity of ``network`` (ids to logits) on an id stream.

    Without ``evaluator``: the stream is cut into consecutive windows of
    ``window`` words, each read from zero states by ``network`` itself,
    ``rows`` windows per call (the last call padded: one traced shape);
    every word after the stream's first is predicted once, the last,
    shorter window included.

    With ``evaluator`` (a stateful, dropout-free copy of ``network`` with a
    fixed batch of ``rows``, e.g. ``word_lstm(..., batch=rows,
    stateful=True)``): ``network``'s weights are copied into it, its states
    reset, and the stream is cut into ``rows`` rows read ``window`` words at
    a time with the states carried over, so every word is predicted from all
    the words before it in its row (the first word of each row is not
    scored). Reuse one evaluator across calls to compile its forward pass
    once.

    Args:
        network: a Keras model from int ids ``(batch, time)`` to logits.
        ids: NumPy int array of word ids, at least two.
        window: words per call.
        rows: windows (or stream rows) per call.
        evaluator: the stateful copy to score with, or None.

    Returns:
        ``(perplexity, words scored)``: ``exp`` of the mean negative
        log-likelihood per scored word, and their number.
    """
    ids = np.asarray(ids, "int32")
    if len(ids) < 2:
        raise ValueError("perplexity: `ids` needs at least two words")
    total, count = 0.0, 0
    if evaluator is not None:
        copy_weights(network, evaluator)
        reset_states(evaluator)
        length = (len(ids) - 1) // rows
        x = ids[: length * rows].reshape(rows, length)
        y = ids[1 : length * rows + 1].reshape(rows, length)
        for start in range(0, length, window):
            target = y[:, start : start + window]
            logits = evaluator.predict_on_batch(x[:, start : start + window])
            total += float(_negative_log_likelihoods(logits, target).sum())
            count += target.size
        return math.exp(total / count), count
    n = len(ids) - 1
    windows = -(-n // window)  # the last one padded
    x = np.zeros((windows * window,), "int32")
    y = np.zeros_like(x)
    x[:n], y[:n] = ids[:-1], ids[1:]
    x, y = x.reshape(windows, window), y.reshape(windows, window)
    real = (np.arange(windows * window) < n).reshape(windows, window)
    for start in range(0, windows, rows):
        part = slice(start, start + rows)
        batch = np.zeros((rows, window), "int32")  # one traced shape
        batch[: len(x[part])] = x[part]
        logits = np.asarray(network.predict_on_batch(batch))[: len(x[part])]
        total += float(_negative_log_likelihoods(logits, y[part])[real[part]].sum())
    return math.exp(total / n), n


def _negative_log_likelihoods(logits, targets):
    """``-log softmax(logits)[target]`` in float64, for each position."""
    shifted = np.asarray(logits, "float64")
    shifted = shifted - shifted.max(-1, keepdims=True)
    log_z = np.log(np.exp(shifted).sum(-1))
    return log_z - np.take_along_axis(shifted, targets[..., None], -1)[..., 0]
