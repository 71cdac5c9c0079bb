"""``seqmodels export NAME OUT --format litert|onnx``: the id-level network in
the runtime's own format, with its native recurrent kernels, run by that
runtime; bad option combinations are one-line usage errors."""

import numpy as np
import pytest
from cli_helpers import assert_one_line_error, run_cli

pytestmark = [pytest.mark.tf_only, pytest.mark.slow]


def _ids(batch, steps, vocabulary):
    return np.random.default_rng(0).integers(0, vocabulary, (batch, steps)).astype("int32")


def test_zoo_language_model_to_litert_with_fused_lstms(tmp_path):
    from ai_edge_litert.interpreter import Interpreter

    from keras_seqmodels import zoo
    from keras_seqmodels.export.litert_export import op_names, run_litert

    out = tmp_path / "ptb.tflite"
    code, stdout, err = run_cli(["export", "ptb-lstm", str(out), "--format", "litert",
                                 "--batch-size", "1"])  # fmt: skip
    assert code == 0, err
    assert f"wrote {out} (LiteRT flatbuffer)" in stdout
    ops = op_names(out.read_bytes())
    assert ops.count("UNIDIRECTIONAL_SEQUENCE_LSTM") == 2, ops
    assert "WHILE" not in ops and not [o for o in ops if "FLEX" in o.upper()]
    model = zoo.load_model("ptb-lstm")
    x = _ids(1, model.inputs[0].shape[1] or 12, 10_000)
    interpreter = Interpreter(model_path=str(out))
    [got] = run_litert(interpreter, x)
    np.testing.assert_allclose(got, np.asarray(model.predict(x, verbose=0)), rtol=1e-4, atol=1e-4)


def test_zoo_language_model_to_onnx_with_lstm_nodes(tmp_path):
    import onnx
    import onnxruntime

    from keras_seqmodels import zoo

    out = tmp_path / "ptb.onnx"
    code, stdout, err = run_cli(["export", "ptb-lstm", str(out), "--format", "onnx"])
    assert code == 0, err
    assert f"wrote {out} (ONNX graph)" in stdout
    kinds = [node.op_type for node in onnx.load(str(out)).graph.node]
    assert kinds.count("LSTM") == 2 and "Loop" not in kinds and "Scan" not in kinds
    model = zoo.load_model("ptb-lstm")
    x = _ids(2, model.inputs[0].shape[1] or 12, 10_000)
    session = onnxruntime.InferenceSession(str(out), providers=["CPUExecutionProvider"])
    [got] = session.run(None, {session.get_inputs()[0].name: x})
    np.testing.assert_allclose(got, np.asarray(model.predict(x, verbose=0)), rtol=1e-4, atol=1e-4)


def test_zoo_tagger_to_onnx_writes_its_emission_network(tmp_path):
    """ud-ewt-upos takes strings and decodes with a CRF: its spec's ONNX
    writer exports the id-level network up to the CRF, run by onnxruntime."""
    import onnx
    import onnxruntime

    from keras_seqmodels import zoo
    from keras_seqmodels.zoo.models.ud_ewt_upos.deploy import emission_network

    out = tmp_path / "tagger.onnx"
    code, stdout, err = run_cli(["export", "ud-ewt-upos", str(out), "--format", "onnx"])
    assert code == 0, err
    assert f"wrote {out} (ONNX graph)" in stdout
    kinds = [node.op_type for node in onnx.load(str(out)).graph.node]
    assert kinds.count("LSTM") == 6 and "Loop" not in kinds and "Scan" not in kinds
    emissions = emission_network(zoo.load_model("ud-ewt-upos"))
    words = np.array([[5, 17, 230, 4, 0, 0], [8, 1, 0, 0, 0, 0]], "int32")
    chars = np.random.default_rng(9).integers(1, 40, size=(2, 6, 20)).astype("int32")
    chars[:, :, 7:] = 0
    chars[words == 0] = 0
    session = onnxruntime.InferenceSession(str(out), providers=["CPUExecutionProvider"])
    feed = dict(zip([i.name for i in session.get_inputs()], [words, chars]))
    [got] = session.run(None, feed)
    expected = np.asarray(emissions.predict([words, chars], verbose=0))
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)
    # Its LiteRT file: the same network at 64 word positions (padded), run by
    # ai-edge-litert; its masked LSTMs are loops of builtin ops.
    from ai_edge_litert.interpreter import Interpreter

    from keras_seqmodels.export.litert_export import op_names, run_litert
    from keras_seqmodels.zoo.models.ud_ewt_upos.deploy import WORDS

    lite = tmp_path / "tagger.tflite"
    code, stdout, err = run_cli(["export", "ud-ewt-upos", str(lite), "--format", "litert"])
    assert code == 0, err
    ops = op_names(lite.read_bytes())
    assert "WHILE" in ops and "UNIDIRECTIONAL_SEQUENCE_LSTM" not in ops  # masked: loops
    interpreter = Interpreter(model_path=str(lite))
    for row in range(2):
        padded_words = np.zeros((1, WORDS), "int32")
        padded_chars = np.zeros((1, WORDS, 20), "int32")
        padded_words[0, :6], padded_chars[0, :6] = words[row], chars[row]
        [got] = run_litert(interpreter, padded_words, padded_chars)
        length = int((words[row] > 0).sum())
        np.testing.assert_allclose(got[0, :length], expected[row, :length], rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize(
    "argv, fragment",
    [
        (["ptb-lstm", "OUT.onnx", "--format", "litert"], "give OUT ending in .tflite"),
        (["ptb-lstm", "OUT.tflite", "--format", "onnx"], "give OUT ending in .onnx"),
        (["ptb-lstm", "OUT", "--quantize", "int8"], "are for --format litert"),
        (["ptb-lstm", "OUT.onnx", "--format", "onnx", "--batch-size", "1"],
         "are for --format litert"),
        (["ptb-lstm", "OUT.tflite", "--format", "litert", "--representative-data", "no.npy"],
         "no such file: no.npy"),
        (["no-such-model", "OUT.onnx", "--format", "onnx"], "no-such-model"),
    ],
)  # fmt: skip
def test_bad_combinations_are_one_line_usage_errors(argv, fragment, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, _, err = run_cli(["export", *argv])
    assert_one_line_error(code, err, fragment)


def test_int8_without_representative_data_says_what_to_pass(tmp_path):
    code, _, err = run_cli(["export", "ptb-lstm", str(tmp_path / "q.tflite"), "--format",
                            "litert", "--quantize", "int8"])  # fmt: skip
    assert_one_line_error(code, err, "representative")
    assert not (tmp_path / "q.tflite").exists()
