"""LiteRT export (``keras_seqmodels.export.to_litert``), run in LiteRT's own
interpreter (``ai_edge_litert``).

Each model is converted, its op list read from the flatbuffer and the
interpreter, and its outputs compared with ``model.predict``. Tolerances:
float32 files ``rtol=1e-5, atol=1e-5`` (the fused kernel sums in another
order; measured differences are below 2e-7); for the quantized 32 -> 64 LSTM
and dense layer (outputs up to 0.39), absolute: float16 weights ``2e-3``
(measured 1.4e-4), dynamic-range int8 ``2e-2`` (measured 3.7e-3), full int8
``5e-2`` (measured 1.2e-2); file sizes at most 0.6x (float16, measured 0.53x)
and 0.35x (int8, measured 0.29x) of the float file.
"""

import os

import keras
import numpy as np
import pytest

import keras_seqmodels as ks
from keras_seqmodels import export
from keras_seqmodels.export import litert_export, litert_runtime

pytestmark = pytest.mark.tf_only  # the LiteRT converter runs on TensorFlow
interpreter_module = pytest.importorskip("ai_edge_litert.interpreter")

T, F, N = 6, 3, 5
FUSED = litert_export.FUSED_LSTM
FUSED_RNN = litert_export.FUSED_RNN


def _convert(model, tmp_path, name="model.tflite", **options):
    path = export.to_litert(model, os.path.join(tmp_path, name), **options)
    with open(path, "rb") as f:
        content = f.read()
    return interpreter_module.Interpreter(model_path=path), content


def _ops(interpreter):
    return [op["op_name"] for op in interpreter._get_ops_details()]


def _assert_fused(interpreter, content, count, op=FUSED):
    names = _ops(interpreter)
    assert names.count(op) == count, names
    assert litert_export.op_names(content) == names
    assert "WHILE" not in names
    assert all(n.isupper() and not n.startswith("Flex") for n in names), names


def _inputs(batch, seed=0):
    return np.random.default_rng(seed).normal(size=(batch, T, F)).astype("float32")


def _lstm(units=N, **options):
    return ks.layers.Recurrent(ks.cells.LSTMCell(units, **options.pop("cell", {})), **options)


def test_batch_one_fixed_length(tmp_path):
    model = keras.Sequential([keras.Input((T, F), batch_size=1), _lstm(return_sequences=True)])
    interpreter, content = _convert(model, tmp_path)
    _assert_fused(interpreter, content, 1)
    x = _inputs(1)
    (y,) = litert_export.run_litert(interpreter, x)
    np.testing.assert_allclose(y, model.predict(x, verbose=0), rtol=1e-5, atol=1e-5)


def test_stacked_peepholes_go_backwards_dynamic_batch(tmp_path):
    keras.utils.set_random_seed(1)
    normal = keras.initializers.RandomNormal(stddev=3.0, seed=0)
    peepholes = {"use_peepholes": True, "peephole_initializer": normal}
    model = keras.Sequential(
        [
            keras.Input((T, F)),
            _lstm(return_sequences=True),
            _lstm(7, cell=peepholes, go_backwards=True, return_sequences=True),
            _lstm(4, cell=peepholes),
            keras.layers.Dense(2),
        ]
    )
    interpreter, content = _convert(model, tmp_path)
    _assert_fused(interpreter, content, 3)
    assert "REVERSE_V2" in _ops(interpreter)
    for batch in (3, 1):
        x = _inputs(batch, seed=batch)
        (y,) = litert_export.run_litert(interpreter, x)
        np.testing.assert_allclose(y, model.predict(x, verbose=0), rtol=1e-5, atol=1e-5)
    # The peepholes matter: without them the outputs differ by far more than
    # the tolerance (measured 6e-3 with this seed).
    no_peepholes = keras.models.clone_model(model)
    no_peepholes.set_weights(model.get_weights())
    for layer in no_peepholes.layers[1:3]:
        layer.cell.peephole_kernel.assign(np.zeros((3, layer.cell.units), "float32"))
    difference = np.abs(no_peepholes.predict(x, verbose=0) - y).max()
    assert difference > 1e-3


def test_states_persist_until_reset(tmp_path):
    """With ``stateful=True`` LiteRT's fused kernel keeps h and c between
    invocations; run_litert resets them, as model.predict starts from zeros."""
    model = keras.Sequential([keras.Input((T, F), batch_size=2), _lstm()])
    interpreter, _ = _convert(model, tmp_path, stateful=True)
    x = _inputs(2)
    first = litert_export.run_litert(interpreter, x)[0]
    np.testing.assert_allclose(first, litert_export.run_litert(interpreter, x)[0], atol=1e-6)
    interpreter.invoke()  # again, without a reset: it continues the sequence
    (index,) = interpreter._get_full_signature_list()["serving_default"]["outputs"].values()
    assert np.abs(interpreter.get_tensor(index) - first).max() > 1e-3


def test_bidirectional(tmp_path):
    model = keras.Sequential(
        [keras.Input((T, F)), ks.layers.Bidirectional(_lstm(return_sequences=True))]
    )
    interpreter, content = _convert(model, tmp_path)
    _assert_fused(interpreter, content, 2)
    x = _inputs(2)
    (y,) = litert_export.run_litert(interpreter, x)
    np.testing.assert_allclose(y, model.predict(x, verbose=0), rtol=1e-5, atol=1e-5)


def test_keras_lstm_and_keras_bidirectional(tmp_path):
    """Keras's own LSTM and wrapper, and the package's drop-in LSTM."""
    inputs = keras.Input((T, F))
    h = keras.layers.Bidirectional(keras.layers.LSTM(N, return_sequences=True))(inputs)
    nested = keras.Sequential(
        [keras.Input((None, 2 * N)), ks.layers.LSTM(6, return_sequences=True)]
    )
    h = nested(h)
    outputs = keras.layers.LSTM(4, go_backwards=True)(h)
    model = keras.Model(inputs, outputs)
    interpreter, content = _convert(model, tmp_path)
    _assert_fused(interpreter, content, 4)
    x = _inputs(2)
    (y,) = litert_export.run_litert(interpreter, x)
    np.testing.assert_allclose(y, model.predict(x, verbose=0), rtol=1e-5, atol=1e-5)


def _activations(content):
    """The fused activation of each UNIDIRECTIONAL_SEQUENCE_RNN op, in order."""
    from tensorflow.lite.python import schema_py_generated as schema

    names = {v: k for k, v in vars(schema.ActivationFunctionType).items() if k.isupper()}
    model = litert_export._read(content)
    return [
        names[op.builtinOptions.fusedActivationFunction]
        for op in model.subgraphs[0].operators
        if litert_runtime.op_name(model, op) == FUSED_RNN
    ]


def test_elman_stacked_relu_go_backwards_dynamic_batch(tmp_path):
    """Recurrent(ElmanCell), the package's SimpleRNN (relu, backwards, no
    bias) and Keras's SimpleRNN become one fused RNN op each."""
    keras.utils.set_random_seed(2)
    model = keras.Sequential(
        [
            keras.Input((T, F)),
            ks.layers.Recurrent(ks.cells.ElmanCell(N), return_sequences=True),
            ks.layers.SimpleRNN(
                7, activation="relu", go_backwards=True, use_bias=False, return_sequences=True
            ),
            keras.layers.SimpleRNN(4, bias_initializer="glorot_uniform"),
            keras.layers.Dense(2),
        ]
    )
    interpreter, content = _convert(model, tmp_path)
    _assert_fused(interpreter, content, 3, op=FUSED_RNN)
    assert FUSED not in _ops(interpreter) and "REVERSE_V2" in _ops(interpreter)
    # The converter's rewrite always sets tanh; the exporter sets relu.
    assert _activations(content) == ["TANH", "RELU", "TANH"]
    for batch in (3, 1):
        x = 3.0 * _inputs(batch, seed=batch)  # large enough for relu != tanh
        (y,) = litert_export.run_litert(interpreter, x)
        np.testing.assert_allclose(y, model.predict(x, verbose=0), rtol=1e-5, atol=1e-5)


def test_elman_bidirectional_batch_one(tmp_path):
    """The package's and Keras's wrappers over Elman layers: two fused RNN
    ops each, at batch 1 with a fixed length (the on-device case)."""
    inputs = keras.Input((T, F), batch_size=1)
    h = ks.layers.Bidirectional(ks.layers.SimpleRNN(N, return_sequences=True))(inputs)
    outputs = keras.layers.Bidirectional(keras.layers.SimpleRNN(4), merge_mode="sum")(h)
    model = keras.Model(inputs, outputs)
    interpreter, content = _convert(model, tmp_path)
    _assert_fused(interpreter, content, 4, op=FUSED_RNN)
    x = _inputs(1)
    (y,) = litert_export.run_litert(interpreter, x)
    np.testing.assert_allclose(y, model.predict(x, verbose=0), rtol=1e-5, atol=1e-5)


def test_elman_free_length(tmp_path):
    """Dynamic batch and length: a loop could not take both (refused for the
    GRU below); the fused op runs at any length."""
    model = keras.Sequential(
        [keras.Input((None, F)), ks.layers.SimpleRNN(N, return_sequences=True)]
        + [ks.layers.SimpleRNN(4)]
    )
    interpreter, content = _convert(model, tmp_path)
    _assert_fused(interpreter, content, 2, op=FUSED_RNN)
    for shape in ((2, 9, F), (3, 2, F)):
        x = np.random.default_rng(0).normal(size=shape).astype("float32")
        (y,) = litert_export.run_litert(interpreter, x)
        np.testing.assert_allclose(y, model.predict(x, verbose=0), rtol=1e-5, atol=1e-5)


def test_elman_masked_runs_as_loop(tmp_path):
    """The fused RNN op has no sequence lengths: a masked Elman layer stays a
    loop of builtin ops, and is still right."""
    model = keras.Sequential(
        [
            keras.Input((T,), dtype="int32"),
            keras.layers.Embedding(9, F, mask_zero=True),
            ks.layers.SimpleRNN(N),
        ]
    )
    interpreter, content = _convert(model, tmp_path, batch_size=2)
    names = _ops(interpreter)
    assert "WHILE" in names and FUSED_RNN not in names, names
    x = np.array([[1, 2, 3, 0, 0, 0], [4, 5, 6, 7, 8, 1]], "int32")
    (y,) = litert_export.run_litert(interpreter, x)
    np.testing.assert_allclose(y, model.predict(x, verbose=0), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("batch, length", [(1, None), (None, T)])
def test_masked_lstms_run_as_loops(tmp_path, batch, length):
    """The fused LSTM op has no sequence lengths: masked LSTM layers (one
    bidirectional) convert as loops of builtin ops, with a warning, and
    agree with Keras on right-padded rows at a fixed batch and dynamic length
    (a WHILE loop) as at a dynamic batch and fixed length (unrolled)."""
    inputs = keras.Input((length,), batch_size=batch, dtype="int32")
    x = keras.layers.Embedding(50, F, mask_zero=True)(inputs)
    x = ks.layers.Bidirectional(_lstm(return_sequences=True, name="masked_bi"))(x)
    model = keras.Model(inputs, _lstm(name="masked_last")(x))
    with pytest.warns(UserWarning, match="receives a mask.*converts as a loop"):
        interpreter, content = _convert(model, tmp_path)
    assert FUSED not in _ops(interpreter)
    rows = np.zeros((2, T), "int32")
    rows[0, :3], rows[1, :5] = [3, 4, 5], [7, 8, 9, 10, 11]
    for x in (rows[:1], rows[1:]):
        (y,) = litert_export.run_litert(interpreter, x)
        np.testing.assert_allclose(y, model.predict(x, verbose=0), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("batch", [1, None])
def test_initial_states_go_into_the_fused_op_and_returned_states_run_as_a_loop(
    tmp_path, batch
):
    """An LSTM called with ``initial_state`` is one fused op whose state
    tensors the states feed (here model inputs, set at every call), at a fixed
    batch (the converter wires them) and at a dynamic one (an ``ADD`` writes
    them in, ``litert_runtime.feed_states``). One with ``return_state=True``
    is a loop of builtin ops, with a warning (the fused op outputs the
    sequence only). Keras's outputs and states, call after call."""
    inputs = keras.Input((T, F), batch_size=batch)
    h0, c0 = keras.Input((N,), batch_size=batch), keras.Input((N,), batch_size=batch)
    sequence = _lstm(return_sequences=True, name="started")(inputs, initial_state=[h0, c0])
    last, h, c = _lstm(return_state=True, name="states_out")(sequence)
    model = keras.Model([inputs, h0, c0], [last, h, c])
    with pytest.warns(UserWarning, match="'states_out' has return_state=True"):
        interpreter, content = _convert(model, tmp_path)
    assert _ops(interpreter).count(FUSED) == 1
    assert litert_runtime.stateful_ops(content) == []
    rng = np.random.default_rng(4)
    for rows in (1, 1) if batch else (3, 1, 2):
        x = [_inputs(rows, seed=rows), rng.normal(size=(rows, N)).astype("float32"),
             rng.normal(size=(rows, N)).astype("float32")]  # fmt: skip
        got = litert_export.run_litert(interpreter, *x)
        for a, b in zip(got, model.predict(x, verbose=0)):
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("quantize, atol", [(None, 1e-5), ("float16", 2e-3), ("dynamic", 5e-2)])
def test_two_fed_lstms_at_a_dynamic_batch(tmp_path, quantize, atol):
    """Two stacked LSTMs, each started from its own model inputs, at a dynamic
    batch: each state goes to its own op (matched by the op's weights)."""
    inputs = keras.Input((T, F))
    starts = [keras.Input((N,)) for _ in range(4)]
    x = _lstm(return_sequences=True, name="first")(inputs, initial_state=starts[:2])
    outputs = _lstm(name="second")(x, initial_state=starts[2:])
    model = keras.Model([inputs, *starts], outputs)
    interpreter, _ = _convert(model, tmp_path, quantize=quantize)
    assert _ops(interpreter).count(FUSED) == 2
    rng = np.random.default_rng(6)
    for rows in (2, 5):
        x = [_inputs(rows, seed=rows)] + [
            rng.normal(size=(rows, N)).astype("float32") for _ in range(4)
        ]
        (got,) = litert_export.run_litert(interpreter, *x)
        np.testing.assert_allclose(got, model.predict(x, verbose=0), atol=atol, rtol=0)


def test_initial_states_computed_by_the_model_go_into_the_fused_op(tmp_path):
    """States computed from another input (a context vector through Dense
    layers, as an encoder's would be) feed the fused op at every call."""
    inputs, context = keras.Input((T, F), batch_size=1), keras.Input((5,), batch_size=1)
    h0 = keras.layers.Dense(N, activation="tanh")(context)
    c0 = keras.layers.Dense(N)(context)
    outputs = _lstm(name="conditioned")(inputs, initial_state=[h0, c0])
    model = keras.Model([inputs, context], outputs)
    interpreter, content = _convert(model, tmp_path)
    assert _ops(interpreter).count(FUSED) == 1
    assert "FILL" not in _ops(interpreter)  # nothing to zero: the Dense layers write the states
    rng = np.random.default_rng(5)
    for _ in range(2):
        x = [_inputs(1), rng.normal(size=(1, 5)).astype("float32")]
        (got,) = litert_export.run_litert(interpreter, *x)
        np.testing.assert_allclose(got, model.predict(x, verbose=0), rtol=1e-5, atol=1e-5)


def test_elman_loop_where_the_stub_op_is_taken(tmp_path, monkeypatch):
    """Where TensorFlow's converter registered its own (unusable) definition
    of the RNN stub op first, Elman layers convert as loops, still right."""
    monkeypatch.setattr(litert_export, "_register_rnn_stub", lambda: False)
    model = keras.Sequential(
        [keras.Input((T, F), batch_size=2), ks.layers.SimpleRNN(N, return_sequences=True)]
    )
    with pytest.warns(UserWarning, match="converts as a WHILE loop.*fresh process"):
        interpreter, _ = _convert(model, tmp_path)
    names = _ops(interpreter)
    assert "WHILE" in names and FUSED_RNN not in names, names
    x = _inputs(2)
    (y,) = litert_export.run_litert(interpreter, x)
    np.testing.assert_allclose(y, model.predict(x, verbose=0), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(
    "fuse, fused_ops",
    [(("lstm", "rnn"), [FUSED, FUSED_RNN]), (("lstm",), [FUSED]), ("rnn", [FUSED_RNN]), ((), [])],
)
def test_fuse_chooses_fused_ops_or_loops(tmp_path, fuse, fused_ops):
    """``fuse`` names the layer kinds written as fused ops; the others are
    WHILE loops of builtin ops, equally right."""
    model = keras.Sequential(
        [
            keras.Input((T, F), batch_size=2),
            ks.layers.SimpleRNN(N, return_sequences=True),
            _lstm(return_sequences=True),
        ]
    )
    path = litert_export.to_litert(model, os.path.join(tmp_path, "m.tflite"), fuse=fuse)
    with open(path, "rb") as f:
        content = f.read()
    interpreter = interpreter_module.Interpreter(model_path=path)
    names = _ops(interpreter)
    assert [op for op in (FUSED, FUSED_RNN) if op in names] == fused_ops, names
    assert names.count("WHILE") == 2 - len(fused_ops), names
    assert litert_export.op_names(content) == names
    x = _inputs(2)
    (y,) = litert_export.run_litert(interpreter, x)
    np.testing.assert_allclose(y, model.predict(x, verbose=0), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("cell", [ks.cells.GRUCell(N), ks.cells.GRUCell(N, reset_after=True)])
def test_loop_cells_use_builtin_ops(tmp_path, cell):
    """No fused kernel for these: a WHILE loop at a fixed batch, unrolled with
    a dynamic batch; builtin ops only, in every subgraph."""
    model = keras.Sequential(
        [keras.Input((T, F)), ks.layers.Recurrent(cell, return_sequences=True)]
    )
    x = _inputs(2)
    for batch_size, loop in ((2, True), (None, False)):
        interpreter, content = _convert(model, tmp_path, batch_size=batch_size)
        assert ("WHILE" in _ops(interpreter)) is loop
        model_ops = litert_export._read(content)
        every = {
            litert_runtime.op_name(model_ops, op)
            for graph in model_ops.subgraphs
            for op in graph.operators
        }
        assert all(n.isupper() and not n.startswith("Flex") for n in every), every
        (y,) = litert_export.run_litert(interpreter, x)
        np.testing.assert_allclose(y, model.predict(x, verbose=0), rtol=1e-5, atol=1e-5)
    assert model.layers[0].fused  # the layer is left as it was


@pytest.fixture(scope="module")
def quantizable(tmp_path_factory):
    """An LSTM wide enough for the converter to quantize its weights (it leaves
    tensors under 1,024 elements in float), a calibration set, and the size of
    its float32 file."""
    keras.utils.set_random_seed(0)
    model = keras.Sequential(
        [keras.Input((T, 32)), ks.layers.Recurrent(ks.cells.LSTMCell(64)), keras.layers.Dense(4)]
    )
    data = np.random.default_rng(1).normal(size=(64, T, 32)).astype("float32")
    path = export.to_litert(model, os.path.join(tmp_path_factory.mktemp("float"), "f.tflite"))
    return model, data, os.path.getsize(path)


@pytest.mark.parametrize(
    "quantize, atol, max_size",
    [("float16", 2e-3, 0.6), ("dynamic", 2e-2, 0.35), ("int8", 5e-2, 0.35)],
)
def test_quantize(tmp_path, quantizable, quantize, atol, max_size):
    model, data, float_size = quantizable
    # float16 at a fixed batch (8): with a dynamic batch the fused op's weights
    # stay float32 (litert_runtime: its kernel is wrong after a resize otherwise).
    batch = 8 if quantize == "float16" else None
    interpreter, content = _convert(
        model, tmp_path, quantize=quantize, representative_data=data, batch_size=batch
    )
    assert FUSED in _ops(interpreter)
    assert len(content) <= max_size * float_size
    x = data[:8]
    (y,) = litert_export.run_litert(interpreter, x)
    np.testing.assert_allclose(y, model.predict(x, verbose=0), atol=atol, rtol=0)


@pytest.fixture(scope="module")
def quantizable_elman(tmp_path_factory):
    """As ``quantizable``, with a 32 -> 64 Elman layer (outputs up to 2.1)."""
    keras.utils.set_random_seed(0)
    model = keras.Sequential([keras.Input((T, 32)), ks.layers.SimpleRNN(64), keras.layers.Dense(4)])
    data = np.random.default_rng(1).normal(size=(64, T, 32)).astype("float32")
    path = export.to_litert(model, os.path.join(tmp_path_factory.mktemp("float"), "f.tflite"))
    return model, data, os.path.getsize(path)


@pytest.mark.parametrize(
    "quantize, atol, max_size, fused",
    # Measured: 1.0e-3 and 0.56x; 2.1e-2 and 0.45x (a small model: the
    # tensors' descriptions weigh); 3.8e-2 for int8, which runs as a loop
    # (the fused RNN kernel has no full-integer path).
    [("float16", 5e-3, 0.6, 1), ("dynamic", 5e-2, 0.5, 1), ("int8", 1e-1, 1.0, 0)],
)
def test_elman_quantize(tmp_path, quantizable_elman, quantize, atol, max_size, fused):
    model, data, float_size = quantizable_elman
    batch = 8 if quantize == "float16" else None  # as test_quantize
    interpreter, content = _convert(
        model, tmp_path, quantize=quantize, representative_data=data, batch_size=batch
    )
    # Exactly one: with "dynamic" the converter writes 21 copies of the op.
    assert _ops(interpreter).count(FUSED_RNN) == fused, _ops(interpreter)
    assert len(content) <= max_size * float_size
    x = data[:8]
    (y,) = litert_export.run_litert(interpreter, x)
    np.testing.assert_allclose(y, model.predict(x, verbose=0), atol=atol, rtol=0)


def test_refusals(tmp_path):
    path = os.path.join(tmp_path, "m.tflite")
    plain = keras.Sequential([keras.Input((T, F)), _lstm()])
    with pytest.raises(ValueError, match="representative_data"):
        export.to_litert(plain, path, quantize="int8")
    with pytest.raises(ValueError, match="quantize"):
        export.to_litert(plain, path, quantize="int4")
    with pytest.raises(ValueError, match="batch_size"):
        export.to_litert(plain, path, batch_size=0)
    for fuse in (("lstm", "gru"), None, ["LSTM"]):
        with pytest.raises(ValueError, match=r"to_litert: `fuse` must be a tuple .*'lstm' and/or"):
            litert_export.to_litert(plain, path, fuse=fuse)
    free = keras.Sequential([keras.Input((None, F)), ks.layers.Recurrent(ks.cells.GRUCell(N))])
    with pytest.raises(ValueError, match="runs as a loop.*batch_size=1"):
        export.to_litert(free, path)

    peephole = keras.Sequential(
        [keras.Input((T, F)), _lstm(cell={"use_peepholes": True}, name="peep")]
    )
    with pytest.raises(ValueError, match="'peep' has peepholes.*dynamic"):
        export.to_litert(peephole, path, quantize="int8", representative_data=_inputs(4))

    class Subclassed(keras.Model):
        def call(self, x):
            return x

    with pytest.raises(ValueError, match="not a functional or Sequential"):
        export.to_litert(Subclassed(), path)
    assert not os.path.exists(path)


@pytest.fixture(scope="module")
def tied(tmp_path_factory):
    """A language model whose logits reuse its embedding matrix (300 x 64):
    ``ReversibleEmbedding`` -> LSTM -> the same matrix transposed, plus a
    bias; token ids for calibration; and the float file's size."""
    keras.utils.set_random_seed(0)
    ids = keras.Input((T,), dtype="int32")
    init = keras.initializers.RandomUniform(-0.5, 0.5, seed=0)
    embedding = keras.layers.ReversibleEmbedding(300, 64, embeddings_initializer=init)
    x = _lstm(64, return_sequences=True)(embedding(ids))
    logits = ks.layers.Bias()(embedding(x, reverse=True))
    model = keras.Model(ids, logits)
    data = np.random.default_rng(1).integers(0, 300, (64, T)).astype("int32")
    path = export.to_litert(model, os.path.join(tmp_path_factory.mktemp("float"), "f.tflite"))
    return model, data, os.path.getsize(path)


# Measured (outputs up to 0.59): dynamic 6.4e-3 and 0.29x, int8 9.0e-3 and 0.29x of the
# float file; 0.38x each with the matrix stored twice.
@pytest.mark.parametrize("quantize, atol", [("dynamic", 2e-2), ("int8", 5e-2)])
def test_tied_embedding_stored_once(tmp_path, tied, quantize, atol):
    """The lookup table and the output layer's weights are one int8 tensor."""
    model, data, float_size = tied
    interpreter, content = _convert(model, tmp_path, quantize=quantize, representative_data=data)
    flat = litert_export._read(content)
    graph = flat.subgraphs[0]
    matrix = 300 * 64
    holders = [b for b in flat.buffers if b.data is not None and len(b.data) >= matrix]
    assert len(holders) == 1, [len(b.data) for b in holders]
    names = [litert_runtime.op_name(flat, op) for op in graph.operators]
    (dense,) = [op for op, name in zip(graph.operators, names) if name == "FULLY_CONNECTED"]
    tables = {int(op.inputs[0]) for op, name in zip(graph.operators, names) if name == "GATHER"}
    assert int(dense.inputs[1]) in tables
    assert len(content) <= 0.33 * float_size
    x = data[:8]
    (y,) = litert_export.run_litert(interpreter, x)
    np.testing.assert_allclose(y, model.predict(x, verbose=0), atol=atol, rtol=0)


def test_several_inputs_keep_the_keras_names_and_order(tmp_path):
    """A model with several inputs: the file's inputs are named as the Keras
    inputs (``stories`` before ``queries``, against the alphabet) in the
    model's order; ``run_litert`` takes them by position or by name, and
    LiteRT's own signature runner by name, all as ``model.predict``."""
    stories = keras.Input((T, F), name="stories")
    queries = keras.Input((F,), name="queries")
    h = _lstm(name="reader")(stories)
    outputs = keras.layers.Dense(2)(keras.layers.Concatenate()([h, 3.0 * queries]))
    model = keras.Model([stories, queries], outputs)
    interpreter, _ = _convert(model, tmp_path)
    details = interpreter.get_input_details()
    assert [d["name"] for d in details] == [
        "serving_default_stories:0",
        "serving_default_queries:0",
    ]
    rng = np.random.default_rng(7)
    x = [_inputs(3, seed=3), rng.normal(size=(3, F)).astype("float32")]
    expected = model.predict(x, verbose=0)
    (by_position,) = litert_export.run_litert(interpreter, *x)
    (by_name,) = litert_export.run_litert(interpreter, queries=x[1], stories=x[0])
    runner = interpreter_module.Interpreter(model_path=str(tmp_path / "model.tflite"))
    signed = runner.get_signature_runner("serving_default")(stories=x[0], queries=x[1])
    for got in (by_position, by_name, signed["output_0"]):
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)
    with pytest.raises(ValueError, match=r"inputs are \['stories', 'queries'\]"):
        litert_export.run_litert(interpreter, stories=x[0], question=x[1])
    with pytest.raises(ValueError, match="by position or by name"):
        litert_export.run_litert(interpreter, x[0], queries=x[1])


@pytest.mark.parametrize("given", ["arrays", "callable"])
def test_int8_calibration_of_several_inputs_goes_by_name(tmp_path, given):
    """Full int8 with two inputs of different shapes: each calibration
    sample reaches its own input whatever order the converter gives them
    (a list in the model's order made the converter fail). Absolute
    tolerance 0.1 on outputs up to 2.3 (measured 0.031)."""
    keras.utils.set_random_seed(0)
    stories = keras.Input((T, F), name="stories")
    queries = keras.Input((F,), name="queries")
    h = _lstm(32, name="reader")(stories)
    outputs = keras.layers.Dense(4)(keras.layers.Add()([h, keras.layers.Dense(32)(queries)]))
    model = keras.Model([stories, queries], outputs)
    rng = np.random.default_rng(0)
    data = [rng.normal(size=(200, T, F)).astype("float32"),
            rng.normal(size=(200, F)).astype("float32")]  # fmt: skip
    if given == "callable":
        samples = lambda: ([d[i : i + 1] for d in data] for i in range(200))  # noqa: E731
    else:
        samples = data
    interpreter, _ = _convert(
        model, tmp_path, quantize="int8", representative_data=samples, batch_size=1
    )
    for i in range(10):
        x = [d[i : i + 1] for d in data]
        (got,) = litert_export.run_litert(interpreter, *x)
        np.testing.assert_allclose(got, model.predict(x, verbose=0), atol=0.1, rtol=0)
