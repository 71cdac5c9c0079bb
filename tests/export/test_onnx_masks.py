"""``to_onnx`` under every mask Keras accepts: right and left padding, holes,
rows with no step, length 1, and batches or sequences of length 0.

ONNX's recurrent nodes only take per-row lengths; the exporter moves each
row's unmasked steps to its front and reads the outputs back at Keras's steps
(``keras_seqmodels/export/onnx_steps.py``). Hypothesis draws the masks, the
batch sizes and the lengths; each draw is run in onnxruntime and compared
with the Keras model called on the same arrays. One file per model (written
once per module) holds every layer kind and option.
"""

import keras
import numpy as np
import onnxruntime as ort
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import keras_seqmodels as ks
from keras_seqmodels.export import to_onnx

ATOL = 2e-5
SETTINGS = settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


def randomize(model, seed=0):
    rng = np.random.default_rng(seed)
    for w in model.weights:
        w.assign(rng.normal(size=w.shape).astype(w.dtype) * 0.5)
    return model


def package_model():
    """This package's layers: they accept batches and sequences of length 0."""
    ids = keras.Input((None,), dtype="int32", name="ids")
    h0 = keras.Input((4,), name="h0")
    c0 = keras.Input((4,), name="c0")
    x = keras.layers.Embedding(9, 3, mask_zero=True)(ids)
    mask = keras.ops.not_equal(ids, 0)
    R, C = ks.layers.Recurrent, ks.cells
    outputs = [
        R(C.LSTMCell(4, use_peepholes=True), return_sequences=True)(x),
        R(C.GRUCell(4, reset_after=False), return_sequences=True, zero_output_for_mask=False)(x),
        R(C.ElmanCell(4), return_sequences=True, go_backwards=True)(x),
        R(C.GRUCell(4), return_sequences=True, go_backwards=True, zero_output_for_mask=False)(x),
        R(C.LSTMCell(4))(x),
        R(C.GRUCell(4), go_backwards=True)(x),
        ks.layers.LSTM(4, return_sequences=True)(x),
        ks.layers.GRU(4)(x),
        R([C.LSTMCell(4), C.ElmanCell(4)], return_sequences=True, return_state=True)(x),
        # A mask passed with initial states (Keras does not pass one on
        # its own to a call with several tensor arguments).
        R(C.LSTMCell(4), return_sequences=True, return_state=True)(
            x, initial_state=[h0, c0], mask=mask
        ),
        R(C.GRUCell(4), return_state=True, go_backwards=True)(x, initial_state=[h0], mask=mask),
        R(C.GRUCell(4), return_state=True)(x, initial_state=[h0]),  # reads every step
        ks.layers.Bidirectional(R(C.LSTMCell(4), return_sequences=True))(x),
        ks.layers.Bidirectional(R(C.GRUCell(4), return_state=True))(
            x, initial_state=[h0, c0], mask=mask
        ),
        ks.layers.Bidirectional(R(C.ElmanCell(4)), merge_mode="sum")(x),
    ]
    flat = []
    for out in outputs:
        flat += out if isinstance(out, (list, tuple)) else [out]
    return randomize(keras.Model([ids, h0, c0], flat))


def keras_model():
    """Keras's own layers (which refuse length 0)."""
    ids = keras.Input((None,), dtype="int32", name="ids")
    x = keras.layers.Embedding(9, 3, mask_zero=True)(ids)
    L = keras.layers
    outputs = [
        L.LSTM(4, return_sequences=True)(x),
        L.GRU(4, return_sequences=True, zero_output_for_mask=True)(x),
        L.SimpleRNN(4, return_sequences=True, go_backwards=True)(x),
        L.LSTM(4, zero_output_for_mask=True)(x),
        L.GRU(4, go_backwards=True, zero_output_for_mask=True)(x),
        L.SimpleRNN(4, return_state=True)(x),
        L.Bidirectional(L.LSTM(4, return_sequences=True))(x),
        L.Bidirectional(L.GRU(4, return_state=True), merge_mode="ave")(x),
    ]
    flat = []
    for out in outputs:
        flat += out if isinstance(out, (list, tuple)) else [out]
    return randomize(keras.Model(ids, flat), seed=1)


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    folder = tmp_path_factory.mktemp("masks")
    files = {}
    for name, build in (("package", package_model), ("keras", keras_model)):
        model = build()
        path = to_onnx(model, str(folder / f"{name}.onnx"))
        files[name] = (model, ort.InferenceSession(path, providers=["CPUExecutionProvider"]))
    return files


def compare(model, session, feeds):
    got = session.run(None, dict(zip([i.name for i in session.get_inputs()], feeds)))
    expected = model(feeds if len(feeds) > 1 else feeds[0])
    expected = expected if isinstance(expected, (list, tuple)) else [expected]
    assert len(got) == len(expected)
    for k, (g, e) in enumerate(zip(got, expected)):
        e = keras.ops.convert_to_numpy(e)
        assert g.shape == e.shape, k
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=ATOL, err_msg=f"output {k}")


def ids_from(mask, seed):
    ids = np.random.default_rng(seed).integers(1, 9, size=mask.shape).astype("int32")
    return np.where(mask, ids, 0).astype("int32")


def masks(min_size):
    shapes = st.tuples(st.integers(min_size, 3), st.integers(min_size, 5))
    return shapes.flatmap(lambda shape: hnp.arrays(bool, shape))


@SETTINGS
@given(mask=masks(0), seed=st.integers(0, 2**16))
def test_package_layers_follow_any_mask(exported, mask, seed):
    model, session = exported["package"]
    states = np.random.default_rng(seed).normal(size=(2, mask.shape[0], 4)).astype("float32")
    compare(model, session, [ids_from(mask, seed), states[0], states[1]])


@SETTINGS
@given(mask=masks(1), seed=st.integers(0, 2**16))
def test_keras_layers_follow_any_mask(exported, mask, seed):
    model, session = exported["keras"]
    compare(model, session, [ids_from(mask, seed)])


@pytest.mark.parametrize(
    "rows",
    [
        [[0, 0, 3, 4, 5], [0, 0, 0, 0, 6]],  # left padding
        [[3, 0, 4, 0, 5], [0, 6, 0, 7, 0]],  # holes
        [[0, 0, 0, 0, 0], [3, 4, 0, 0, 0]],  # a row with no step
    ],
    ids=["left", "holes", "empty_row"],
)
@pytest.mark.parametrize("kind", ["package", "keras"])
def test_named_cases(exported, kind, rows):
    model, session = exported[kind]
    ids = np.array(rows, "int32")
    feeds = [ids] if kind == "keras" else [ids] + [np.ones((2, 4), "float32")] * 2
    compare(model, session, feeds)


@pytest.mark.parametrize("shape", [(2, 0), (0, 5), (0, 0), (3, 1)])
def test_length_zero_and_one(exported, shape):
    # onnxruntime's GRU and LSTM end the process on a batch or a sequence of
    # length 0; the file pads both by one, so it answers as Keras does.
    model, session = exported["package"]
    ids = np.full(shape, 5, "int32")
    compare(model, session, [ids] + [np.ones((shape[0], 4), "float32")] * 2)


def test_unmasked_layers_at_length_zero(tmp_path):
    inputs = keras.Input((None, 3), name="x")
    outputs = [
        ks.layers.Recurrent(ks.cells.GRUCell(4), return_sequences=True)(inputs),
        ks.layers.Recurrent(ks.cells.LSTMCell(4), go_backwards=True)(inputs),
        ks.layers.Bidirectional(ks.layers.Recurrent(ks.cells.GRUCell(4)))(inputs),
    ]
    model = randomize(keras.Model(inputs, outputs))
    session = ort.InferenceSession(to_onnx(model, str(tmp_path / "m.onnx")))
    for shape in [(2, 0, 3), (0, 4, 3), (2, 4, 3)]:
        compare(model, session, [np.ones(shape, "float32")])


def test_character_encoder_with_holes(tmp_path):
    # A character id 0 inside a word is a masked step for the encoder's
    # Keras LSTMs: the held output at the last unmasked step, both ways.
    chars = keras.Input((None, None), dtype="int32", name="char_ids")
    model = randomize(keras.Model(chars, ks.tagging.CharacterEncoder(9, 3, 4)(chars)))
    session = ort.InferenceSession(to_onnx(model, str(tmp_path / "chars.onnx")))
    ids = np.array([[[3, 0, 4, 5], [0, 0, 2, 0], [0, 0, 0, 0]]], "int32")
    compare(model, session, [ids])
