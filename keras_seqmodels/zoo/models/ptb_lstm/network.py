"""The ptb-lstm network and its stream maths: vocabulary, TBPTT windows,
the stateful copy that scores a stream, and the weight copy between the two.

Zaremba et al. (2014): Embedding -> (Dropout -> LSTM) x layers -> Dropout ->
Dense(vocab) logits, uniform initialisation, dropout on the non-recurrent
connections only; one continuous token stream cut into rows and read in
windows whose LSTM states carry over.
"""

import math

import numpy as np

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
    """Embedding → (Dropout → LSTM) × layers → Dropout → Dense(vocab) logits.

    The LSTMs are the package's ``Recurrent(LSTMCell)``. Every weight starts
    uniform in ``[-init_scale, init_scale]`` and the forget bias at 0, as in
    Zaremba et al. (2014); dropout acts on the non-recurrent connections only.

    Variants (all off by default, the shipped model's form):
        variational: one dropout mask per row and window on each
            non-recurrent connection instead of one per token (Gal &
            Ghahramani 2016); with ``recurrent_dropout``, also on ``h(t-1)``
            inside each LSTM (the cell's own per-sequence mask; those LSTMs
            then train through the generic loop, not the fused kernel).
        tie_weights: the logits are ``h Eᵀ + b`` with ``E`` the embedding
            matrix (Press & Wolf 2017; Inan et al. 2017): Keras's
            ``ReversibleEmbedding`` called twice and ``ks.layers.Bias``.
    """
    import keras

    from keras_seqmodels import cells
    from keras_seqmodels import layers as ks_layers

    def init(i):
        return keras.initializers.RandomUniform(-init_scale, init_scale, seed=seed * 100 + i)

    noise_shape = (None, 1, None) if variational else None
    ids = keras.Input(batch_shape=(batch, bptt), dtype="int32", name="ids")
    if tie_weights:
        embedding = keras.layers.ReversibleEmbedding(
            vocab_size, units, embeddings_initializer=init(0), reverse_dtype="float32",
            name="embedding",
        )  # fmt: skip
    else:
        embedding = keras.layers.Embedding(vocab_size, units, embeddings_initializer=init(0),
                                           name="embedding")  # fmt: skip
    x = embedding(ids)
    for i in range(layers):
        x = keras.layers.Dropout(dropout, noise_shape=noise_shape, seed=seed * 100 + 50 + i,
                                 name=f"dropout_{i}")(x)  # fmt: skip
        options = {}
        if recurrent_dropout:
            options = dict(recurrent_dropout=recurrent_dropout, seed=seed * 100 + 60 + i)
        cell = cells.LSTMCell(units, kernel_initializer=init(3 * i + 1),
                              recurrent_initializer=init(3 * i + 2),
                              bias_initializer=init(3 * i + 3), unit_forget_bias=False,
                              name=f"lstm_cell_{i}", **options)  # fmt: skip
        x = ks_layers.Recurrent(
            cell,
            return_sequences=True,
            stateful=stateful,
            unroll=unroll,
            precompute_inputs=precompute_inputs,
            name=f"lstm_{i}",
        )(x)
    x = keras.layers.Dropout(dropout, noise_shape=noise_shape, seed=seed * 100 + 99,
                             name="dropout_out")(x)  # fmt: skip
    # float32 logits also under a mixed precision policy (a stable softmax).
    if tie_weights:
        logits = ks_layers.Bias(bias_initializer=init(91), dtype="float32",
                                name="logits")(embedding(x, reverse=True))  # fmt: skip
    else:
        logits = keras.layers.Dense(vocab_size, kernel_initializer=init(90),
                                    bias_initializer=init(91), dtype="float32",
                                    name="logits")(x)  # fmt: skip
    return keras.Model(ids, logits, name="ptb_lstm")


def is_tied(model):
    """Whether ``model`` (made by ``build_model``) ties its logits to the embedding."""
    import keras

    return isinstance(model.get_layer("embedding"), keras.layers.ReversibleEmbedding)


def model_shape(model):
    """(units, layers) of a model made by ``build_model``."""
    lstms = [layer for layer in model.layers if layer.name.startswith("lstm_")]
    return lstms[0].cell.units, len(lstms)


def copy_weights(source, target):
    """Copy the trainable weights (not the carried LSTM states) between models."""
    import keras

    for src, dst in zip(source.trainable_variables, target.trainable_variables):
        # A copy, not the same buffer: on JAX, predict donates the model's
        # buffers, which would delete the source model's weights.
        dst.assign(keras.ops.convert_to_numpy(src))


def reset_states(model):
    for layer in model.layers:
        if getattr(layer, "stateful", False):
            layer.reset_state()


def stream_evaluator(model, units, layers, batch=10):
    """The stateful, dropout-free copy of ``model``'s network that
    ``perplexity`` scores with (``batch`` rows); reuse it across calls to
    compile its forward pass once."""
    return build_model(model.get_layer("embedding").input_dim, units, layers, 0.0,
                       batch=batch, stateful=True, tie_weights=is_tied(model))  # fmt: skip


def perplexity(model, ids, units, layers, batch=10, bptt=100, evaluator=None):
    """Exact stream perplexity with a stateful copy of ``model``.

    Every token of the stream is predicted from all tokens before it in its
    row (``batch`` rows), except the first token of each row. ``evaluator``:
    a ``stream_evaluator`` of ``batch`` rows to reuse (its weights are
    overwritten with ``model``'s); a new one is built if ``None``.
    """
    if evaluator is None:
        evaluator = stream_evaluator(model, units, layers, batch)
    copy_weights(model, evaluator)
    reset_states(evaluator)
    rows = (len(ids) - 1) // batch
    x = ids[: rows * batch].reshape(batch, rows)
    y = ids[1 : rows * batch + 1].reshape(batch, rows)

    total, count = 0.0, 0
    for start in range(0, rows, bptt):
        logits = np.asarray(evaluator.predict_on_batch(x[:, start : start + bptt]), "float64")
        target = y[:, start : start + bptt]
        logits -= logits.max(-1, keepdims=True)
        log_z = np.log(np.exp(logits).sum(-1))
        picked = np.take_along_axis(logits, target[..., None], -1)[..., 0]
        total += float((log_z - picked).sum())
        count += target.size
    return math.exp(total / count), count


def load_vocabulary(path):
    with open(path, encoding="utf-8") as f:
        return [line.rstrip("\n") for line in f if line.rstrip("\n")]
