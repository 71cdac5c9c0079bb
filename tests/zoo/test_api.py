"""The zoo's loading API on a temporary zoo (index, checksums, assets)."""

import json
import os
import subprocess
import sys
import time

import keras
import numpy as np
import pytest

from keras_seqmodels import zoo
from keras_seqmodels.zoo import api, registry

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture
def tmp_zoo(tmp_path, monkeypatch):
    """An empty zoo in a temporary folder, with one tiny registered model."""
    index = tmp_path / "index.json"
    index.write_text("{}")
    artifacts = tmp_path / "artifacts"
    for module in (api, registry):
        monkeypatch.setattr(module, "INDEX_PATH", str(index))
        monkeypatch.setattr(module, "ARTIFACT_DIR", str(artifacts))
    inputs = keras.Input((3,))
    model = keras.Model(inputs, keras.layers.Dense(2, name="dense")(inputs))
    source = tmp_path / "tiny.keras"
    model.save(source)
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("a\nb\n")
    registry.register_model(
        "tiny",
        str(source),
        task="test",
        metrics={"accuracy": 0.5},
        data="none",
        command="pytest",
        card="zoo/tiny/card.md",
        extra={"train_seconds": 1.0},
        assets={"vocabulary": str(vocab)},
    )
    return model, artifacts


def test_list_info_and_load_round_trip(tmp_zoo):
    model, _ = tmp_zoo
    assert zoo.list_models() == ["tiny"]
    card = zoo.info("tiny")
    for key in ("task", "data", "metrics", "command", "size_bytes", "sha256", "card"):
        assert key in card
    assert card["metrics"] == {"accuracy": 0.5}
    assert card["train_seconds"] == 1.0
    assert card["size_bytes"] == os.path.getsize(zoo.artifact_path("tiny"))
    loaded = zoo.load("tiny")
    x = np.random.default_rng(0).normal(size=(4, 3)).astype("float32")
    np.testing.assert_array_equal(np.asarray(loaded(x)), np.asarray(model(x)))
    with open(zoo.asset_path("tiny", "vocabulary")) as f:
        assert f.read().split() == ["a", "b"]


def test_load_refuses_a_modified_artifact(tmp_zoo):
    path = zoo.artifact_path("tiny")
    with open(path, "ab") as f:
        f.write(b"tampered")
    with pytest.raises(zoo.ArtifactError, match="refusing to load 'tiny'.*SHA-256"):
        zoo.load("tiny")


def test_load_refuses_a_missing_artifact(tmp_zoo):
    os.remove(zoo.artifact_path("tiny"))
    with pytest.raises(zoo.ArtifactError, match="not found"):
        zoo.load("tiny")


def test_unknown_model_is_named_and_known_models_listed(tmp_zoo):
    with pytest.raises(KeyError, match=r"unknown model 'nope'.*Known models: tiny"):
        zoo.load("nope")
    with pytest.raises(KeyError, match="nope"):
        zoo.info("nope")


def test_assets_are_checked(tmp_zoo):
    _, artifacts = tmp_zoo
    with pytest.raises(KeyError, match="no asset 'merges'.*vocabulary"):
        zoo.asset_path("tiny", "merges")
    with open(artifacts / "tiny.vocab.txt", "a") as f:
        f.write("c\n")
    with pytest.raises(zoo.ArtifactError, match="refusing asset 'vocabulary'"):
        zoo.asset_path("tiny", "vocabulary")


def test_safe_mode_refuses_lambda_layers(tmp_zoo, tmp_path):
    inputs = keras.Input((3,))
    model = keras.Model(inputs, keras.layers.Lambda(lambda x: x * 2)(inputs))
    path = tmp_path / "lambda.keras"
    model.save(path)
    registry.register_model("unsafe", str(path), "t", {}, "d", "c", "card")
    with pytest.raises(zoo.ArtifactError, match="could not load 'unsafe'"):
        zoo.load("unsafe")


# Run in two processes at once: wait for the "go" file, then register two
# entries. json.load is slowed so that, without the lock, both processes read
# the index before either writes it back (the lost update the lock prevents).
_REGISTER_SCRIPT = """
import json, os, sys, time
from keras_seqmodels.zoo import registry
root, tag = sys.argv[1], sys.argv[2]
registry.INDEX_PATH = os.path.join(root, "index.json")
registry.ARTIFACT_DIR = os.path.join(root, "artifacts")
load = json.load
def slow_load(f):
    value = load(f)
    time.sleep(0.5)
    return value
json.load = slow_load
open(os.path.join(root, "ready-" + tag), "w").close()
deadline = time.monotonic() + 600
while not os.path.exists(os.path.join(root, "go")):
    if time.monotonic() > deadline:
        sys.exit("no 'go' file within 600 s")
    time.sleep(0.01)
for i in range(2):
    registry.register_model(f"{tag}-{i}", os.path.join(root, "model.bin"), task=tag,
                            metrics={"i": i}, data="d", command="c", card="card")
"""


def test_concurrent_registers_keep_both_entries(tmp_path):
    (tmp_path / "index.json").write_text('{"old": {"task": "kept"}}')
    (tmp_path / "model.bin").write_bytes(b"weights")
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _REGISTER_SCRIPT, str(tmp_path), tag],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for tag in ("a", "b")
    ]
    try:
        # Generous: each process imports Keras and its backend first, which
        # takes over a minute on a loaded 2-core machine; the race starts at "go".
        deadline = time.monotonic() + 300
        while not all((tmp_path / f"ready-{tag}").exists() for tag in ("a", "b")):
            assert all(p.poll() is None for p in procs), [p.communicate()[1][-2000:] for p in procs]
            assert time.monotonic() < deadline, "registering processes did not start"
            time.sleep(0.05)
        (tmp_path / "go").touch()
        for p in procs:
            _, err = p.communicate(timeout=120)
            assert p.returncode == 0, err[-2000:]
    finally:
        for p in procs:  # a failed wait leaves no process behind
            if p.poll() is None:
                p.kill()
                p.communicate()
    index = json.loads((tmp_path / "index.json").read_text())
    assert sorted(index) == ["a-0", "a-1", "b-0", "b-1", "old"]
    assert index["b-1"]["metrics"] == {"i": 1}
    assert oct(os.stat(tmp_path / "index.json").st_mode & 0o777) == oct(0o644)


@pytest.mark.parametrize("posix", [True, False])
def test_index_lock_times_out_while_held_and_frees_on_release(tmp_path, monkeypatch, posix):
    if not posix:
        monkeypatch.setattr(registry, "fcntl", None)
    elif registry.fcntl is None:
        pytest.skip("no fcntl on this platform")
    index = str(tmp_path / "index.json")
    with registry.index_lock(index):
        with pytest.raises(TimeoutError, match="index lock"):
            with registry.index_lock(index, timeout=0.2):
                pass
    with registry.index_lock(index, timeout=0.2):
        pass
    assert not os.path.exists(index + ".lockdir")


def test_shipped_index_is_consistent():
    """Every model in the real index has its artifact and assets, checksums match."""
    with open(api.INDEX_PATH) as f:
        index = json.load(f)
    for name, entry in index.items():
        api.verify_artifact(zoo.artifact_path(name), entry["sha256"], name)
        for key in entry.get("assets", {}):
            assert os.path.isfile(zoo.asset_path(name, key))
        assert entry["size_bytes"] < 50e6


@pytest.mark.slow
@pytest.mark.tf_only
def test_non_editable_install_ships_the_artifacts(tmp_path):
    """`pip install .` (not editable) puts the index and artifacts in site-packages."""
    target = tmp_path / "site"
    build = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "--no-build-isolation",
         "--no-index", "--target", str(target), REPO],  # fmt: skip
        capture_output=True, text=True, cwd=tmp_path,
    )  # fmt: skip
    assert build.returncode == 0, build.stdout[-2000:] + build.stderr[-2000:]
    installed = target / "keras_seqmodels" / "zoo"
    with open(api.INDEX_PATH) as f:
        index = json.load(f)
    with open(installed / "index.json") as f:
        assert json.load(f) == index
    for entry in index.values():
        assert (installed / "artifacts" / entry["artifact"]).is_file()
        for asset in entry.get("assets", {}).values():
            assert (installed / "artifacts" / asset["file"]).is_file()
    # The installed copy finds its own artifacts (not the checkout's).
    probe = (
        "import keras_seqmodels.zoo.api as a, json, os;"
        "idx = json.load(open(a.INDEX_PATH));"
        "[a.verify_artifact(a.artifact_path(n), e['sha256'], n) for n, e in idx.items()];"
        "print(a.ZOO_DIR)"
    )
    env = dict(os.environ, PYTHONPATH=str(target))
    run = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, env=env, cwd=tmp_path
    )
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.strip().endswith(str(installed))
