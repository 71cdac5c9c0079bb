"""Untrusted files: the zoo loader refuses tampered, corrupt and unsafe models.

Each test registers an artifact into a temporary zoo (the index and artifact
paths are monkeypatched; the package's own index is never touched) and loads
it with ``keras_seqmodels.zoo.load``.
"""

import json
import os
import zipfile

import keras
import numpy as np
import pytest
from fuzz_record import record

import keras_seqmodels as ks


def register(name, path):
    return ks.zoo.register_model(
        name,
        str(path),
        task="test",
        metrics={},
        data="none",
        command="none",
        card="none",
    )


def good_model(path):
    inputs = keras.Input((5, 3))
    outputs = ks.layers.Recurrent(ks.cells.GRUCell(4))(inputs)
    model = keras.Model(inputs, outputs)
    model.save(path)
    return model


def artifact(name):
    return ks.zoo.artifact_path(name)


def test_good_artifact_loads(zoo_dir):
    model = good_model(zoo_dir / "good.keras")
    register("good", zoo_dir / "good.keras")
    loaded = ks.zoo.load("good").model
    x = np.random.default_rng(0).standard_normal((2, 5, 3)).astype("float32")
    np.testing.assert_allclose(
        keras.ops.convert_to_numpy(loaded(x)),
        keras.ops.convert_to_numpy(model(x)),
        atol=1e-6,
    )


@pytest.mark.parametrize("where", ["first", "middle", "last"])
def test_checksum_mismatch_is_refused_before_loading(zoo_dir, monkeypatch, where):
    good_model(zoo_dir / "good.keras")
    entry = register("tampered", zoo_dir / "good.keras")
    path = artifact("tampered")
    data = bytearray(open(path, "rb").read())
    offset = {"first": 0, "middle": len(data) // 2, "last": len(data) - 1}[where]
    data[offset] ^= 0x01  # a single flipped bit
    with open(path, "wb") as f:
        f.write(data)
    calls = []
    monkeypatch.setattr(keras.saving, "load_model", lambda *a, **k: calls.append(a))
    with pytest.raises(ks.zoo.ArtifactError) as info:
        ks.zoo.load("tampered")
    message = str(info.value)
    assert "refusing to load 'tampered'" in message
    assert entry["sha256"] in message and "SHA-256" in message
    assert calls == []  # nothing from the file was deserialized
    record("bad files", "checksum mismatch refused")


def corrupt_variants(good):
    data = open(good, "rb").read()
    with zipfile.ZipFile(good) as z:
        members = {n: z.read(n) for n in z.namelist()}
    yield "empty", b""
    yield "truncated to half", data[: len(data) // 2]
    yield "truncated by one byte", data[:-1]
    yield "not a zip", b"this is not a keras archive" * 10

    def rezip(changed):
        import io

        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w") as z:
            for n, content in {**members, **changed}.items():
                if content is not None:
                    z.writestr(n, content)
        return buf.getvalue()

    yield "config not JSON", rezip({"config.json": b"{not json"})
    yield "config missing", rezip({"config.json": None})
    yield "weights missing", rezip({"model.weights.h5": None})
    yield "weights garbage", rezip({"model.weights.h5": b"\x89HDF\r\n\x1a\n" + b"0" * 64})
    config = json.loads(members["config.json"])
    config["config"]["layers"][1]["config"]["cell"]["config"]["units"] = -3
    yield "negative units in config", rezip({"config.json": json.dumps(config)})


VARIANTS = [
    "empty",
    "truncated to half",
    "truncated by one byte",
    "not a zip",
    "config not JSON",
    "config missing",
    "weights missing",
    "weights garbage",
    "negative units in config",
]


@pytest.mark.parametrize("variant", VARIANTS)
def test_corrupt_artifact_gives_a_clear_error(zoo_dir, variant):
    good = zoo_dir / "good.keras"
    good_model(good)
    content = dict(corrupt_variants(good))[variant]
    bad = zoo_dir / "bad.keras"
    bad.write_bytes(content)
    # Recorded as it is (a broken upload): the checksum matches, so the
    # loader's own checks must catch it.
    register("broken", bad)
    with pytest.raises(ks.zoo.ArtifactError) as info:
        ks.zoo.load("broken")
    message = str(info.value)
    assert "'broken'" in message or "not a valid .keras archive" in message, message
    assert artifact("broken") in message
    record("bad files", f"corrupt .keras: {variant}")


def malicious_lambda_model(path, marker):
    # A Python lambda is stored as bytecode; loading it unsafely runs it.
    payload = eval(  # noqa: S307 (building the payload under test)
        f'lambda x: (__import__("pathlib").Path({str(marker)!r}).write_text("ran"), x)[1]'
    )
    inputs = keras.Input((3,))
    model = keras.Model(inputs, keras.layers.Lambda(payload)(inputs))
    os.remove(marker)  # building the model ran the payload once
    model.save(path)


def test_safe_mode_blocks_a_lambda_layer(zoo_dir):
    marker = zoo_dir / "payload-ran"
    malicious_lambda_model(zoo_dir / "evil.keras", marker)
    register("evil", zoo_dir / "evil.keras")  # checksum matches: trust is the issue
    with pytest.raises(ks.zoo.ArtifactError) as info:
        ks.zoo.load("evil")
    assert "safe_mode" in str(info.value) and "Lambda" in str(info.value)
    assert not marker.exists()
    # Control: the payload is live; unsafe loading would have run it.
    keras.saving.load_model(artifact("evil"), safe_mode=False)
    assert marker.read_text() == "ran"
    record("bad files", "lambda payload blocked")


def evil_objects(marker):
    return {
        "os.system": {
            "module": "os",
            "class_name": "system",
            "config": {"command": f"touch {marker}"},
        },
        "builtins.exec": {
            "module": "builtins",
            "class_name": "exec",
            "config": {"source": f"open({str(marker)!r}, 'w')"},
        },
        "subprocess.Popen": {
            "module": "subprocess",
            "class_name": "Popen",
            "config": {"args": ["touch", str(marker)]},
        },
    }


@pytest.mark.parametrize("target", ["os.system", "builtins.exec", "subprocess.Popen"])
@pytest.mark.parametrize("slot", ["activation", "kernel_initializer"])
def test_config_naming_arbitrary_python_is_refused(zoo_dir, target, slot):
    marker = zoo_dir / "payload-ran"
    good = zoo_dir / "good.keras"
    good_model(good)
    with zipfile.ZipFile(good) as z:
        members = {n: z.read(n) for n in z.namelist()}
    config = json.loads(members["config.json"])
    cell_config = config["config"]["layers"][1]["config"]["cell"]["config"]
    cell_config[slot] = dict(evil_objects(marker)[target], registered_name=None)
    with zipfile.ZipFile(zoo_dir / "evil.keras", "w") as z:
        for n, content in members.items():
            z.writestr(n, json.dumps(config) if n == "config.json" else content)
    register("evil-config", zoo_dir / "evil.keras")
    with pytest.raises(ks.zoo.ArtifactError, match="could not load 'evil-config'"):
        ks.zoo.load("evil-config")
    assert not marker.exists()
    record("bad files", f"config names {target}: refused")


def test_unknown_model_lists_the_known_ones(zoo_dir):
    good_model(zoo_dir / "good.keras")
    register("good", zoo_dir / "good.keras")
    with pytest.raises(KeyError, match="unknown model 'nope'. Known models: good"):
        ks.zoo.load("nope")


def test_missing_artifact(zoo_dir):
    good_model(zoo_dir / "good.keras")
    register("gone", zoo_dir / "good.keras")
    os.remove(artifact("gone"))
    with pytest.raises(ks.zoo.ArtifactError, match="artifact of 'gone' not found"):
        ks.zoo.load("gone")
