"""The ptb-mingru network: a residual stack of linear-recurrence blocks as a
word-level language model, at the size of ptb-lstm's 2 x 650 LSTM.

Embedding (tied to the logits) -> Dropout -> ``blocks`` x [LayerNorm ->
recurrent layer -> Dropout, added; LayerNorm -> GLU MLP (``units`` ->
``mlp_ratio * units`` -> ``units``) -> Dropout, added] -> LayerNorm ->
Dropout -> logits ``h E^T + b``. With the defaults (2 blocks of 650, MLP
ratio 2) a MinGRU block holds 3.38 M weights, as one 650-unit LSTM layer
does, so the whole model has ptb-lstm's parameter count within 1%.

The recurrent layer (``layer``) is one of ``LAYERS``: the parallel-scan
layers of ``keras_seqmodels.linear_rnn`` or the package's LSTM. The stream
windows are ``network``'s; the stream is scored by the package's one
``perplexity`` (``keras_seqmodels.language_model.network``).
"""

LAYERS = ("mingru", "minlstm", "hawk", "lru", "lstm")


def recurrent_layer(kind, units, name, stateful):
    from keras_seqmodels import layers

    options = dict(return_sequences=True, stateful=stateful, name=name)
    if kind == "lstm":
        return layers.LSTM(units, **options)
    from keras_seqmodels import linear_rnn  # the parallel-scan layers

    layer = {
        "mingru": "MinGRU",
        "minlstm": "MinLSTM",
        "hawk": "HawkBlock",
        "lru": "LRU",
    }[kind]
    return getattr(linear_rnn, layer)(units, **options)


def build_model(vocab_size, units=650, blocks=2, layer="mingru", mlp_ratio=2.0, dropout=0.5,
                block_dropout=0.3, batch=None, bptt=None, stateful=False, init_scale=0.05,
                seed=1):  # fmt: skip
    """Embedding -> blocks -> tied logits (see the module docstring)."""
    import keras

    from keras_seqmodels import layers as ks_layers

    if layer not in LAYERS:
        raise ValueError(
            f"ptb-mingru: `layer` must be one of {', '.join(LAYERS)}. Received: layer={layer!r}"
        )
    if not isinstance(blocks, int) or blocks < 1:
        raise ValueError(f"ptb-mingru: `blocks` must be a positive integer. Received: {blocks!r}")
    hidden = max(int(round(mlp_ratio * units)), 1)
    ids = keras.Input(batch_shape=(batch, bptt), dtype="int32", name="ids")
    init = keras.initializers.RandomUniform(-init_scale, init_scale, seed=seed * 100)
    embedding = keras.layers.ReversibleEmbedding(
        vocab_size, units, embeddings_initializer=init, reverse_dtype="float32", name="embedding"
    )
    x = keras.layers.Dropout(dropout, seed=seed * 100 + 1, name="dropout_in")(embedding(ids))
    for i in range(1, blocks + 1):
        y = keras.layers.LayerNormalization(name=f"block_{i}_norm")(x)
        y = recurrent_layer(layer, units, f"block_{i}_{layer}", stateful)(y)
        y = keras.layers.Dropout(block_dropout, seed=seed * 100 + 10 * i, name=f"block_{i}_drop")(y)
        x = keras.layers.Add(name=f"block_{i}_mix")([x, y])
        y = keras.layers.LayerNormalization(name=f"block_{i}_mlp_norm")(x)
        value = keras.layers.Dense(hidden, name=f"block_{i}_mlp_value")(y)
        gate = keras.layers.Dense(hidden, activation="gelu", name=f"block_{i}_mlp_gate")(y)
        y = keras.layers.Multiply(name=f"block_{i}_mlp_glu")([value, gate])
        y = keras.layers.Dense(units, name=f"block_{i}_mlp_out")(y)
        y = keras.layers.Dropout(
            block_dropout, seed=seed * 100 + 10 * i + 5, name=f"block_{i}_mlp_drop"
        )(y)
        x = keras.layers.Add(name=f"block_{i}")([x, y])
    x = keras.layers.LayerNormalization(name="norm")(x)
    x = keras.layers.Dropout(dropout, seed=seed * 100 + 99, name="dropout_out")(x)
    # float32 logits also under a mixed precision policy (a stable softmax).
    logits = ks_layers.Bias(dtype="float32", name="logits")(embedding(x, reverse=True))
    return keras.Model(ids, logits, name="ptb_mingru")


def model_options(model):
    """``build_model``'s size options of a model it made: units, blocks,
    layer, mlp_ratio."""
    names = [layer.name for layer in model.layers]
    blocks = sum(1 for n in names if n.endswith("_mlp_out"))
    kind = next(n for n in names if n.startswith("block_1_") and n[8:] in LAYERS)[8:]
    units = model.get_layer("embedding").output_dim
    hidden = model.get_layer("block_1_mlp_value").units
    return dict(units=units, blocks=blocks, layer=kind, mlp_ratio=hidden / units)


def stream_evaluator(model, batch=10):
    """The stateful, dropout-free copy of ``model`` that the package's
    ``perplexity`` (``keras_seqmodels.language_model.network``) scores a
    stream with (``batch`` rows)."""
    vocab_size = model.get_layer("embedding").input_dim
    return build_model(vocab_size, **model_options(model), dropout=0.0, block_dropout=0.0,
                       batch=batch, stateful=True)  # fmt: skip
