"""``keras_seqmodels.export.to_onnx``: native ONNX recurrent nodes, checked in
onnxruntime (CPU provider) against ``model.predict``.

Every model gets random weights, biases and peepholes included (so a gate
or bias put in the wrong place shows), is written with ``to_onnx``, passes
``onnx.checker.check_model``, has its LSTM/GRU/RNN node, no ``Loop`` or
``Scan`` and no unused node or weight, and gives ``model.predict``'s outputs
in onnxruntime within float32 rounding: ``rtol=1e-5, atol=1e-5`` (measured differences are
1e-7 to 2e-6). The exporter reads weights as NumPy arrays, so these tests
need no TensorFlow.
"""

import os

import keras
import numpy as np
import onnx
import onnxruntime as ort
import pytest

import keras_seqmodels as ks
from keras_seqmodels.export import to_onnx

RTOL = ATOL = 1e-5
RECURRENT_OPS = {"LSTM", "GRU", "RNN"}


def randomize(model, seed=0, scale=0.5):
    rng = np.random.default_rng(seed)
    for w in model.weights:
        w.assign(rng.normal(size=w.shape).astype(w.dtype) * scale)
    return model


def export(model, tmp_path, name="model.onnx", **options):
    path = to_onnx(model, os.path.join(str(tmp_path), name), **options)
    proto = onnx.load(path)
    onnx.checker.check_model(proto, full_check=True)
    ops = [node.op_type for node in proto.graph.node]
    assert not {"Loop", "Scan", "If"} & set(ops), ops
    used = {i for n in proto.graph.node for i in n.input} | {o.name for o in proto.graph.output}
    assert all(set(n.output) & used for n in proto.graph.node)  # no unused node
    assert all(i.name in used for i in proto.graph.initializer)  # no unused weight
    session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    return proto, session


def recurrent_nodes(proto):
    return [node for node in proto.graph.node if node.op_type in RECURRENT_OPS]


def attribute(node, name):
    for a in node.attribute:
        if a.name == name:
            return onnx.helper.get_attribute_value(a)
    return None


def check_outputs(model, session, feeds):
    """onnxruntime's outputs equal model.predict's; returns the largest
    absolute difference."""
    names = [i.name for i in session.get_inputs()]
    got = session.run(None, dict(zip(names, feeds)))
    expected = model.predict(feeds if len(feeds) > 1 else feeds[0], verbose=0)
    expected = list(expected) if isinstance(expected, (list, tuple)) else [expected]
    assert len(got) == len(expected)
    worst = 0.0
    for g, e in zip(got, expected):
        e = np.asarray(e)
        assert g.shape == e.shape
        np.testing.assert_allclose(g, e, rtol=RTOL, atol=ATOL)
        worst = max(worst, float(np.max(np.abs(g - e))) if g.size else 0.0)
    return worst


def sequences(batch, time=5, features=4, seed=1):
    return np.random.default_rng(seed).normal(size=(batch, time, features)).astype("float32")


# Right-padded ids: full, short, one step, and an all-padding row.
IDS = np.array([[3, 4, 5, 6, 7], [6, 7, 0, 0, 0], [1, 0, 0, 0, 0], [0, 0, 0, 0, 0]], "int32")

CELLS = {
    "lstm": lambda: ks.cells.LSTMCell(6),
    "lstm_peepholes": lambda: ks.cells.LSTMCell(6, use_peepholes=True),
    "gru_reset_after": lambda: ks.cells.GRUCell(6),
    "gru_reset_before": lambda: ks.cells.GRUCell(6, reset_after=False),
    "elman": lambda: ks.cells.ElmanCell(6),
}
NODE = {"lstm": "LSTM", "lstm_peepholes": "LSTM", "gru_reset_after": "GRU",
        "gru_reset_before": "GRU", "elman": "RNN"}  # fmt: skip


OPTIONS = {
    "last": {},
    "sequences": {"return_sequences": True},
    "backwards": {"return_sequences": True, "go_backwards": True},
    "state": {"return_state": True},
    "backwards_state": {"go_backwards": True, "return_state": True},
}


def branches(x, cell, options):
    """One recurrent layer per option set, all reading ``x``: one model (and
    one export and predict) covers them all."""
    outputs = []
    for name in options:
        out = ks.layers.Recurrent(CELLS[cell](), name=name, **OPTIONS[name])(x)
        outputs += out if isinstance(out, (list, tuple)) else [out]
    return outputs


@pytest.mark.parametrize("cell", sorted(CELLS))
def test_recurrent_layer_is_one_native_node(cell, tmp_path):
    inputs = keras.Input((None, 4))
    model = randomize(keras.Model(inputs, branches(inputs, cell, OPTIONS)))
    proto, session = export(model, tmp_path)
    nodes = recurrent_nodes(proto)
    assert [n.op_type for n in nodes] == [NODE[cell]] * len(OPTIONS)
    directions = {n.name.split("/")[0]: attribute(n, "direction").decode() for n in nodes}
    assert directions == {n: "reverse" if "backwards" in n else "forward" for n in OPTIONS}
    if cell.startswith("gru"):
        assert {attribute(n, "linear_before_reset") for n in nodes} == {
            int(cell == "gru_reset_after")
        }
    if cell == "lstm_peepholes":
        assert all(len(n.input) == 8 and n.input[7] for n in nodes)  # the P input
    # The batch and the length are free: batch 1 and batch 3, two lengths.
    check_outputs(model, session, [sequences(1, time=7)])
    check_outputs(model, session, [sequences(3)])


@pytest.mark.parametrize("activation", ["relu", "sigmoid"])
def test_elman_activation_is_the_node_activation(activation, tmp_path):
    inputs = keras.Input((None, 4))
    layer = ks.layers.Recurrent(ks.cells.ElmanCell(5, activation=activation),
                                return_sequences=True)  # fmt: skip
    model = randomize(keras.Model(inputs, layer(inputs)))
    proto, session = export(model, tmp_path)
    (node,) = recurrent_nodes(proto)
    assert attribute(node, "activations") == [activation.capitalize().encode()]
    check_outputs(model, session, [sequences(2)])


def test_hard_sigmoid_gates_use_keras_slope(tmp_path):
    # Keras 3's hard_sigmoid is relu6(x + 3) / 6: ONNX HardSigmoid(1/6, 0.5).
    inputs = keras.Input((None, 4))
    cell = ks.cells.LSTMCell(5, recurrent_activation="hard_sigmoid")
    model = randomize(keras.Model(inputs, ks.layers.Recurrent(cell)(inputs)), scale=1.0)
    proto, session = export(model, tmp_path)
    (node,) = recurrent_nodes(proto)
    assert attribute(node, "activations")[0] == b"HardSigmoid"
    np.testing.assert_allclose(attribute(node, "activation_alpha"), [1 / 6], rtol=1e-6)
    check_outputs(model, session, [sequences(2)])


@pytest.mark.parametrize("cell", ["lstm", "gru_reset_after", "elman"])
def test_mask_zero_becomes_sequence_lens(cell, tmp_path):
    ids = keras.Input((None,), dtype="int32", name="ids")
    x = keras.layers.Embedding(10, 4, mask_zero=True)(ids)
    model = randomize(keras.Model(ids, branches(x, cell, ["last", "sequences", "backwards"])))
    proto, session = export(model, tmp_path)
    nodes = recurrent_nodes(proto)
    assert len(nodes) == 3 and all(len(n.input) > 4 and n.input[4] for n in nodes)
    check_outputs(model, session, [IDS])
    check_outputs(model, session, [IDS[1:2]])


@pytest.mark.parametrize("kind", ["sequential", "functional"])
def test_masking_layer(kind, tmp_path):
    # A Sequential model hands masks from layer to layer (the exporter
    # follows them); a functional one records them as operations of its
    # graph (NotEqual, Any), which the exporter converts.
    layers = [
        keras.layers.Masking(0.0),
        ks.layers.Recurrent(ks.cells.GRUCell(4), return_sequences=True),
        ks.layers.Recurrent(ks.cells.LSTMCell(5)),
    ]
    inputs = keras.Input((None, 3))
    if kind == "sequential":
        model = randomize(keras.Sequential([inputs] + layers))
    else:
        x = inputs
        for layer in layers:
            x = layer(x)
        model = randomize(keras.Model(inputs, x))
    proto, session = export(model, tmp_path)
    assert all(node.input[4] for node in recurrent_nodes(proto))
    x = sequences(3, time=6, features=3)
    x[1, 4:] = 0.0
    x[2, 1:] = 0.0
    check_outputs(model, session, [x])


@pytest.mark.parametrize("return_sequences", [False, True])
def test_bidirectional_is_one_bidirectional_node(return_sequences, tmp_path):
    ids = keras.Input((None,), dtype="int32", name="ids")
    x = keras.layers.Embedding(10, 4, mask_zero=True)(ids)
    outputs = []
    for merge_mode in ["concat", "sum", "mean", "product", None]:
        layer = ks.layers.Bidirectional(
            ks.layers.Recurrent(ks.cells.LSTMCell(5, use_peepholes=True),
                                return_sequences=return_sequences),
            merge_mode=merge_mode,
        )  # fmt: skip
        out = layer(x)
        outputs += out if isinstance(out, (list, tuple)) else [out]
    model = randomize(keras.Model(ids, outputs))
    proto, session = export(model, tmp_path)
    nodes = recurrent_nodes(proto)
    assert [attribute(n, "direction") for n in nodes] == [b"bidirectional"] * 5
    check_outputs(model, session, [IDS])


@pytest.mark.parametrize("cell", ["gru_reset_before", "elman"])
def test_bidirectional_gru_and_elman(cell, tmp_path):
    inputs = keras.Input((None, 4))
    layer = ks.layers.Bidirectional(ks.layers.Recurrent(CELLS[cell](), return_sequences=True))
    model = randomize(keras.Model(inputs, layer(inputs)))
    proto, session = export(model, tmp_path)
    (node,) = recurrent_nodes(proto)
    assert node.op_type == NODE[cell]
    check_outputs(model, session, [sequences(2)])


@pytest.mark.parametrize(
    "rnn",
    [keras.layers.LSTM, keras.layers.GRU, keras.layers.SimpleRNN,
     ks.layers.LSTM, ks.layers.GRU, ks.layers.SimpleRNN],
    ids=["keras_lstm", "keras_gru", "keras_simple_rnn", "lstm", "gru", "simple_rnn"],
)  # fmt: skip
def test_keras_rnn_layers_and_keras_bidirectional(rnn, tmp_path):
    # Keras's own layers and the package's drop-ins map the same way (GRU
    # reset-after by default; masked return_sequences repeats the last
    # output: zero_output_for_mask=False, which the graph reproduces).
    ids = keras.Input((None,), dtype="int32", name="ids")
    x = keras.layers.Embedding(10, 4, mask_zero=True)(ids)
    x = keras.layers.Bidirectional(rnn(5, return_sequences=True), merge_mode="ave")(x)
    y = rnn(3, return_sequences=True)(x)
    model = randomize(keras.Model(ids, y))
    proto, session = export(model, tmp_path)
    directions = [attribute(n, "direction") for n in recurrent_nodes(proto)]
    assert directions == [b"bidirectional", b"forward"]
    check_outputs(model, session, [IDS])


def test_stacked_layers_with_dense_softmax(tmp_path):
    ids = keras.Input((None,), dtype="int32", name="ids")
    x = keras.layers.Embedding(12, 8, mask_zero=True)(ids)
    x = keras.layers.Dropout(0.3)(x)
    x = ks.layers.Recurrent(ks.cells.LSTMCell(6), return_sequences=True)(x)
    x = ks.layers.Recurrent(ks.cells.GRUCell(6), return_sequences=True)(x)
    x = keras.layers.TimeDistributed(keras.layers.Dense(5, activation="tanh"))(x)
    x = ks.layers.Recurrent(ks.cells.ElmanCell(4))(x)
    out = keras.layers.Dense(3, activation="softmax", name="probs")(x)
    model = randomize(keras.Model(ids, out))
    proto, session = export(model, tmp_path)
    assert [n.op_type for n in recurrent_nodes(proto)] == ["LSTM", "GRU", "RNN"]
    assert [o.name for o in proto.graph.output] == ["probs"]
    check_outputs(model, session, [IDS])


@pytest.mark.parametrize("go_backwards", [False, True])
def test_stacked_cells_in_one_layer_are_one_node_each(go_backwards, tmp_path):
    ids = keras.Input((None,), dtype="int32", name="ids")
    x = keras.layers.Embedding(10, 4, mask_zero=True)(ids)
    layer = ks.layers.Recurrent(
        [ks.cells.LSTMCell(5, use_peepholes=True), ks.cells.GRUCell(3), ks.cells.ElmanCell(4)],
        return_sequences=True, return_state=True, go_backwards=go_backwards,
    )  # fmt: skip
    model = randomize(keras.Model(ids, layer(x)))
    proto, session = export(model, tmp_path)
    assert [n.op_type for n in recurrent_nodes(proto)] == ["LSTM", "GRU", "RNN"]
    check_outputs(model, session, [IDS])


def test_initial_states_are_inputs_and_final_states_outputs(tmp_path):
    x = keras.Input((None, 3), name="x")
    h0, c0 = keras.Input((5,), name="h0"), keras.Input((5,), name="c0")
    g0, d0 = keras.Input((5,), name="g0"), keras.Input((5,), name="d0")
    uni = ks.layers.Recurrent(ks.cells.LSTMCell(5), return_sequences=True, return_state=True)
    y, h, c = uni(x, initial_state=[h0, c0])
    bi = ks.layers.Bidirectional(ks.layers.Recurrent(ks.cells.GRUCell(5), return_state=True))
    z, hf, hb = bi(y, initial_state=[g0, d0])
    model = randomize(keras.Model([x, h0, c0, g0, d0], [z, h, c, hf, hb]))
    proto, session = export(model, tmp_path)
    assert [i.name for i in proto.graph.input] == ["x", "h0", "c0", "g0", "d0"]
    rng = np.random.default_rng(3)
    feeds = [sequences(2, features=3)] + [rng.normal(size=(2, 5)).astype("float32")] * 4
    check_outputs(model, session, feeds)


def test_states_carry_a_stream_across_runs(tmp_path):
    # Windows run one after another with the states fed back give the
    # outputs of one run over the whole stream (ptb-lstm's evaluation).
    # Layer names that collide with the generated state output names.
    x = keras.Input((None, 3), name="x")
    h0, c0, g0 = (keras.Input((4,), name=n) for n in ("h0", "c0", "g0"))
    y, h, c = ks.layers.Recurrent(
        ks.cells.LSTMCell(4), return_sequences=True, return_state=True, name="rnn"
    )(x, initial_state=[h0, c0])
    z, g = ks.layers.Recurrent(
        ks.cells.GRUCell(4), return_sequences=True, return_state=True, name="rnn_1"
    )(y, initial_state=[g0])
    model = randomize(keras.Model([x, h0, c0, g0], [z, h, c, g]))
    proto, session = export(model, tmp_path)
    names = [o.name for o in proto.graph.output]
    assert len(set(names)) == 4
    stream = sequences(2, time=9, features=3)
    zeros = np.zeros((2, 4), "float32")
    states, pieces = [zeros] * 3, []
    for start, end in ((0, 4), (4, 7), (7, 9)):
        feeds = {"x": stream[:, start:end], "h0": states[0], "c0": states[1], "g0": states[2]}
        z, h, c, g = session.run(None, feeds)
        pieces.append(z)
        states = [h, c, g]
    whole = model.predict([stream, zeros, zeros, zeros], verbose=0)
    np.testing.assert_allclose(np.concatenate(pieces, axis=1), whole[0], rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(states[2], whole[3], rtol=RTOL, atol=ATOL)


def test_tied_softmax_and_merges(tmp_path):
    ids = keras.Input((None,), dtype="int32", name="ids")
    embedding = keras.layers.ReversibleEmbedding(11, 6)
    x = embedding(ids)
    a = ks.layers.Recurrent(ks.cells.LSTMCell(6), return_sequences=True)(x)
    b = ks.layers.Recurrent(ks.cells.GRUCell(6), return_sequences=True, go_backwards=True)(x)
    x = keras.layers.Add()([a, b])
    x = keras.layers.Concatenate()([x, a])
    x = keras.layers.Dense(6)(x)
    logits = ks.layers.Bias()(embedding(x, reverse=True))
    model = randomize(keras.Model(ids, keras.layers.Softmax()(logits)))
    _, session = export(model, tmp_path)
    check_outputs(model, session, [IDS[:2]])


@pytest.mark.parametrize("arrangement", ["renet", "plain"])
def test_four_directional_2d_is_two_bidirectional_nodes(arrangement, tmp_path):
    inputs = keras.Input((5, 6, 2))  # 5 rows: padded to whole 2 x 2 patches
    layer = ks.layers.FourDirectional2D(
        ks.cells.GRUCell(3, reset_after=False), vertical_cell=ks.cells.LSTMCell(4),
        patch_size=2, arrangement=arrangement,
    )  # fmt: skip
    model = randomize(keras.Model(inputs, layer(inputs)))
    proto, session = export(model, tmp_path)
    nodes = recurrent_nodes(proto)
    assert sorted(n.op_type for n in nodes) == ["GRU", "LSTM"]
    assert {attribute(n, "direction") for n in nodes} == {b"bidirectional"}
    x = np.random.default_rng(2).normal(size=(3, 5, 6, 2)).astype("float32")
    check_outputs(model, session, [x])
    check_outputs(model, session, [x[:1]])


def test_character_encoder_word_tagger(tmp_path):
    # The ud-ewt-upos emission network's form: word embeddings (mask_zero)
    # beside a character BiLSTM per word, a Keras BiLSTM, Dense scores. The
    # masks are merged by the graph's own mask operations.
    words = keras.Input((None,), dtype="int32", name="word_ids")
    chars = keras.Input((None, None), dtype="int32", name="char_ids")
    x = keras.layers.Embedding(12, 4, mask_zero=True)(words)
    x = keras.layers.Concatenate()([x, ks.tagging.CharacterEncoder(9, 3, 4)(chars)])
    x = keras.layers.Bidirectional(keras.layers.LSTM(5, return_sequences=True))(x)
    model = randomize(keras.Model([words, chars], keras.layers.Dense(3)(x)))
    proto, session = export(model, tmp_path)
    assert [attribute(n, "direction") for n in recurrent_nodes(proto)] == [b"bidirectional"] * 2
    rng = np.random.default_rng(4)
    char_ids = rng.integers(1, 9, size=(4, 5, 6)).astype("int32")
    char_ids[:, :, 4:] = 0  # words of at most 4 characters
    char_ids[IDS == 0] = 0  # padding words have no characters
    check_outputs(model, session, [IDS, char_ids])


def test_opset_choice(tmp_path):
    inputs = keras.Input((None, 4))
    model = randomize(keras.Model(inputs, ks.layers.Recurrent(CELLS["gru_reset_after"]())(inputs)))
    proto, session = export(model, tmp_path, opset=21)
    assert proto.opset_import[0].version == 21
    check_outputs(model, session, [sequences(2)])
    with pytest.raises(ValueError, match=r"`opset` must be an integer from 14 .* opset=9"):
        to_onnx(model, str(tmp_path / "old.onnx"), opset=9)


def test_keras_file_in(tmp_path):
    inputs = keras.Input((None, 4))
    model = randomize(keras.Model(inputs, ks.layers.Recurrent(CELLS["lstm_peepholes"]())(inputs)))
    model.save(tmp_path / "model.keras")
    path = to_onnx(str(tmp_path / "model.keras"), str(tmp_path / "out" / "model.onnx"))
    session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    check_outputs(model, session, [sequences(2)])


def test_unsupported_layer_names_itself_and_other_formats(tmp_path):
    inputs = keras.Input((None, 4))
    x = keras.layers.Conv1D(3, 2, name="conv")(inputs)
    model = keras.Model(inputs, ks.layers.Recurrent(ks.cells.LSTMCell(2))(x))
    message = r"layer Conv1D 'conv' cannot be written as ONNX; use .*to_litert or the SavedModel"
    with pytest.raises(ValueError, match=message):
        to_onnx(model, str(tmp_path / "m.onnx"))
    assert not os.path.exists(tmp_path / "m.onnx")


def test_cell_without_onnx_node_is_refused(tmp_path):
    inputs = keras.Input((None, 4))
    layer = ks.layers.Recurrent(ks.cells.GatedCell(3), name="gated")
    model = keras.Model(inputs, layer(inputs))
    with pytest.raises(ValueError, match=r"Recurrent 'gated'.*cell GatedCell has no ONNX"):
        to_onnx(model, str(tmp_path / "m.onnx"))


def test_activation_onnx_lacks_is_refused(tmp_path):
    inputs = keras.Input((None, 4))
    layer = ks.layers.Recurrent(ks.cells.LSTMCell(3, activation="gelu"), name="lstm")
    model = keras.Model(inputs, layer(inputs))
    with pytest.raises(ValueError, match=r"Recurrent 'lstm': its `activation` 'gelu' has no"):
        to_onnx(model, str(tmp_path / "m.onnx"))


def test_stateful_layer_is_refused(tmp_path):
    inputs = keras.Input(batch_shape=(2, None, 4))
    layer = ks.layers.Recurrent(ks.cells.LSTMCell(3), stateful=True, name="carried")
    model = keras.Model(inputs, layer(inputs))
    with pytest.raises(ValueError, match=r"'carried'.*stateful=True.*stateless copy"):
        to_onnx(model, str(tmp_path / "m.onnx"))


@pytest.mark.slow  # loads a zoo model
def test_ptb_lstm_zoo_model(tmp_path):
    """The shipped word language model (tied ReversibleEmbedding + Bias,
    two LSTMs) on windows of real-looking ids, batch 1 and 3."""
    model = ks.zoo.load("ptb-lstm").model
    proto, session = export(model, tmp_path, "ptb-lstm.onnx")
    assert [n.op_type for n in recurrent_nodes(proto)] == ["LSTM", "LSTM"]
    vocab = model.get_layer("embedding").input_dim
    tables = [i for i in proto.graph.initializer if len(i.dims) == 2 and vocab in i.dims]
    assert len(tables) == 1  # the tied matrix is stored once
    rng = np.random.default_rng(7)
    check_outputs(model, session, [rng.integers(0, vocab, size=(1, 20)).astype("int32")])
    check_outputs(model, session, [rng.integers(0, vocab, size=(3, 35)).astype("int32")])


@pytest.mark.slow  # loads a zoo model
def test_mnist_renet_zoo_model(tmp_path):
    """Two FourDirectional2D layers of reset-before GRUs (four bidirectional
    GRU nodes), Rescaling, Reshape, Flatten and Dense, on pixel values."""
    model = ks.zoo.load("mnist-renet").model
    proto, session = export(model, tmp_path, "mnist-renet.onnx")
    assert [n.op_type for n in recurrent_nodes(proto)] == ["GRU"] * 4
    pixels = np.random.default_rng(8).integers(0, 256, size=(2, 28, 28)).astype("float32")
    check_outputs(model, session, [pixels])


@pytest.mark.slow  # loads a zoo model
def test_ud_ewt_upos_emission_network(tmp_path):
    """The tagger's id-level ensemble up to its CRF (whose Viterbi decoding
    ONNX cannot carry, and which the error says)."""
    strings_model = ks.zoo.load("ud-ewt-upos").model
    with pytest.raises(ValueError, match=r"'sentences'.*strings.*get_layer\('tagger_ids'\)"):
        to_onnx(strings_model, str(tmp_path / "strings.onnx"))
    tagger = strings_model.get_layer("tagger_ids")
    with pytest.raises(ValueError, match=r"CRF 'crf'.*emission scores"):
        to_onnx(tagger, str(tmp_path / "tagger.onnx"))
    emissions = keras.Model(tagger.inputs, tagger.get_layer("mean_scores").output)
    proto, session = export(emissions, tmp_path, "ud-ewt-upos-emissions.onnx")
    assert {n.op_type for n in recurrent_nodes(proto)} == {"LSTM"}
    rng = np.random.default_rng(9)
    words = np.array([[5, 17, 230, 4, 0, 0], [8, 1, 0, 0, 0, 0]], "int32")
    chars = rng.integers(1, 40, size=(2, 6, 20)).astype("int32")
    chars[:, :, 7:] = 0
    chars[words == 0] = 0
    check_outputs(emissions, session, [words, chars])


def test_ntm_copy_is_refused_with_the_reason(tmp_path):
    with pytest.raises(ValueError, match=r"NTM 'ntm'.*memory matrix.*to_litert"):
        to_onnx(ks.zoo.load("ntm-copy").model, str(tmp_path / "ntm.onnx"))
