"""Exports of your own models refuse a request of the wrong shape or dtype by name.

A loaded SavedModel does not check a request against its signature's
``TensorSpec``: without a check of its own, a rank-0 or rank-2 string sent to
a ``(batch,)`` input runs into the graph and fails deep inside (``ConcatOp :
Can't concatenate scalars``, ``Ranks of all input tensors should match``).
Each kind of user model that ``seqmodels export mine.keras DIR`` serves (a
string tagger, a ``Translator``, a ``WordLanguageModel``, a
``TreeClassifier``, anything else through the generic exporter) is built
tiny, saved as ``.keras``, exported with ``keras_seqmodels.export.export``
(the function behind the command) and loaded with plain
``tf.saved_model.load``. Hypothesis then draws requests of ranks 0-3, sizes
0-3 and several dtypes: a request of the signature's shape is answered with
one row per item; one of another shape is refused with an
``InvalidArgumentError`` that names the model, the input, the expected shape
and the shape received; one of another dtype is refused before the graph
runs with an ``InvalidArgumentError`` naming the expected dtype.
"""

import re

import keras
import numpy as np
import pytest
from fuzz_record import fuzz_settings, record
from hypothesis import example, given
from hypothesis import strategies as st

from keras_seqmodels import export

pytestmark = pytest.mark.tf_only  # SavedModel export runs on TensorFlow

DTYPES = ["string", "int32", "int64", "float32", "float64", "bool"]


def _tagger():
    from keras_seqmodels.tagging import build_tagger

    model, _ = build_tagger(["a"], ["a"], ["DET"], embedding_dim=2, char_units=2, units=2)
    return model


def _translator():
    from keras_seqmodels.seq2seq import EncoderDecoder, Translator, text

    vocab = [text.START, text.END, "a", "b"]
    core = EncoderDecoder(6, 6, 4, 4, 4, start_id=2, end_id=3)
    return Translator(core, vocab, vocab, beam_size=2, max_output_length=3)


def _language_model():
    from keras_seqmodels.language_model import WordLanguageModel

    return WordLanguageModel(["<eos>", "<unk>", "a"], units=2, layers=1)


def _tree_classifier():
    from keras_seqmodels import trees

    network = trees.build_tree_network(["", "a"], num_classes=3, embedding_dim=2, units=2)
    model = trees.TreeClassifier(network, labels=[0, 1, 2])
    model.build()
    return model


def _sequence_model():
    inputs = keras.Input((None, 2), name="sequences")
    pooled = keras.layers.GlobalAveragePooling1D()(inputs)
    return keras.Model(inputs, keras.layers.Dense(1)(pooled), name="my_sequences")


# kind: (builder, expected kind of exporter, input name, dtype, shape, form, an item)
KINDS = {
    "tagger": (_tagger, "a tagger", "text", "string", [None],
               "(batch,), one string per text", b"a a"),
    "translator": (_translator, "a translator", "inputs", "string", [None],
                   "(batch,), one string per sentence", b"a b"),
    "language model": (_language_model, "a language model", "text", "string", [None],
                       "(batch,), one string per text", b"a"),
    "tree classifier": (_tree_classifier, "a tree classifier", "trees", "string", [None],
                        "(batch,), one string per tree", b"(1 (1 a) (0 a))"),
    "generic": (_sequence_model, None, "sequences", "float32", [None, None, 2],
                "(None, None, 2)", 0.5),
}  # fmt: skip


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """``{kind: (signature, served name)}``, each exported from a ``.keras`` file."""
    import tensorflow as tf

    out = {}
    root = tmp_path_factory.mktemp("user_exports")
    for kind, (build, exporter_kind, *_) in KINDS.items():
        keras.utils.set_random_seed(0)
        model = build()
        path = str(root / f"{kind.replace(' ', '_')}.keras")
        model.save(path)
        loaded = keras.saving.load_model(path, compile=False, safe_mode=True)
        # The test covers each exporter that exporter_for_model picks for a user model.
        assert export.exporter_for_model(loaded)[1] == exporter_kind
        directory = export.export(path, str(root / kind.replace(" ", "_")))
        signature = tf.saved_model.load(directory).signatures["serving_default"]
        out[kind] = (signature, loaded.name)
    return out


def call(served, kind, shape, dtype):
    """Send a request of ``shape`` and ``dtype``; the outputs or the error text."""
    import tensorflow as tf

    signature, _ = served[kind]
    name, item = KINDS[kind][2], KINDS[kind][6]
    if dtype == "string":
        value = np.full(shape, item if isinstance(item, bytes) else b"0", dtype=object)
    else:
        value = np.full(shape, 0 if isinstance(item, bytes) else item, dtype=dtype)
    try:
        return signature(**{name: tf.constant(value, dtype=dtype)}), None
    except tf.errors.InvalidArgumentError as err:
        return None, str(err)


def fits(shape, expected):
    return len(shape) == len(expected) and all(
        want is None or got == want for got, want in zip(shape, expected)
    )


@st.composite
def requests(draw):
    rank = draw(st.integers(0, 3))
    shape = draw(st.lists(st.integers(0, 3), min_size=rank, max_size=rank))
    # Mostly the signature's own dtype, so that the shape check is what is tried.
    dtype = draw(st.sampled_from(["own"] * 4 + DTYPES))
    return tuple(shape), dtype


@pytest.mark.parametrize("kind", list(KINDS))
@fuzz_settings(40)
@given(request=requests())
@example(request=((), "own"))  # a rank-0 string: "ConcatOp : Can't concatenate scalars"
@example(request=((1, 1), "own"))  # rank 2: "Ranks of all input tensors should match"
@example(request=((2,), "own"))
@example(request=((2, 3, 2), "own"))
def test_request_of_another_shape_or_dtype_is_refused_by_name(served, kind, request):
    shape, dtype = request
    _, _, name, own, expected, form, _ = KINDS[kind]
    dtype = own if dtype == "own" else dtype
    outputs, error = call(served, kind, shape, dtype)
    if dtype != own:
        record("export request shape", "wrong dtype refused")
        assert error is not None, (kind, shape, dtype)
        assert re.search(rf"was expected to be a {own[:5]}\w* tensor but is a", error), error
    elif fits(shape, expected):
        record("export request shape", "answered")
        assert error is None, (kind, shape, error)
        for key, value in outputs.items():
            assert value.shape[0] == shape[0], (kind, shape, key, value.shape)
    else:
        record("export request shape", "wrong shape refused")
        served_name = served[kind][1]
        received = "[" + ",".join(map(str, shape)) + "]"
        message = (f"{served_name}: wrong request shape: `{name}` must have shape {form}. "
                   f"Received shape {received}")  # fmt: skip
        assert error is not None, (kind, shape)
        assert message in error, error
        # Refused by the check before any other op of the graph.
        assert "ConcatOp" not in error and "Ranks of all" not in error, error


# -- the zoo's exports go through the same check ------------------------------------------

# (zoo name, signature): the exporters that no user-model kind above reaches
# (question answering, images, copy task); the zoo's tagger, translator,
# language model and tree classifier use the exporters tried above.
ZOO = [("babi-memn2n", "serving_default"), ("babi-memn2n", "serve_ids"),
       ("mnist-renet", "serving_default"), ("ntm-copy", "serving_default")]  # fmt: skip


@pytest.fixture(scope="module")
def zoo_served(zoo_savedmodel):
    import tensorflow as tf

    out = {}
    for name in sorted({name for name, _ in ZOO}):
        out[name] = tf.saved_model.load(zoo_savedmodel(name))
    return out


@st.composite
def zoo_requests(draw, specs):
    """One input of a drawn shape, the others well formed with the same batch."""
    wrong = draw(st.sampled_from(sorted(specs)))
    expected = specs[wrong].shape.as_list()
    if draw(st.booleans()):
        shape = [draw(st.integers(0, 3)) if d is None else d for d in expected]
    else:
        rank = draw(st.integers(0, 3))
        shape = draw(st.lists(st.integers(0, 3), min_size=rank, max_size=rank))
    batch = shape[0] if shape else 1
    shapes = {
        key: [batch] + [2 if d is None else d for d in spec.shape.as_list()[1:]]
        for key, spec in specs.items()
    }
    shapes[wrong] = shape
    return wrong, shapes


def _value(spec, shape):
    if spec.dtype.name == "string":
        return np.full(shape, b"mary went to the kitchen .", dtype=object)
    return np.zeros(shape, spec.dtype.as_numpy_dtype)


@pytest.mark.parametrize("name,signature_name", ZOO)
def test_zoo_export_refuses_another_shape_by_name(zoo_served, name, signature_name):
    import tensorflow as tf

    signature = zoo_served[name].signatures[signature_name]
    specs = signature.structured_input_signature[1]

    @fuzz_settings(15)
    @given(request=zoo_requests(specs))
    def prop(request):
        wrong, shapes = request
        feed = {k: tf.constant(_value(specs[k], s), dtype=specs[k].dtype)
                for k, s in shapes.items()}  # fmt: skip
        fits_all = all(fits(shapes[k], specs[k].shape.as_list()) for k in specs)
        try:
            outputs, error = signature(**feed), None
        except tf.errors.InvalidArgumentError as err:
            outputs, error = None, str(err)
        if fits_all:
            record("zoo export request shape", "answered")
            assert error is None, (name, shapes, error)
            for key, value in outputs.items():
                assert value.shape[0] == shapes[wrong][0], (name, shapes, key, value.shape)
        else:
            record("zoo export request shape", "wrong shape refused")
            received = "[" + ",".join(map(str, shapes[wrong])) + "]"
            assert error is not None, (name, shapes)
            assert f"{name}: wrong request shape: `{wrong}` must have shape" in error, error
            assert f"Received shape {received}" in error, error

    prop()
