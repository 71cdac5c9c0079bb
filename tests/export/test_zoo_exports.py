"""Every zoo model's SavedModel, called where only TensorFlow is imported.

Exports made through ``keras_seqmodels.export`` (the dispatch behind
``seqmodels export NAME DIR``): mnist-renet (images), babi-memn2n (story and
question as text, and the integer-id signature), ntm-copy (bit sequences),
ptb-lstm (text) and an echo state network
with a readout fitted by ``fit_readout`` (float sequences; the zoo ships no
ESN, so it is built here, saved as ``.keras`` and exported from that file by
the command, i.e. by the generic fallback). All exports are loaded and called
in one clean process (``python -I``, importing this package there fails) and
compared with the Keras models. multi30k-en-de, ud-ewt-upos and sst-treelstm
have theirs in tests/seq2seq/test_translator.py,
tests/reliability/test_serving_robustness.py and tests/zoo/test_sst_treelstm.py.
"""

import json
import os
import re

import keras
import numpy as np
import pytest

import keras_seqmodels as ks
from keras_seqmodels import export, zoo
from keras_seqmodels.data import babi
from keras_seqmodels.testing import run_in_clean_process
from keras_seqmodels.zoo import models

pytestmark = pytest.mark.tf_only  # SavedModel export runs on TensorFlow

FIXTURES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fixtures")

SERVE_SNIPPET = """
import json
import tensorflow as tf

plan = json.loads(str(inputs.pop("plan")))
for label, spec in plan.items():
    fn = tf.saved_model.load(spec["dir"]).signatures[spec["signature"]]
    specs = fn.structured_input_signature[1]
    outputs[label + "__inputs"] = sorted(specs)
    feed = {k: tf.constant(inputs[label + "__" + k], dtype=specs[k].dtype) for k in specs}
    for key, value in fn(**feed).items():
        outputs[label + "__" + key] = value.numpy()
"""

ODD_STORIES = [
    # (story, question): unknown words, no statements, more statements than
    # memory slots, a statement longer than the sentence length, odd spacing.
    ("Zorg flew to the moon. Mary went to the kitchen!", "Where is Mary?"),
    ("", "Where is Mary?"),
    ("   \n ... ?? ", "   "),
    (" ".join(f"Mary went to the room{i}." for i in range(60)), "Where is Mary"),
    ("John picked up the football and then went to the very big garden today.", "Where?"),
    ("MARY\tMOVED   TO the\r\nbathroom", "WHERE is MARY ?"),
]


def _statements(story):
    """The Python twin of the export's story splitting."""
    return [s for s in (babi.tokenize(p) for p in re.split(r"[.!?\r\n]+", story)) if s]


def _babi_cases():
    stories, questions, examples = [], [], []
    for path in babi.task_files(os.path.join(FIXTURES, "babi"), "test"):
        for story, question, answer in babi.read_babi(path)[:2]:
            stories.append(" ".join(" ".join(s) + "." for s in story))
            questions.append(" ".join(question) + "?")
            examples.append((story, question, answer))
    for story, question in ODD_STORIES:
        stories.append(story)
        questions.append(question)
        examples.append((_statements(story), babi.tokenize(question), "<unk>"))
    return stories, questions, examples


def _esn_model():
    """An echo state network with a ridge-regression readout, one step ahead."""
    keras.utils.set_random_seed(0)
    t = np.arange(600, dtype="float32")
    series = (np.sin(0.2 * t) + 0.5 * np.sin(0.311 * t)).astype("float32")
    inputs = keras.Input((None, 1), name="sequences")
    states = ks.layers.Recurrent(
        ks.cells.EchoStateCell(40, spectral_radius=0.9, leak_rate=0.5, seed=0),
        return_sequences=True,
    )(inputs)
    features = keras.layers.Concatenate()([inputs, states])
    model = keras.Model(inputs, keras.layers.Dense(1, name="readout")(features))
    u, target = series[None, :-1, None], series[None, 1:, None]
    feats = keras.Model(inputs, features).predict(u, verbose=0)
    ks.cells.fit_readout(feats, target, readout=model.get_layer("readout"), washout=50)
    pred = model.predict(u, verbose=0)
    nrmse = np.sqrt(np.mean((pred - target)[:, 50:] ** 2)) / series.std()
    return model, series, float(nrmse)


@pytest.fixture(scope="module")
def served(tmp_path_factory, zoo_savedmodel):
    """Four zoo models' shared SavedModels and one ESN exported here, their six
    signatures called in one TensorFlow-only process."""
    from keras_seqmodels.cli.main import main

    root = tmp_path_factory.mktemp("exports")
    plan, feed, expected = {}, {}, {}

    mnist = np.load(os.path.join(FIXTURES, "mnist_test_sample.npz"))
    pixels = mnist["images"][:8].astype("float32")
    mnist_dir = zoo_savedmodel("mnist-renet")
    plan["mnist"] = {"dir": mnist_dir, "signature": "serving_default"}
    feed["mnist__pixels"] = pixels
    expected["mnist"] = zoo.load("mnist-renet").model.predict(pixels, verbose=0)

    stories, questions, examples = _babi_cases()
    babi_dir = zoo_savedmodel("babi-memn2n")
    with open(zoo.asset_path("babi-memn2n", "vocab"), encoding="utf-8") as f:
        vocabulary = json.load(f)["vocabulary"]
    ids = babi.vectorize(examples, vocabulary, 50, 11, 11)[:2]
    plan["babi"] = {"dir": babi_dir, "signature": "serving_default"}
    plan["babi_ids"] = {"dir": babi_dir, "signature": "serve_ids"}
    feed["babi__story"], feed["babi__question"] = np.array(stories), np.array(questions)
    feed["babi_ids__stories"], feed["babi_ids__queries"] = ids
    expected["babi"] = (zoo.load("babi-memn2n").model.predict(list(ids), verbose=0), vocabulary)

    bits = np.random.default_rng(0).integers(0, 2, (3, 10, 8)).astype("float32")
    ntm_dir = zoo_savedmodel("ntm-copy")
    plan["ntm"] = {"dir": ntm_dir, "signature": "serving_default"}
    feed["ntm__bits"] = bits
    laid_out = np.zeros((3, 21, 9), "float32")  # bits, delimiter, recall steps
    laid_out[:, :10, :8] = bits
    laid_out[:, 10, 8] = 1.0
    logits = zoo.load("ntm-copy").model.predict(laid_out, verbose=0)[:, 11:]
    expected["ntm"] = (bits, logits)

    texts = ["the company said", "", "Stocks FELL sharply zzzunknown"]
    ptb_dir = zoo_savedmodel("ptb-lstm")
    plan["ptb"] = {"dir": ptb_dir, "signature": "serving_default"}
    feed["ptb__text"] = np.array(texts)
    with open(zoo.asset_path("ptb-lstm", "vocabulary"), encoding="utf-8") as f:
        vocab = [line.rstrip("\n") for line in f if line.rstrip("\n")]
    index = {w: i for i, w in enumerate(vocab)}
    lm = zoo.load("ptb-lstm").model
    rows = []
    for text in texts:  # each text alone, encoded as `seqmodels generate` does
        ids = [index.get(w, index["<unk>"]) for w in text.lower().split()] or [index["<eos>"]]
        logits = lm.predict(np.array([ids], "int32"), verbose=0)[0].astype("float64")
        log_p = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
        rows.append((logits[-1], sum(log_p[t, ids[t + 1]] for t in range(len(ids) - 1))))
    expected["ptb"] = (vocab, rows)

    esn, series, nrmse = _esn_model()
    esn.save(root / "esn.keras")
    assert main(["export", str(root / "esn.keras"), str(root / "esn")]) == 0
    windows = np.stack([series[:120], series[200:320], series[400:520]])[..., None]
    plan["esn"] = {"dir": str(root / "esn"), "signature": "serving_default"}
    feed["esn__sequences"] = windows
    expected["esn"] = (esn.predict(windows, verbose=0), nrmse)

    feed["plan"] = np.asarray(json.dumps(plan))
    return run_in_clean_process(SERVE_SNIPPET, feed, timeout=300), expected


def test_mnist_renet_serves_pixels(served):
    out, expected = served
    assert out["mnist__inputs"].tolist() == ["pixels"]
    np.testing.assert_allclose(out["mnist__scores"], expected["mnist"], rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(out["mnist__class_id"], np.argmax(expected["mnist"], -1))
    labels = np.load(os.path.join(FIXTURES, "mnist_test_sample.npz"))["labels"][:8]
    assert np.mean(out["mnist__class_id"] == labels) >= 7 / 8


def test_babi_memn2n_serves_story_and_question_text(served):
    out, expected = served
    scores, vocabulary = expected["babi"]
    assert out["babi__inputs"].tolist() == ["question", "story"]
    # The text signature encodes in TensorFlow what babi.vectorize does in
    # Python: same scores as the Keras model on the Python-encoded ids.
    np.testing.assert_allclose(out["babi__scores"], scores, rtol=1e-5, atol=1e-5)
    answers = [a.decode() for a in out["babi__answer"]]
    assert answers == [vocabulary[i] for i in np.argmax(scores, -1)]
    np.testing.assert_allclose(out["babi_ids__scores"], scores, rtol=1e-5, atol=1e-5)
    # The 40 fixture questions (2 per task) are answered as the model does.
    _, _, examples = _babi_cases()
    truth = [a for _, _, a in examples[:40]]
    assert np.mean([a == t for a, t in zip(answers, truth)]) >= 0.6


def test_esn_serves_float_sequences(served):
    out, expected = served
    predictions, nrmse = expected["esn"]
    assert nrmse < 0.05, f"the fitted readout should predict the series (NRMSE {nrmse})"
    assert out["esn__inputs"].tolist() == ["sequences"]
    np.testing.assert_allclose(out["esn__output_0"], predictions, rtol=1e-5, atol=1e-5)


def test_ntm_copy_serves_bit_sequences(served):
    out, expected = served
    bits, logits = expected["ntm"]
    assert out["ntm__inputs"].tolist() == ["bits"]
    np.testing.assert_allclose(out["ntm__logits"], logits, rtol=1e-4, atol=1e-4)
    np.testing.assert_array_equal(out["ntm__copy"], (logits > 0).astype("float32"))
    # The shipped model copies length-10 sequences (card: 0 bit errors).
    assert np.mean(out["ntm__copy"] == bits) >= 0.99


def test_ptb_lstm_serves_text(served):
    out, expected = served
    vocab, rows = expected["ptb"]
    assert out["ptb__inputs"].tolist() == ["text"]
    for i, (logits, log_likelihood) in enumerate(rows):
        np.testing.assert_allclose(out["ptb__next_word_logits"][i], logits, rtol=1e-4, atol=1e-4)
        assert out["ptb__next_word"][i].decode() == vocab[int(np.argmax(logits))]
        np.testing.assert_allclose(out["ptb__log_likelihood"][i], log_likelihood, atol=1e-3)
    assert out["ptb__log_likelihood"][1] == 0.0  # empty text: nothing to score


def test_export_refuses_a_non_empty_folder_and_a_bad_name(tmp_path):
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "file").write_text("x")
    with pytest.raises(FileExistsError, match="not empty"):
        zoo.load("mnist-renet").export(str(tmp_path / "taken"))
    with pytest.raises(TypeError, match="must be a keras.Model or a path ending in .keras"):
        export.export(3, str(tmp_path / "new"))
    with pytest.raises(TypeError, match=r"keras_seqmodels.zoo.load\(name\).export"):
        export.export("mnist-renet", str(tmp_path / "new"))
    with pytest.raises(FileNotFoundError, match="no such file"):
        export.export(str(tmp_path / "missing.keras"), str(tmp_path / "new"))
    with pytest.raises(ValueError, match="`format` must be one of savedmodel, litert, onnx"):
        zoo.load("mnist-renet").export(str(tmp_path / "new"), "tflite")


def test_every_zoo_model_has_an_export_path():
    # Writers named by a spec are real functions; the others use the lookup by type.
    for name in zoo.list_models():
        own, options = zoo.load(name).export_plan("savedmodel")
        reference = models.spec(name).exporters.get("savedmodel")
        if reference is None:
            assert own is None, name
        else:
            module, function = reference.split(":")
            assert (own.__module__, own.__name__) == (module, function), name
        assert isinstance(options, dict)
        for format in ("litert", "onnx"):
            own, options = zoo.load(name).export_plan(format)
            assert options == {}, (name, format)  # SavedModel options only


@pytest.mark.parametrize(
    "name", sorted(n for n, s in models.specs().items() if s.exporters.get("savedmodel")) + [None]
)
def test_every_exporter_refuses_a_non_empty_folder(tmp_path, name):
    # The check comes first: nothing is traced or written, whatever the model.
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "keep.txt").write_text("x")
    generic = export.FORMATS["savedmodel"].writer()
    writer = models.spec(name).exporter("savedmodel") if name else generic
    with pytest.raises(FileExistsError, match="is not empty; give a new or empty folder"):
        writer(None, str(tmp_path / "taken"))
    assert os.listdir(tmp_path / "taken") == ["keep.txt"]
    (tmp_path / "file").write_text("x")
    with pytest.raises(FileExistsError, match="is a file"):
        writer(None, str(tmp_path / "file"))


def test_generic_export_of_two_inputs_checks_shapes_and_rows(tmp_path):
    import tensorflow as tf

    keras.utils.set_random_seed(0)
    left = keras.Input((None, 2), name="left")
    right = keras.Input((3,), name="right")
    pooled = keras.layers.GlobalAveragePooling1D()(left)
    y = keras.layers.Dense(1)(pooled) + keras.layers.Dense(1)(right)
    model = keras.Model([left, right], [y, 2 * y])
    export.export(model, str(tmp_path / "two"))
    fn = tf.saved_model.load(str(tmp_path / "two")).signatures["serving_default"]
    assert sorted(fn.structured_input_signature[1]) == ["left", "right"]
    x1 = np.random.default_rng(0).random((4, 5, 2)).astype("float32")
    x2 = np.random.default_rng(1).random((4, 3)).astype("float32")
    out = fn(left=tf.constant(x1), right=tf.constant(x2))
    expected = model.predict([x1, x2], verbose=0)
    np.testing.assert_allclose(out["output_0"], expected[0], atol=1e-5)
    np.testing.assert_allclose(out["output_1"], expected[1], atol=1e-5)
    wrong = r"request shape: `left` must have shape \(None, None, 2\)\. Received shape \[4,5,3"
    with pytest.raises(tf.errors.InvalidArgumentError, match=wrong):
        fn(left=tf.zeros((4, 5, 3)), right=tf.constant(x2))
    with pytest.raises(tf.errors.InvalidArgumentError, match="at most 1,024 rows of `left`"):
        fn(left=tf.zeros((1025, 1, 2)), right=tf.zeros((1025, 3)))
