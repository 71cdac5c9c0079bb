"""A plain (non-editable) install works without the source tree."""

import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.mark.slow
@pytest.mark.tf_only
def test_non_editable_install_imports_without_source_tree(tmp_path):
    target = tmp_path / "site"
    build = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "--no-build-isolation",
         "--quiet", "--target", str(target), ROOT],
        capture_output=True, text=True, timeout=600,
    )
    assert build.returncode == 0, build.stderr[-2000:]
    code = (
        "import os, keras_seqmodels as ks\n"
        "assert 'site' in ks.__file__, ks.__file__\n"
        "import numpy as np\n"
        "y = ks.layers.Recurrent(ks.cells.LSTMCell(3))(np.ones((1, 2, 2), 'float32'))\n"
        "assert tuple(y.shape) == (1, 3)\n"
        "index = os.path.join(os.path.dirname(ks.zoo.__file__), 'index.json')\n"
        "assert os.path.isfile(index)\n"
        "for name in ks.zoo.list_models():\n"
        "    assert os.path.isfile(ks.zoo.artifact_path(name)), name\n"
        "print('ok', len(ks.zoo.list_models()))\n"
    )
    env = dict(os.environ, PYTHONPATH=str(target), TF_CPP_MIN_LOG_LEVEL="3")
    run = subprocess.run(
        [sys.executable, "-c", code], cwd=str(tmp_path), env=env,
        capture_output=True, text=True, timeout=600,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.strip().startswith("ok")
