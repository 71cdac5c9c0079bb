"""MirroredStrategy over 2 logical CPU devices against one device.

The training runs in one subprocess (mirrored_run.py, about a minute), since
logical devices must be set before TensorFlow starts; the tests read its
results.
"""

import os
import subprocess
import sys

import numpy as np
import pytest

pytestmark = [pytest.mark.tf_only, pytest.mark.slow]

HERE = os.path.dirname(os.path.abspath(__file__))


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    out = tmp_path_factory.mktemp("mirrored") / "runs.npz"
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", KERAS_BACKEND="tensorflow")
    proc = subprocess.run(
        [sys.executable, os.path.join(HERE, "mirrored_run.py"), str(out)],
        env=env,
        capture_output=True,
        text=True,
        timeout=400,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    with np.load(out) as data:
        return {k: data[k] for k in data.files}


def weights(runs, name, label, which):
    prefix = f"{name}/{label}/{which}/"
    count = sum(1 for k in runs if k.startswith(prefix))
    return [runs[f"{prefix}{i}"] for i in range(count)]


def update_norm(runs, name, label):
    before = weights(runs, name, label, "initial")
    after = weights(runs, name, label, "final")
    return float(np.sqrt(sum(np.sum((a - b) ** 2) for a, b in zip(after, before))))


def test_runs_used_one_and_two_replicas(runs):
    for name in ("plain", "global_clipnorm", "clipnorm"):
        assert runs[f"{name}/one/replicas"] == 1
        assert runs[f"{name}/two/replicas"] == 2


def test_mirrored_loss_curve_equals_one_device(runs):
    one, two = runs["plain/one/loss"], runs["plain/two/loss"]
    assert len(one) == 3
    # The model learns: the curve is not flat, so equal curves mean something.
    assert one[-1] < one[0] - 1e-3
    np.testing.assert_allclose(two, one, rtol=1e-5)
    for a, b in zip(weights(runs, "plain", "two", "final"), weights(runs, "plain", "one", "final")):
        np.testing.assert_allclose(a, b, atol=1e-5)


def test_same_initial_weights_on_both_runs(runs):
    # Guards the comparisons below: both runs start from the same point.
    for a, b in zip(
        weights(runs, "global_clipnorm", "one", "initial"),
        weights(runs, "global_clipnorm", "two", "initial"),
    ):
        np.testing.assert_array_equal(a, b)


def test_global_clipnorm_update_equals_one_device(runs):
    # The unclipped gradient is far above the threshold, so clipping acts:
    # with SGD(learning_rate=1) one update has norm exactly global_clipnorm.
    assert runs["first_gradient_norm"] > 1.0
    assert update_norm(runs, "global_clipnorm", "one") == pytest.approx(0.1, rel=1e-4)
    assert update_norm(runs, "global_clipnorm", "two") == pytest.approx(0.1, rel=1e-4)
    for a, b in zip(
        weights(runs, "global_clipnorm", "two", "final"),
        weights(runs, "global_clipnorm", "one", "final"),
    ):
        np.testing.assert_allclose(a, b, atol=1e-6)


def test_clipnorm_update_equals_one_device(runs):
    for a, b in zip(
        weights(runs, "clipnorm", "two", "final"),
        weights(runs, "clipnorm", "one", "final"),
    ):
        np.testing.assert_allclose(a, b, atol=1e-6)
    # Each of the 5 variables is clipped to norm 0.05.
    per_variable = [
        np.linalg.norm(a - b)
        for a, b in zip(
            weights(runs, "clipnorm", "one", "final"),
            weights(runs, "clipnorm", "one", "initial"),
        )
    ]
    np.testing.assert_allclose(per_variable, 0.05, rtol=1e-4)


def test_plain_compile_is_fixed_inside_distribution_fixes(runs):
    # Recipes call model.compile themselves: the framework trains them inside
    # distribution_fixes(), which fixes every optimizer, so their update is
    # right too.
    assert update_norm(runs, "global_clipnorm_compile", "two") == pytest.approx(0.1, rel=1e-4)
    for a, b in zip(
        weights(runs, "global_clipnorm_compile", "two", "final"),
        weights(runs, "global_clipnorm_compile", "one", "final"),
    ):
        np.testing.assert_allclose(a, b, atol=1e-6)
    for a, b in zip(
        weights(runs, "global_clipnorm_compile", "one", "final"),
        weights(runs, "global_clipnorm", "one", "final"),
    ):
        np.testing.assert_array_equal(a, b)
