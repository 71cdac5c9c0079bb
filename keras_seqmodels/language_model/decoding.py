"""Next-word decoding of a word-level language model: the prompt once, then
one word at a time with the recurrent states carried (``decoder_for``), and
temperature sampling on top of it (``sample``). Used by ``WordLanguageModel``,
the zoo's language-model task and ``seqmodels generate``."""

# Layers that act on each position alone: a chain of these and forward
# Recurrent runners is causal, so its next-word logits after one more word
# follow from the carried states and that word. ``ReversibleEmbedding`` may
# be called twice (ids to vectors, then ``reverse=True`` for tied logits).
_POSITIONWISE = ("Embedding", "ReversibleEmbedding", "Dropout", "Dense", "Activation", "Softmax",
                 "Bias")  # fmt: skip
_CALL_OPTIONS = {"ReversibleEmbedding": ("reverse",)}  # keyword arguments kept when stepping


def _recurrent_chain(model):
    """The calls of ``model`` as ``[(layer, kwargs)]``, input to output, if it
    is a chain that can be stepped word by word; otherwise ``None``.

    That is a model ``ids -> logits`` with one input and one output whose
    output is reached from the input through calls that each take the one
    tensor made by the call before: of position-wise layers
    (``_POSITIONWISE``, no ``mask_zero``) or of forward, non-stateful
    ``Recurrent`` runners returning sequences (at least one). ``kwargs`` are
    the call's own options (``reverse=True`` of a tied output layer).
    """
    from keras_seqmodels.layers import Recurrent

    calls = []
    try:
        if len(model.inputs) != 1 or len(model.outputs) != 1:
            return None
        tensor = model.outputs[0]
        while True:
            layer, index, _ = tensor._keras_history
            node = layer._inbound_nodes[index]
            if not node.input_tensors:  # reached an input
                if tensor is not model.inputs[0]:
                    return None
                break
            args, kwargs = node.arguments.args, dict(node.arguments.kwargs)
            if len(args) != 1 or len(node.input_tensors) != 1:
                return None
            if args[0] is not node.input_tensors[0]:
                return None
            kwargs.pop("training", None)
            kept = {k: kwargs.pop(k) for k in _CALL_OPTIONS.get(type(layer).__name__, ())
                    if k in kwargs}  # fmt: skip
            if any(v is not None for v in kwargs.values()):
                return None  # an initial state or a mask from elsewhere
            if isinstance(layer, Recurrent):
                if layer.go_backwards or layer.stateful or not layer.return_sequences:
                    return None
                if layer.return_state:
                    return None
            elif type(layer).__name__ not in _POSITIONWISE or getattr(layer, "mask_zero", False):
                return None
            calls.append((layer, kept))
            tensor = args[0]
    except (AttributeError, IndexError, KeyError, TypeError, ValueError):
        return None
    if not any(isinstance(layer, Recurrent) for layer, _ in calls):
        return None
    return calls[::-1]


class _PrefixDecoder:
    """Any causal model: the whole text so far at every step (cost grows with it)."""

    incremental = False

    def __init__(self, model):
        self.model = model
        self.positions = 0  # token positions run through the model

    def _last(self):
        import numpy as np

        self.positions += len(self.ids)
        return np.asarray(self.model(np.array([self.ids], "int32"), training=False))[0, -1]

    def start(self, ids):
        self.ids = list(ids)
        return self._last()

    def step(self, word_id):
        self.ids.append(word_id)
        return self._last()


class _StateDecoder:
    """A recurrent chain: the prompt once, then one word at a time.

    A second model shares the language model's layers (same weights); each
    ``Recurrent`` is replaced by a runner around the same cell that takes
    initial states and returns its final ones, and those are fed back at the
    next word. Run with ``utils.calling.call_model`` (the stepper's own compiled
    call, retraced for a new input length at most once: ``reduce_retracing``).
    """

    incremental = True

    def __init__(self, model, calls):
        import keras

        from keras_seqmodels.layers import Recurrent

        ids = keras.Input(batch_shape=(None, None), dtype="int32", name="ids")
        x, state_inputs, state_outputs, self._zero_states = ids, [], [], []
        for layer, kwargs in calls:
            if not isinstance(layer, Recurrent):
                x = layer(x, **kwargs)
                continue
            zeros = [keras.ops.convert_to_numpy(s) for s in layer._initial_state(1)]
            inputs = [
                keras.Input(
                    batch_shape=(None,) + z.shape[1:], dtype=z.dtype, name=f"{layer.name}_state_{k}"
                )
                for k, z in enumerate(zeros)
            ]
            runner = Recurrent(layer.cell, return_sequences=True, return_state=True,
                               precompute_inputs=layer.precompute_inputs,
                               dtype=layer.dtype_policy, name=f"{layer.name}_stepper")  # fmt: skip
            x, *final = runner(x, initial_state=inputs)
            state_inputs += inputs
            state_outputs += final
            self._zero_states += zeros
        self.stepper = keras.Model([ids, *state_inputs], [x, *state_outputs],
                                   name=f"{model.name}_stepper")  # fmt: skip
        self.positions = 0

    def _run(self, ids):
        import numpy as np

        from keras_seqmodels.utils.calling import call_model

        self.positions += len(ids)
        logits, *self.states = call_model(self.stepper, [np.array([ids], "int32"), *self.states])
        return np.asarray(logits)[0, -1]

    def start(self, ids):
        self.states = list(self._zero_states)
        return self._run(list(ids))

    def step(self, word_id):
        return self._run([word_id])


def decoder_for(model):
    """A next-word decoder for ``model``: incremental when it is a recurrent chain."""
    calls = _recurrent_chain(model)
    return _StateDecoder(model, calls) if calls is not None else _PrefixDecoder(model)


def sample(model, vocabulary, prompt, length, temperature=1.0, seed=None):
    """Sample ``length`` words after ``prompt`` from a word-level language model.

    Each next word w is drawn from softmax(logits / temperature), the logits
    of the model at the last position of the text so far. Prompt words not in
    the vocabulary become ``<unk>``.

    A model that is a chain of position-wise layers and ``Recurrent`` runners
    (e.g. a stacked LSTM) runs the prompt once and then one word per step, carrying the
    LSTM states (linear in the length); any other causal model is re-run on
    the whole text at every step. Both give the same words.

    Args:
        model: maps int ids ``(1, time)`` to logits ``(1, time, vocab)``.
        vocabulary: list of words, id i ↦ ``vocabulary[i]``.
        prompt: whitespace-separated words (lower-cased, as PTB).
        length: number of words to sample.
        temperature: > 0; lower is greedier.
        seed: integer seed of the sampler.

    Returns:
        The sampled words, a list of strings.
    """
    import numpy as np

    if temperature <= 0:
        raise ValueError(f"generate: `temperature` must be > 0. Received: {temperature}")
    index = {w: i for i, w in enumerate(vocabulary)}
    unk = index.get("<unk>", 0)
    eos = index.get("<eos>")
    ids = [index.get(w, unk) for w in prompt.lower().split()]
    if not ids:
        ids = [eos if eos is not None else unk]
    rng = np.random.default_rng(seed)
    return [vocabulary[i] for i in continue_ids(decoder_for(model), ids, length, temperature, rng)]


def continue_ids(decoder, ids, length, temperature=1.0, rng=None, greedy=False):
    """The ids of ``length`` words after ``ids`` from a ``decoder_for`` decoder.

    Each next word is the most likely one (``greedy``) or is drawn from
    softmax(logits / temperature) with the NumPy generator ``rng``.
    """
    import numpy as np

    out = []
    logits = decoder.start(ids)
    for k in range(length):
        if greedy:
            nxt = int(np.argmax(logits))
        else:
            z = np.asarray(logits, "float64") / temperature
            p = np.exp(z - z.max())
            nxt = int(rng.choice(len(p), p=p / p.sum()))
        out.append(nxt)
        if k + 1 < length:
            logits = decoder.step(nxt)
    return out
