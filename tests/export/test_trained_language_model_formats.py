"""A model made by the package's own ``train_language_model`` in every format
docs/deploy.md promises: the SavedModel as it is, LiteRT and ONNX through its
id-level ``network`` (the exporters' error for the model itself says so)."""

import numpy as np
import pytest

from keras_seqmodels import export
from keras_seqmodels.language_model import train_language_model

pytestmark = pytest.mark.tf_only
WORDS = "the cat sat on the mat and the dog ran to the park".split()


@pytest.fixture(scope="module")
def lm(tmp_path_factory):
    folder = tmp_path_factory.mktemp("text")
    rng = np.random.default_rng(0)
    lines = [" ".join(rng.choice(WORDS, 8)) for _ in range(60)]
    path = folder / "train.txt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return train_language_model(str(path), units=8, layers=1, epochs=1, sequence_length=6,
                                batch_size=8, verbose=0)  # fmt: skip


@pytest.mark.parametrize(
    "writer, suffix", [(export.to_onnx, ".onnx"), (export.to_litert, ".tflite")]
)
def test_the_model_itself_is_refused_naming_its_network(lm, writer, suffix, tmp_path):
    with pytest.raises(ValueError, match="export model.network"):
        writer(lm, str(tmp_path / f"lm{suffix}"))


def test_its_network_exports_to_onnx_and_litert_with_the_models_outputs(lm, tmp_path):
    import onnxruntime as ort
    from ai_edge_litert.interpreter import Interpreter

    from keras_seqmodels.export.litert_export import run_litert

    ids = np.random.default_rng(1).integers(1, len(lm.vocabulary), (1, 7)).astype("int32")
    expected = np.asarray(lm.predict(ids, verbose=0))
    onnx_path = export.to_onnx(lm.network, str(tmp_path / "lm.onnx"))
    session = ort.InferenceSession(onnx_path, providers=["CPUExecutionProvider"])
    name = session.get_inputs()[0].name
    np.testing.assert_allclose(session.run(None, {name: ids})[0], expected, atol=1e-5)
    litert_path = export.to_litert(lm.network, str(tmp_path / "lm.tflite"), batch_size=1)
    (got,) = run_litert(Interpreter(model_path=litert_path), ids)
    np.testing.assert_allclose(got, expected, atol=1e-5)


def test_the_model_itself_writes_a_savedmodel(lm, tmp_path):
    written = export.export(lm, str(tmp_path / "saved"))
    assert (tmp_path / "saved" / "saved_model.pb").is_file() and written
