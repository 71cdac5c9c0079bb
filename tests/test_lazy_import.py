"""``import keras_seqmodels`` loads sub-packages on first use and still
registers the package's Keras classes, whatever is imported first."""

import subprocess
import sys

import pytest

_CHECK = (
    "import keras; "
    "names = ['keras_seqmodels>CRF', 'keras_seqmodels>NTM', 'keras_seqmodels>LSTMCell']; "
    "print([keras.saving.get_registered_object(n) is not None for n in names])"
)


def _run(code, tmp_path=None):
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=600,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.strip().splitlines()


def test_import_loads_no_framework():
    out = _run(
        "import sys, keras_seqmodels as ks; "
        "print(sorted(m for m in ('keras', 'tensorflow', 'jax') if m in sys.modules)); "
        "print(ks.__version__ == __import__('keras_seqmodels.version').version.__version__)"
    )
    assert out == ["[]", "True"]


@pytest.mark.slow
@pytest.mark.parametrize(
    "first",
    [
        "from keras_seqmodels.tagging import CRF",  # a sub-package first
        "import keras_seqmodels as ks; ks.memory.ntm",  # attribute access, a module deep inside
    ],
)
def test_classes_are_registered_whatever_comes_first(first):
    assert _run(f"{first}; {_CHECK}") == ["[True, True, True]"]


@pytest.mark.slow
def test_saved_model_loads_in_a_fresh_process(tmp_path):
    """A .keras file with package layers, saved in one process, loads in
    another that only did ``import keras_seqmodels`` before importing Keras
    (Keras imported before the package is the same as the save process)."""
    path, expected = tmp_path / "m.keras", tmp_path / "y.npy"
    _run(
        "import numpy as np, keras, keras_seqmodels as ks; "
        "x = keras.Input((5, 3)); "
        "y = ks.layers.Recurrent(ks.cells.LSTMCell(4))(x); "
        "m = keras.Model(x, y); "
        f"m.save({str(path)!r}); "
        f"np.save({str(expected)!r}, m(np.ones((2, 5, 3), 'float32')))"
    )
    out = _run(
        "import keras_seqmodels; import numpy as np, keras; "
        f"m = keras.saving.load_model({str(path)!r}, safe_mode=True); "
        f"print(np.allclose(m(np.ones((2, 5, 3), 'float32')), np.load({str(expected)!r}))); "
        "print(type(m.layers[1]).__module__)"
    )
    assert out == ["True", "keras_seqmodels.layers.recurrent"]
