"""The zoo's loading API on a temporary zoo (index, checksums, assets, resolver)."""

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
    artifacts = tmp_path / "zoo"
    for module in (api, registry):
        monkeypatch.setattr(module, "INDEX_PATH", str(index))
    monkeypatch.setenv(api.ENV_DIR, str(artifacts))
    monkeypatch.setenv(api.ENV_CACHE, str(tmp_path / "cache"))
    monkeypatch.delenv(api.ENV_URL, raising=False)
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
    assert zoo.artifact_path("tiny") == str(tmp_zoo[1] / "tiny" / "tiny.keras")
    task = zoo.load("tiny")
    assert type(task) is zoo.Task  # no task module: the generic task
    assert task.info["metrics"] == {"accuracy": 0.5} and task.info["task"] == "test"
    x = np.random.default_rng(0).normal(size=(4, 3)).astype("float32")
    np.testing.assert_array_equal(np.asarray(task.model(x)), np.asarray(model(x)))
    answers = task.predict(x.tolist())
    assert isinstance(answers, list) and isinstance(answers[0][0], float)
    np.testing.assert_allclose(answers, np.asarray(model(x)), rtol=1e-6)
    with open(zoo.asset_path("tiny", "vocabulary")) as f:
        assert f.read().split() == ["a", "b"]
    assert zoo.read_asset("tiny", "vocabulary") == b"a\nb\n"


def test_load_refuses_a_modified_artifact(tmp_zoo):
    path = zoo.artifact_path("tiny")
    with open(path, "r+b") as f:  # the same size: the SHA-256 check finds it
        f.seek(-8, os.SEEK_END)
        f.write(b"tampered")
    with pytest.raises(zoo.ArtifactError, match="refusing to load 'tiny'.*SHA-256"):
        zoo.load("tiny")
    with open(path, "ab") as f:  # another size: refused before it is read
        f.write(b"tampered")
    with pytest.raises(zoo.ArtifactError, match="refusing to load 'tiny'.*bytes, but the zoo "
                                                "index records .*not read"):  # fmt: skip
        zoo.load("tiny")


def test_load_refuses_a_missing_artifact(tmp_zoo):
    os.remove(zoo.artifact_path("tiny"))
    with pytest.raises(zoo.ArtifactError, match="artifact of 'tiny' not found.*ZOO_DIR.*ZOO_URL"):
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
    with open(artifacts / "tiny" / "vocab.txt", "a") as f:
        f.write("c\n")
    with pytest.raises(zoo.ArtifactError, match="refusing asset 'vocabulary'"):
        zoo.asset_path("tiny", "vocabulary")
    with pytest.raises(zoo.ArtifactError, match="refusing asset 'vocabulary'"):
        zoo.read_asset("tiny", "vocabulary")


def test_register_keeps_what_the_model_is_and_warns_of_what_it_drops(tmp_zoo, tmp_path):
    index = json.loads(open(registry.INDEX_PATH).read())
    index["tiny"].update(inputs="float32 (batch, 3)", license="CC0", machine="old CPU")
    with open(registry.INDEX_PATH, "w") as f:
        json.dump(index, f)
    with pytest.warns(UserWarning, match=r"tiny: the previous entry's fields machine, "
                      r"train_seconds described the artifact"):  # fmt: skip
        entry = registry.register_model(
            "tiny", zoo.artifact_path("tiny"), "test", {"accuracy": 0.6}, "none", "pytest",
            "zoo/tiny/card.md", extra={"parameters": 8},
        )
    assert entry["inputs"] == "float32 (batch, 3)" and entry["license"] == "CC0"
    assert entry["metrics"] == {"accuracy": 0.6} and entry["parameters"] == 8
    assert "machine" not in entry and "train_seconds" not in entry
    assert zoo.info("tiny")["inputs"] == "float32 (batch, 3)"


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
os.environ["KERAS_SEQMODELS_ZOO_DIR"] = os.path.join(root, "zoo")
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
    """Every model in the real index has its artifact and assets, checksums match,
    and the card fields a task's ``info`` reports."""
    with open(api.INDEX_PATH) as f:
        index = json.load(f)
    from keras_seqmodels.zoo.models import specs

    shipped = {name for name, spec in specs().items() if spec.shipped}
    assert set(index) == shipped  # every shipped spec has an artifact, and only they
    for name, entry in index.items():
        path = zoo.artifact_path(name)
        assert path == os.path.join(REPO, "zoo", name, entry["artifact"])
        api.verify_artifact(path, entry["sha256"], name)
        for key in entry.get("assets", {}):
            assert zoo.read_asset(name, key)
        assert entry["size_bytes"] < 50e6
        for field in ("task", "domain", "data", "license", "metrics", "intended_use", "limits"):
            assert entry.get(field), (name, field)
    assert not os.path.exists(os.path.join(api.ZOO_DIR, "artifacts"))


def test_a_recipe_only_model_is_not_listed_and_refuses_to_load_in_one_line(capsys):
    from keras_seqmodels.cli.main import main
    from keras_seqmodels.zoo.models import specs

    assert not specs()["ptb-mingru"].shipped
    assert "ptb-mingru" not in zoo.list_models()
    message = (
        "ptb-mingru ships no trained file; train it with `seqmodels train ptb-mingru` "
        "and pass --model"
    )
    for call in (zoo.load, zoo.info, zoo.artifact_path, zoo.load_model):
        with pytest.raises(KeyError) as info:
            call("ptb-mingru")
        assert str(info.value) == message
    capsys.readouterr()
    assert main(["evaluate", "ptb-mingru", "--split", "test"]) == 2
    assert capsys.readouterr().err == f"seqmodels evaluate: error: {message}\n"


def _mirror(tmp_path, monkeypatch, name="tiny"):
    """Move the tiny zoo's files to a file:// mirror; nothing stays local."""
    mirror = tmp_path / "mirror"
    os.rename(tmp_path / "zoo", mirror)
    monkeypatch.setenv(api.ENV_URL, mirror.as_uri())
    return mirror


def test_downloads_once_from_a_file_mirror_with_the_checksum(tmp_zoo, tmp_path, monkeypatch):
    model, _ = tmp_zoo
    mirror = _mirror(tmp_path, monkeypatch)
    task = zoo.load("tiny")
    cached = tmp_path / "cache" / "tiny" / "tiny.keras"
    assert zoo.artifact_path("tiny") == str(cached)
    assert cached.read_bytes() == (mirror / "tiny" / "tiny.keras").read_bytes()
    assert zoo.read_asset("tiny", "vocabulary") == b"a\nb\n"
    x = np.ones((2, 3), "float32")
    np.testing.assert_array_equal(np.asarray(task.model(x)), np.asarray(model(x)))
    # Once cached, no mirror is needed.
    monkeypatch.delenv(api.ENV_URL)
    (mirror / "tiny" / "tiny.keras").unlink()
    np.testing.assert_array_equal(np.asarray(zoo.load("tiny").model(x)), np.asarray(model(x)))


def test_a_mirror_serving_other_bytes_is_refused(tmp_zoo, tmp_path, monkeypatch):
    mirror = _mirror(tmp_path, monkeypatch)
    with open(mirror / "tiny" / "tiny.keras", "ab") as f:
        f.write(b"tampered")
    with pytest.raises(zoo.ArtifactError, match="could not be downloaded from file://.*hash"):
        zoo.load("tiny")
    assert not (tmp_path / "cache" / "tiny" / "tiny.keras").exists()  # not kept
    monkeypatch.setenv(api.ENV_URL, (tmp_path / "nowhere").as_uri())
    with pytest.raises(zoo.ArtifactError, match="artifact of 'tiny'.*could not be downloaded"):
        zoo.load("tiny")


def test_loads_the_bytes_it_hashed_not_a_file_swapped_after(tmp_zoo, tmp_path, monkeypatch):
    """The artifact is replaced right after the loader read it: the model built
    is the one whose SHA-256 was checked, from a private copy (0600 in 0700)."""
    model, artifacts = tmp_zoo
    path = str(artifacts / "tiny" / "tiny.keras")
    inputs = keras.Input((3,))
    other = keras.Model(inputs, keras.layers.Dense(2, name="dense")(inputs))
    other.get_layer("dense").set_weights([np.full((3, 2), 7.0), np.ones(2)])
    swap = tmp_path / "other.keras"
    other.save(swap)

    class SwapAfterRead:
        def __init__(self, f):
            self.f = f

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.f.close()

        def fileno(self):  # the loader checks the size of the open file first
            return self.f.fileno()

        def read(self, *args):
            data = self.f.read(*args)
            os.replace(swap, path)  # the attacker's file, after the read
            return data

    real_open = open

    def swapping_open(file, mode="r", *args, **kwargs):
        f = real_open(file, mode, *args, **kwargs)
        return SwapAfterRead(f) if str(file) == path and "b" in mode else f

    loaded_from = []
    real_load = keras.saving.load_model

    def spy(file, *args, **kwargs):
        loaded_from.append((str(file), os.stat(file).st_mode & 0o777,
                            os.stat(os.path.dirname(file)).st_mode & 0o777))  # fmt: skip
        return real_load(file, *args, **kwargs)

    monkeypatch.setattr(api, "open", swapping_open, raising=False)
    monkeypatch.setattr(keras.saving, "load_model", spy)
    loaded = zoo.load("tiny").model
    assert not swap.exists()  # the swap happened
    x = np.ones((2, 3), "float32")
    np.testing.assert_array_equal(np.asarray(loaded(x)), np.asarray(model(x)))
    assert not np.allclose(np.asarray(loaded(x)), np.asarray(other(x)))
    [(file, file_mode, dir_mode)] = loaded_from
    assert file != path and (file_mode, dir_mode) == (0o600, 0o700)
    assert not os.path.exists(file)  # the private copy is gone
    # The swapped file is refused at the next load.
    monkeypatch.setattr(api, "open", real_open, raising=False)
    with pytest.raises(zoo.ArtifactError, match="refusing to load 'tiny'"):
        zoo.load("tiny")


def test_register_writes_beside_the_card_or_names_the_variable(tmp_zoo, tmp_path, monkeypatch):
    _, artifacts = tmp_zoo
    assert sorted(os.listdir(artifacts / "tiny")) == ["tiny.keras", "vocab.txt"]
    monkeypatch.delenv(api.ENV_DIR)
    monkeypatch.setattr(registry, "CHECKOUT_ZOO_DIR", str(tmp_path / "no-checkout"))
    with pytest.raises(FileNotFoundError, match="register_model: no source checkout.*ZOO_DIR"):
        registry.register_model("x", str(tmp_path / "tiny.keras"), "t", {}, "d", "c", "card")


def _index_entry(name):
    with open(api.INDEX_PATH, encoding="utf-8") as f:
        return json.load(f)[name]


def _rewrite_entry(name, **changes):
    with open(api.INDEX_PATH, encoding="utf-8") as f:
        index = json.load(f)
    index[name].update(changes)
    with open(api.INDEX_PATH, "w", encoding="utf-8") as f:
        json.dump(index, f)


@pytest.mark.parametrize("bad", ["../tiny.keras", "/etc/passwd", "sub/tiny.keras", "..", ""])
def test_index_file_names_that_leave_the_folder_are_refused(tmp_zoo, bad):
    _, artifacts = tmp_zoo
    (artifacts / "outside.keras").write_bytes((artifacts / "tiny" / "tiny.keras").read_bytes())
    _rewrite_entry("tiny", artifact=bad)
    with pytest.raises(zoo.ArtifactError, match="expected a plain file name"):
        zoo.load_model("tiny")
    assets = dict(_index_entry("tiny")["assets"])
    assets["vocabulary"] = dict(assets["vocabulary"], file=bad)
    _rewrite_entry("tiny", assets=assets)
    with pytest.raises(zoo.ArtifactError, match="expected a plain file name"):
        zoo.asset_path("tiny", "vocabulary")


def test_a_symbolic_link_is_followed_to_bytes_that_pass_the_checksum(tmp_zoo, tmp_path):
    # A shared cache keeps artifacts as links to one copy: the link may lead
    # anywhere, the bytes it leads to are what the index checks.
    _, artifacts = tmp_zoo
    outside = tmp_path / "elsewhere.keras"
    target = artifacts / "tiny" / "tiny.keras"
    genuine = target.read_bytes()
    outside.write_bytes(genuine)
    target.unlink()
    target.symlink_to(outside)
    assert zoo.load_model("tiny").count_params() > 0
    outside.write_bytes(genuine[:-1] + bytes([genuine[-1] ^ 1]))  # same size, one bit off
    with pytest.raises(zoo.ArtifactError, match="the SHA-256 of .* but the zoo index records"):
        zoo.load_model("tiny")
    outside.unlink()
    os.mkfifo(outside)  # a link to a pipe is not a file: not found, never opened
    with pytest.raises(zoo.ArtifactError, match="not found"):
        zoo.load_model("tiny")
