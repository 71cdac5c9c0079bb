"""Every public layer trains one step under mixed_float16 and mixed_bfloat16.

The layers are discovered from the exports of ``keras_seqmodels.cells``,
``.layers``, ``.memory``, ``.trees``, ``.tagging``, ``.seq2seq`` and
``.language_model``, so a layer added later is picked up by
``test_every_public_layer_is_covered``: cells run inside
``Recurrent`` with default arguments (or those in ``CELL_ARGS``); other layers
need an entry in ``LAYER_EXAMPLES`` (inputs built for their kind), and the
coverage test fails, naming them, until they have one.

Backend-agnostic (runs on TensorFlow and JAX).
"""

import importlib
import inspect

import keras
import numpy as np
import pytest
from keras import ops

import keras_seqmodels as ks

POLICIES = ("mixed_float16", "mixed_bfloat16")
PACKAGES = ("cells", "layers", "memory", "trees", "seq2seq", "language_model", "tagging")

# Base classes: not layers one uses directly.
ABSTRACT = {"RecurrentCell"}
# String preprocessing: no float computation, so no mixed precision.
# test_preprocessing_layers_have_no_float_weights checks that claim.
PREPROCESSING = {
    "SentenceVectorizer": lambda: ks.tagging.SentenceVectorizer(["the", "cat"], list("theca")),
    "TagLookup": lambda: ks.tagging.TagLookup(["NOUN", "VERB"]),
}
# Models that only wrap covered layers with string inputs and outputs.
# CRFTagger is a keras.Model around a user's potentials model and the CRF
# layer, whose float computation the "CRF" example covers; TreeClassifier is
# an embedding, a TreeLSTM and a Dense over token strings; WordLanguageModel
# an embedding, Recurrent LSTM runners and a Dense over word ids.
COVERED_BY = {
    "Translator": "EncoderDecoder",
    "CRFTagger": "CRF",
    "TreeClassifier": "TreeLSTM",
    "WordLanguageModel": "Recurrent",
}
CELL_ARGS = {"OutputFeedbackCell": dict(units=4, output_units=1)}


def public_layer_classes():
    found = {}
    for name in PACKAGES:
        try:
            module = importlib.import_module(f"keras_seqmodels.{name}")
        except ImportError:
            continue
        for attr in getattr(module, "__all__", []):
            obj = getattr(module, attr, None)
            if inspect.isclass(obj) and issubclass(obj, keras.layers.Layer):
                found[attr] = obj
    return found


def is_cell(cls):
    return hasattr(cls, "state_size") and cls.__name__.endswith("Cell")


rng = np.random.default_rng(0)


def floats(*shape):
    return rng.standard_normal(shape).astype("float32")


def ints(high, *shape, low=1):
    return rng.integers(low, high, shape).astype("int32")


def tree_inputs(features):
    batch = ks.trees.encode([ks.trees.balanced_tree(5), ks.trees.balanced_tree(2)])
    x = floats(*batch["levels"].shape, features)
    return [x, batch["children"], batch["levels"]]


def seq2seq_memory(enc_units=8):
    enc = ks.seq2seq.RecurrentEncoder(30, 8, enc_units)

    def build(inputs):
        return enc(inputs[0])

    return build


# name -> () -> (inputs: list of arrays, build(tensors) -> outputs, layers):
# layers[0] is the layer under test (its weights and dtypes are checked), the
# others are helpers it needs (an encoder for a decoder).
def _recurrent():
    layer = ks.layers.Recurrent(ks.cells.LSTMCell(4), return_sequences=True)
    return [floats(2, 5, 3)], lambda t: layer(t[0]), [layer]


def _bidirectional():
    layer = ks.layers.Bidirectional(ks.layers.Recurrent(ks.cells.GRUCell(4), return_sequences=True))
    return [floats(2, 5, 3)], lambda t: layer(t[0]), [layer]


def _crf():
    layer = ks.tagging.CRF(3)
    inputs = [floats(2, 5, 3), ints(3, 2, 5, low=0)]
    # With gold tags the layer adds its negative log-likelihood as a loss.
    return inputs, lambda t: layer(t[0], tags=t[1]), [layer]


def _character_encoder():
    layer = ks.tagging.CharacterEncoder(num_chars=10, embedding_dim=4, units=4)
    chars = ints(10, 2, 3, 4)
    chars[:, :, -1] = 0
    return [chars], lambda t: layer(t[0]), [layer]


def _conditioned():
    layer = ks.layers.ConditionedRecurrent(ks.cells.LSTMCell(4), "both", return_sequences=True)
    return [floats(2, 5, 3), floats(2, 2)], lambda t: layer([t[0], t[1]]), [layer]


def _four_directional():
    layer = ks.layers.FourDirectional2D(ks.cells.GRUCell(4), patch_size=2)
    return [floats(2, 4, 4, 1)], lambda t: layer(t[0]), [layer]


def _output_feedback():
    layer = ks.layers.OutputFeedback(ks.cells.OutputFeedbackCell(4, 1))
    return [floats(2, 5, 3), floats(2, 5, 1)], lambda t: layer([t[0], t[1]]), [layer]


def _tree(cls, **kwargs):
    def make():
        layer = cls(4, **kwargs)
        return tree_inputs(4), lambda t: layer(list(t))[1], [layer]

    return make


def _memory_network():
    layer = ks.memory.MemoryNetwork(vocab_size=20, embed_dim=8, memory_size=5)
    return (
        [ints(20, 2, 5, 4, low=0), ints(20, 2, 3)],
        lambda t: layer([t[0], t[1]]),
        [layer],
    )


def _recurrent_encoder():
    layer = ks.seq2seq.RecurrentEncoder(30, 8, 8)
    return [ints(30, 2, 4)], lambda t: layer(t[0])[0], [layer]


def _attention_decoder():
    enc = ks.seq2seq.RecurrentEncoder(30, 8, 8)
    layer = ks.seq2seq.AttentionDecoder(40, 8, 16, memory_dim=16)
    return (
        [ints(30, 2, 4), ints(40, 2, 3)],
        lambda t: layer(t[1], enc(t[0])),
        [layer, enc],
    )


def _encoder_decoder():
    layer = ks.seq2seq.EncoderDecoder(20, 30, 8, 8, 16)
    return [ints(20, 2, 4), ints(30, 2, 3)], lambda t: layer((t[0], t[1])), [layer]


def _ntm():
    layer = ks.memory.NTM(4, memory_size=8, memory_width=4, return_sequences=True)
    return [floats(2, 5, 3)], lambda t: layer(t[0]), [layer]


def _bias():
    layer = ks.layers.Bias()
    return [floats(2, 5, 3)], lambda t: layer(t[0]), [layer]


def _probability_average():
    layer = ks.layers.ProbabilityAverage()
    return [floats(2, 5), floats(2, 5)], lambda t: layer([t[0], t[1]]), [layer]


def _stacked_cells():
    cells = ks.cells.StackedCells([ks.cells.LSTMCell(4), ks.cells.GRUCell(3)])
    layer = ks.layers.Recurrent(cells, return_sequences=True)
    return [floats(2, 5, 3)], lambda t: layer(t[0]), [cells, layer]


def _echo_state_generator():
    cell = ks.cells.EchoStateGenerator(ks.cells.EchoStateCell(4, feedback_size=1))
    layer = ks.layers.Recurrent(cell, return_sequences=True)
    return [floats(2, 5, 3)], lambda t: layer(t[0]), [cell, layer]


def _cell(cls):
    def make():
        if cls is ks.cells.StateMachineCell:  # any layers as f_s and f_o
            cell = cls(keras.layers.Dense(4, activation="tanh"), keras.layers.Dense(2))
        else:
            cell = cls(**CELL_ARGS.get(cls.__name__, dict(units=4)))
        layer = ks.layers.Recurrent(cell, return_sequences=True)
        return [floats(2, 5, 3)], lambda t: layer(t[0]), [cell, layer]

    return make


def _drop_in(cls):
    def make():
        layer = cls(4, return_sequences=True)
        return [floats(2, 5, 3)], lambda t: layer(t[0]), [layer]

    return make


LAYER_EXAMPLES = {
    "LSTM": _drop_in(ks.layers.LSTM),
    "GRU": _drop_in(ks.layers.GRU),
    "SimpleRNN": _drop_in(ks.layers.SimpleRNN),
    "Recurrent": _recurrent,
    "Bidirectional": _bidirectional,
    "CRF": _crf,
    "CharacterEncoder": _character_encoder,
    "ConditionedRecurrent": _conditioned,
    "FourDirectional2D": _four_directional,
    "OutputFeedback": _output_feedback,
    "RecursiveNN": _tree(ks.trees.RecursiveNN),
    "RNTN": _tree(ks.trees.RNTN),
    "TreeLSTM": _tree(ks.trees.TreeLSTM),
    "MemoryNetwork": _memory_network,
    "NTM": _ntm,
    "ProbabilityAverage": _probability_average,
    "Bias": _bias,
    "StackedCells": _stacked_cells,
    "EchoStateGenerator": _echo_state_generator,
    "RecurrentEncoder": _recurrent_encoder,
    "AttentionDecoder": _attention_decoder,
    "EncoderDecoder": _encoder_decoder,
}


def examples():
    cases = {}
    for name, cls in sorted(public_layer_classes().items()):
        if name in ABSTRACT or name in PREPROCESSING or name in COVERED_BY:
            continue
        if name in LAYER_EXAMPLES:
            cases[name] = LAYER_EXAMPLES[name]
        elif is_cell(cls):
            cases[name] = _cell(cls)
    return cases


EXAMPLES = examples()


def test_every_public_layer_is_covered():
    classes = public_layer_classes()
    assert "LSTMCell" in classes and "Recurrent" in classes
    missing = sorted(
        name
        for name in classes
        if name not in EXAMPLES
        and name not in ABSTRACT
        and name not in PREPROCESSING
        and name not in COVERED_BY
    )
    for name, inner in COVERED_BY.items():
        if name in classes:
            assert inner in EXAMPLES, f"{name} is covered by {inner}, which has no example"
    assert not missing, (
        f"public layers without a mixed-precision example: {missing}; add "
        "them to LAYER_EXAMPLES (or CELL_ARGS) in tests/distribute/"
        "test_mixed_precision.py"
    )


@pytest.mark.parametrize("name", sorted(PREPROCESSING))
def test_preprocessing_layers_have_no_float_weights(name):
    layer = PREPROCESSING[name]()
    assert not [w for w in layer.weights if "float" in str(w.dtype)]


class Harness(keras.Model):
    """Runs an example and reads it out in float32: (batch, 1).

    A subclassed model, so layers are called on real tensors only (no
    symbolic ``keras.Input``), as in a custom model of a user.
    """

    def __init__(self, build, layers):
        super().__init__()
        self.run_example = build
        # Attributes, so the model tracks (and trains) the example's layers.
        self.example_layers = list(layers)
        self.readout = keras.layers.Dense(1, dtype="float32")

    def call(self, inputs):
        outputs = self.run_example(list(inputs))
        first = outputs[0] if isinstance(outputs, (list, tuple)) else outputs
        if "float" not in str(first.dtype):
            # Integer outputs (CRF's best path): the layer's added loss trains
            # it; the readout only gives the model an output.
            first = ops.cast(first, "float32")
            return self.readout(ops.zeros_like(first[:, :1]))
        x = ops.cast(first, "float32")
        x = ops.mean(ops.reshape(x, (ops.shape(x)[0], -1)), axis=-1, keepdims=True)
        return self.readout(x)


@pytest.fixture
def policy_scope():
    previous = keras.config.dtype_policy()
    yield
    keras.config.set_dtype_policy(previous)


@pytest.mark.slow
@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_one_training_step_without_nan(name, policy, policy_scope):
    keras.config.set_dtype_policy(policy)
    keras.utils.set_random_seed(0)
    arrays, build, layers = EXAMPLES[name]()
    layer = layers[0]
    model = Harness(build, layers)
    # Eager steps on TensorFlow: tracing a graph per layer and policy would
    # cost minutes of CI, and the dtypes are checked the same way op by op.
    # JAX compiles each eager op on its own, so a jitted step is cheaper there.
    eager = keras.backend.backend() == "tensorflow"
    model.compile(optimizer=keras.optimizers.Adam(1e-2), loss="mse", run_eagerly=eager)
    target = np.ones((arrays[0].shape[0], 1), "float32")
    model(arrays)
    compute = policy.split("_")[1]
    assert layer.compute_dtype == compute and layer.variable_dtype == "float32"
    # Layers without trainable weights (a fixed echo-state reservoir) are
    # trained through the readout.
    watched = layer.trainable_weights or model.readout.trainable_weights
    before = [np.array(ops.convert_to_numpy(w), copy=True) for w in watched]
    # A float16 loss-scale optimizer skips steps whose gradients overflow and
    # lowers its scale; allow it a few steps to make its first update.
    changed = False
    for _ in range(4):
        result = model.train_on_batch(arrays, target)
        value = float(np.asarray(result[0] if isinstance(result, list) else result))
        assert np.isfinite(value), f"{name} under {policy}: loss {value}"
        after = [np.array(ops.convert_to_numpy(w), copy=True) for w in watched]
        for w in after:
            assert np.all(np.isfinite(w)), f"{name} under {policy}: non-finite weight"
        if any(not np.array_equal(a, b) for a, b in zip(before, after)):
            changed = True
            break
    assert changed, f"{name} under {policy}: no update was applied"
    out = model.predict_on_batch(arrays)
    assert np.all(np.isfinite(np.asarray(out, dtype="float32")))
