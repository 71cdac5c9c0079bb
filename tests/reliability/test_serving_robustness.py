"""Serving robustness: exported SavedModels under hostile string inputs.

Parametrized at collection time over

- every SavedModel the zoo index points at (any value of an entry, at any
  depth, naming a folder with a ``saved_model.pb`` beside the artifacts or in
  the checkout), so translation and tagging exports join as they are
  registered; and
- ``package-lstm-tagger``, an export built here from the package's own
  ``Recurrent``/``LSTMCell`` behind a string-in signature, so the probe always
  has a model to run and the package's layers are checked under serving.

Each export is loaded in a clean process (TensorFlow only) and its
``serving_default`` signature is fed every probe: empty strings, a
10,000-character input, non-UTF-8 bytes, whitespace only, an empty batch and
a batch of mixed lengths. Each probe must give an output (with finite numbers)
or an error with a message; the process must not crash.
"""

import json
import os

import keras
import numpy as np
import pytest
from fuzz_record import record

import keras_seqmodels as ks
from keras_seqmodels.testing import run_in_clean_process
from keras_seqmodels.zoo import api

LONG = ("word " * 2000).encode()  # 10,000 characters, 2,000 tokens
PROBES = {
    "empty string": [b""],
    "10,000 characters": [LONG],
    "10,000 characters, no spaces": [b"x" * 10000],
    "non-UTF-8 bytes": [b"\xff\xfe caf\xe9 \xc3\x28 \x80"],
    "whitespace only": [b" \t\n "],
    "empty batch": [],
    "mixed lengths": [b"", b"a", b"the cat sat on the mat", LONG, b"\xff\xfe"],
}

PROBE_SNIPPET = """
import json
import numpy as np
import tensorflow as tf

loaded = tf.saved_model.load(str(inputs["export_dir"]))
fn = loaded.signatures["serving_default"]
specs = fn.structured_input_signature[1]
text_keys = [k for k, s in specs.items() if s.dtype == tf.string]
if len(text_keys) != 1:
    raise SystemExit(f"probe: expected one string input, found {sorted(specs)}")
key = text_keys[0]
scalar = specs[key].shape.rank == 0
results = {}
for name, batch in json.loads(str(inputs["probes"])).items():
    batch = [bytes.fromhex(b) for b in batch]
    calls = [[b] for b in batch] if scalar else [batch]
    outcome = {"status": "ok", "outputs": {}}
    for call in calls:
        feed = {}
        for k, s in specs.items():
            if k == key:
                feed[k] = tf.constant(call[0] if scalar else call, dtype=tf.string)
            else:  # other inputs: zeros of their declared shape
                shape = [len(call) if d is None else d for d in s.shape]
                feed[k] = tf.zeros(shape, s.dtype)
        try:
            out = fn(**feed)
        except Exception as err:  # the error must carry a message
            first = (str(err).strip().splitlines() or [""])[0]
            outcome = {"status": "error", "type": type(err).__name__,
                       "message": first[:300]}
            break
        for k, v in out.items():
            v = v.numpy()
            info = {"shape": list(v.shape), "dtype": str(v.dtype)}
            if v.dtype.kind == "f":
                info["finite"] = bool(np.all(np.isfinite(v)))
            outcome["outputs"][k] = info
    results[name] = outcome
outputs["results"] = np.asarray(json.dumps(results))
"""


def _savedmodel_dirs(value, roots):
    if isinstance(value, dict):
        for v in value.values():
            yield from _savedmodel_dirs(v, roots)
    elif isinstance(value, list):
        for v in value:
            yield from _savedmodel_dirs(v, roots)
    elif isinstance(value, str) and value:
        for root in roots:
            path = os.path.join(root, value)
            if os.path.isfile(os.path.join(path, "saved_model.pb")):
                yield os.path.normpath(path)


def zoo_exports():
    """``(id, path)`` of every SavedModel the zoo index points at."""
    with open(api.INDEX_PATH, encoding="utf-8") as f:
        index = json.load(f)
    checkout = os.path.dirname(os.path.dirname(api.ZOO_DIR))
    roots = [api.ARTIFACT_DIR, checkout, os.path.join(checkout, "zoo")]
    found = {}
    for name, entry in sorted(index.items()):
        for path in _savedmodel_dirs(entry, roots):
            found.setdefault(path, f"zoo:{name}:{os.path.basename(path)}")
    return sorted((label, path) for path, label in found.items())


FIXTURE = "package-lstm-tagger"
EXPORTS = [FIXTURE] + [label for label, _ in zoo_exports()]
ZOO_PATHS = dict(zoo_exports())


def export_package_tagger(path):
    """A string-in tagger from the package's layers (untrained: shapes only)."""
    import tensorflow as tf

    keras.utils.set_random_seed(0)
    ids = keras.Input((None,), dtype="int32")
    x = keras.layers.Embedding(1000, 8, mask_zero=True)(ids)
    h = ks.layers.Recurrent(ks.cells.LSTMCell(6), return_sequences=True)(x)
    model = keras.Model(ids, keras.layers.Dense(3)(h))
    archive = keras.export.ExportArchive()
    archive.track(model)

    def serve(text):
        tokens = tf.strings.split(text)
        token_ids = tf.strings.to_hash_bucket_fast(tokens, 999) + 1
        dense = tf.cast(token_ids.to_tensor(0), "int32")
        return {"logits": model(dense), "lengths": tokens.row_lengths()}

    archive.add_endpoint(
        "serving_default",
        serve,
        input_signature=[tf.TensorSpec([None], tf.string, name="text")],
    )
    archive.write_out(str(path), verbose=False)
    return str(path)


@pytest.fixture(scope="module")
def export_dirs(tmp_path_factory):
    dirs = dict(ZOO_PATHS)
    dirs[FIXTURE] = export_package_tagger(tmp_path_factory.mktemp("serving") / "tagger")
    return dirs


@pytest.mark.tf_only
@pytest.mark.slow
@pytest.mark.parametrize("export", EXPORTS)
def test_hostile_strings_give_an_output_or_a_clear_error(export, export_dirs):
    probes = {k: [b.hex() for b in v] for k, v in PROBES.items()}
    out = run_in_clean_process(
        PROBE_SNIPPET,
        {"export_dir": np.asarray(export_dirs[export]), "probes": np.asarray(json.dumps(probes))},
        timeout=600,
    )  # raises CleanProcessError if the process crashed
    results = json.loads(str(out["results"]))
    assert sorted(results) == sorted(PROBES)
    for name, outcome in results.items():
        if outcome["status"] == "error":
            assert outcome["message"], f"{export}/{name}: error without a message"
            record(f"serving {export}", "clear error")
            continue
        for key, info in outcome["outputs"].items():
            assert info.get("finite", True), f"{export}/{name}: {key} not finite"
        record(f"serving {export}", "output")
    if export == FIXTURE:
        # The package's layers serve every probe: no errors at all.
        assert all(o["status"] == "ok" for o in results.values()), results
        shapes = {n: o["outputs"]["logits"]["shape"] for n, o in results.items()}
        assert shapes["empty string"] == [1, 0, 3]
        assert shapes["10,000 characters"] == [1, 2000, 3]
        assert shapes["empty batch"][0] == 0
        assert shapes["mixed lengths"] == [5, 2000, 3]
