"""Serving robustness: exported SavedModels under hostile string inputs.

Parametrized at collection time over

- every SavedModel the zoo index points at (any value of an entry, at any
  depth, naming a folder with a ``saved_model.pb`` beside the artifacts or in
  the checkout), so translation and tagging exports join as they are
  registered; and
- the zoo's translation and tagging models as a user exports them,
  ``seqmodels export multi30k-en-de DIR`` and ``seqmodels export ud-ewt-upos
  DIR`` (once per test module: the translation export takes a while); and
- ``package-lstm-tagger``, an export built here from the package's own
  ``Recurrent``/``LSTMCell`` behind a string-in signature, so the probe always
  has a model to run and the package's layers are checked under serving.

All exports are loaded in one clean process (TensorFlow only) and each
``serving_default`` signature is fed every probe: empty strings, a
10,000-character input, non-UTF-8 bytes, whitespace only, an empty batch and
a batch of mixed lengths. Each probe must give an output (with finite numbers)
or an error with a message; the process must not crash. The zoo's exports and
the package-built tagger must give an output for every probe.
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

probes = json.loads(str(inputs["probes"]))
for label, export_dir in json.loads(str(inputs["exports"])).items():
    fn = tf.saved_model.load(export_dir).signatures["serving_default"]
    specs = fn.structured_input_signature[1]
    text_keys = [k for k, s in specs.items() if s.dtype == tf.string]
    if len(text_keys) != 1:
        raise SystemExit(f"probe: expected one string input, found {sorted(specs)}")
    key = text_keys[0]
    scalar = specs[key].shape.rank == 0
    results = {}
    for name, batch in probes.items():
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
                lines = [l for l in str(err).strip().splitlines() if l.strip()]
                outcome = {"status": "error", "type": type(err).__name__,
                           "message": " | ".join(lines)[:600]}
                break
            for k, v in out.items():
                v = v.numpy()
                info = {"shape": list(v.shape), "dtype": str(v.dtype)}
                if v.dtype.kind == "f":
                    info["finite"] = bool(np.all(np.isfinite(v)))
                if v.dtype == object:  # per row: are all its strings empty?
                    rows = v.reshape(len(v), -1) if v.size else v.reshape(len(v), 0)
                    info["blank_rows"] = [not any(r) for r in rows.tolist()]
                outcome["outputs"][k] = info
        results[name] = outcome
    outputs[label] = np.asarray(json.dumps(results))
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
    roots = [checkout, api.CHECKOUT_ZOO_DIR]
    found = {}
    for name, entry in sorted(index.items()):
        for path in _savedmodel_dirs(entry, roots):
            found.setdefault(path, f"zoo:{name}:{os.path.basename(path)}")
    return sorted((label, path) for path, label in found.items())


FIXTURE = "package-lstm-tagger"
# Zoo models probed through their `seqmodels export` SavedModel.
COMMAND_EXPORTS = {
    "seqmodels-export:multi30k-en-de": "multi30k-en-de",
    "seqmodels-export:ud-ewt-upos": "ud-ewt-upos",
}
EXPORTS = [FIXTURE] + sorted(COMMAND_EXPORTS) + [label for label, _ in zoo_exports()]
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
def probe_results(tmp_path_factory):
    """Export once per module, then probe every export in one clean process."""
    from keras_seqmodels.cli.main import main

    root = tmp_path_factory.mktemp("serving")
    dirs = dict(ZOO_PATHS)
    dirs[FIXTURE] = export_package_tagger(root / "tagger")
    for label, name in COMMAND_EXPORTS.items():
        path = str(root / name)
        assert main(["export", name, path]) == 0
        dirs[label] = path
    labels = {f"e{i}": label for i, label in enumerate(sorted(dirs))}
    probes = {k: [b.hex() for b in v] for k, v in PROBES.items()}
    out = run_in_clean_process(
        PROBE_SNIPPET,
        {
            "exports": np.asarray(json.dumps({k: dirs[v] for k, v in labels.items()})),
            "probes": np.asarray(json.dumps(probes)),
        },
        timeout=600,
    )  # raises CleanProcessError if the process crashed
    return {label: json.loads(str(out[key])) for key, label in labels.items()}


@pytest.mark.tf_only
@pytest.mark.slow
@pytest.mark.parametrize("export", EXPORTS)
def test_hostile_strings_give_an_output_or_a_clear_error(export, probe_results):
    results = probe_results[export]
    assert sorted(results) == sorted(PROBES)
    for name, outcome in results.items():
        if outcome["status"] == "error":
            assert outcome["message"], f"{export}/{name}: error without a message"
            record(f"serving {export}", "clear error")
            continue
        for key, info in outcome["outputs"].items():
            assert info.get("finite", True), f"{export}/{name}: {key} not finite"
        record(f"serving {export}", "output")
    if export == FIXTURE or export in COMMAND_EXPORTS:
        # The package's layers and the zoo's exports serve every probe.
        assert all(o["status"] == "ok" for o in results.values()), results
    if export == FIXTURE:
        shapes = {n: o["outputs"]["logits"]["shape"] for n, o in results.items()}
        assert shapes["empty string"] == [1, 0, 3]
        assert shapes["10,000 characters"] == [1, 2000, 3]
        assert shapes["empty batch"][0] == 0
        assert shapes["mixed lengths"] == [5, 2000, 3]


@pytest.mark.tf_only
@pytest.mark.slow
def test_zoo_translation_export_answers_each_request(probe_results):
    results = probe_results["seqmodels-export:multi30k-en-de"]
    out = {n: o["outputs"]["translations"] for n, o in results.items()}
    assert {n: o["shape"] for n, o in out.items()} == {n: [len(b)] for n, b in PROBES.items()}
    # Blank in, blank out; text in, a translation out (one per request).
    assert out["empty string"]["blank_rows"] == [True]
    assert out["whitespace only"]["blank_rows"] == [True]
    blank = out["mixed lengths"]["blank_rows"]
    assert blank[0] and not blank[2] and not blank[3], blank
    assert out["10,000 characters"]["blank_rows"] == [False]


@pytest.mark.tf_only
@pytest.mark.slow
def test_zoo_tagging_export_tags_every_token(probe_results):
    results = probe_results["seqmodels-export:ud-ewt-upos"]
    out = {n: o["outputs"]["tags"] for n, o in results.items()}
    assert out["10,000 characters"]["shape"] == [1, 2000]  # one tag per word
    assert out["10,000 characters, no spaces"]["shape"] == [1, 1]
    assert out["mixed lengths"]["shape"] == [5, 2000]
    assert out["empty batch"]["shape"][0] == 0
    # No words, no tags.
    assert out["empty string"]["blank_rows"] == [True]
    assert out["whitespace only"]["blank_rows"] == [True]
    assert out["mixed lengths"]["blank_rows"] == [True, False, False, False, False]
