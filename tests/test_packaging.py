"""The wheel is small (no zoo weights) and a plain install works without the source tree."""

import json
import os
import shutil
import subprocess
import sys
import zipfile

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WHEEL_LIMIT_BYTES = 5 * 2**20

# Run in the installed copy, outside the checkout: the layers work, the index
# ships (the checkout's models, all of them), an artifact is found nowhere
# until a mirror is named, then it is downloaded once (file:// mirror = the
# checkout's zoo/) and the task answers.
_PROBE = """
import os, keras_seqmodels as ks
import numpy as np
assert 'site' in ks.__file__, ks.__file__
y = ks.layers.Recurrent(ks.cells.LSTMCell(3))(np.ones((1, 2, 2), 'float32'))
assert tuple(y.shape) == (1, 3)
assert sorted(ks.zoo.list_models()) == {models!r}, ks.zoo.list_models()
try:
    ks.zoo.artifact_path('ntm-copy')
    raise SystemExit('found an artifact with no source tree and no mirror')
except ks.zoo.ArtifactError as err:
    assert 'KERAS_SEQMODELS_ZOO_URL' in str(err), err
os.environ['KERAS_SEQMODELS_ZOO_URL'] = 'file://' + os.path.join({root!r}, 'zoo')
bits = [[1, 0, 1, 1, 0, 0, 1, 0], [0, 1, 0, 0, 1, 1, 0, 1]]
assert ks.zoo.load('ntm-copy').predict(bits) == bits
assert os.path.isfile(os.path.join(os.environ['KERAS_SEQMODELS_CACHE_DIR'], 'ntm-copy',
                                   'ntm-copy.keras'))
print('ok')
"""


@pytest.mark.slow
@pytest.mark.tf_only
def test_wheel_is_small_and_installs_without_source_tree(tmp_path):
    # Built from a copy of what the wheel is made of: no stale build/ of the
    # checkout can slip in, and the checkout gets no build/ of its own.
    source = tmp_path / "source"
    shutil.copytree(os.path.join(ROOT, "keras_seqmodels"), source / "keras_seqmodels",
                    ignore=shutil.ignore_patterns("__pycache__"))  # fmt: skip
    for name in ("setup.cfg", "pyproject.toml", "README.md"):
        shutil.copy(os.path.join(ROOT, name), source / name)
    wheels = tmp_path / "wheels"
    build = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
         "--quiet", "--wheel-dir", str(wheels), str(source)],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert build.returncode == 0, build.stderr[-2000:]
    [wheel] = list(wheels.glob("keras_seqmodels-*.whl"))
    assert wheel.stat().st_size < WHEEL_LIMIT_BYTES, wheel.stat().st_size
    names = zipfile.ZipFile(wheel).namelist()
    assert "keras_seqmodels/zoo/index.json" in names
    assert "keras_seqmodels/zoo/models/ptb_lstm/task.py" in names
    assert not [n for n in names if n.endswith(".keras")]

    target = tmp_path / "site"
    install = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "--no-index", "--quiet",
         "--target", str(target), str(wheel)],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert install.returncode == 0, install.stderr[-2000:]
    env = dict(os.environ, PYTHONPATH=str(target), TF_CPP_MIN_LOG_LEVEL="3",
               KERAS_SEQMODELS_CACHE_DIR=str(tmp_path / "cache"))  # fmt: skip
    for var in ("KERAS_SEQMODELS_ZOO_DIR", "KERAS_SEQMODELS_ZOO_URL"):
        env.pop(var, None)
    with open(os.path.join(ROOT, "keras_seqmodels", "zoo", "index.json")) as f:
        models = sorted(json.load(f))
    run = subprocess.run(
        [sys.executable, "-c", _PROBE.format(root=ROOT, models=models)], cwd=str(tmp_path),
        env=env,
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.strip().endswith("ok")
