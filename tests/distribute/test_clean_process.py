"""keras_seqmodels.testing.run_in_clean_process and call_saved_model."""

import os

import numpy as np
import pytest

from keras_seqmodels.testing import (
    CleanProcessError,
    call_saved_model,
    run_in_clean_process,
)


def test_round_trip_of_numbers_and_strings_in_a_clean_environment(monkeypatch):
    monkeypatch.setenv("KERAS_SEQMODELS_PARENT_ONLY", "1")
    monkeypatch.setenv("PYTHONPATH", "/nonexistent")
    snippet = """
        import os, sys
        outputs["doubled"] = inputs["x"] * 2
        outputs["upper"] = [s.upper() for s in inputs["words"].tolist()]
        outputs["leaked"] = [k for k in ("KERAS_SEQMODELS_PARENT_ONLY", "PYTHONPATH")
                             if k in os.environ]
        outputs["cwd_is_workdir"] = os.getcwd() == workdir
        outputs["isolated"] = sys.flags.isolated
    """
    x = np.arange(6, dtype="float32").reshape(2, 3)
    out = run_in_clean_process(snippet, {"x": x, "words": np.array([b"ab", b"c"])})
    np.testing.assert_array_equal(out["doubled"], x * 2)
    assert out["upper"].tolist() == [b"AB", b"C"]
    assert out["leaked"].size == 0
    assert bool(out["cwd_is_workdir"]) and int(out["isolated"]) == 1


def test_importing_the_package_is_refused():
    with pytest.raises(CleanProcessError, match="keras_seqmodels"):
        run_in_clean_process("import keras_seqmodels")


def test_failure_reports_stderr():
    with pytest.raises(CleanProcessError, match="ZeroDivisionError"):
        run_in_clean_process("1 / 0")


def test_timeout():
    with pytest.raises(CleanProcessError, match="no result after 2 s"):
        run_in_clean_process("import time; time.sleep(30)", timeout=2)


def test_bad_input_name():
    with pytest.raises(ValueError, match="identifiers"):
        run_in_clean_process("pass", {"not valid": np.zeros(1)})


@pytest.mark.tf_only
@pytest.mark.slow
def test_exported_model_called_in_tensorflow_only_process(tmp_path):
    import keras

    import keras_seqmodels as ks

    if keras.backend.backend() != "tensorflow":
        pytest.skip("SavedModel export needs the TensorFlow backend")
    keras.utils.set_random_seed(0)
    inputs = keras.Input((5, 3), name="sequences")
    hidden = ks.layers.Recurrent(ks.cells.LSTMCell(4))(inputs)
    model = keras.Model(inputs, keras.layers.Dense(2)(hidden))
    export_dir = os.path.join(tmp_path, "lstm")
    model.export(export_dir, format="tf_saved_model", verbose=False)
    x = np.random.default_rng(0).standard_normal((3, 5, 3)).astype("float32")
    outputs = call_saved_model(export_dir, {"sequences": x})
    assert list(outputs) == ["output_0"]
    np.testing.assert_allclose(outputs["output_0"], model.predict(x, verbose=0), atol=1e-6)
    with pytest.raises(CleanProcessError, match="missing inputs"):
        call_saved_model(export_dir, {"wrong_name": x})
