"""Property fuzz of every exported serving signature, in a TensorFlow-only process.

The seven zoo models are exported once per test run (`zoo_savedmodel`) with
``keras_seqmodels.export.export`` (the function behind ``seqmodels export``),
plus a float-sequence model through the generic exporter. One clean process
(``python -I``, only TensorFlow, NumPy and hypothesis; importing this
package there fails) loads every SavedModel and runs hypothesis on each
signature: random Unicode text and random bytes (invalid UTF-8 included),
blank and empty strings, bracketed trees valid and corrupted, strings of
lengths just below, at and beyond the documented limits, batches mixing all
of these, empty batches and batches beyond the limit; for the numeric
signatures, right and wrong shapes (another rank, another image size),
NaN and infinite pixels (that image alone answered -1), bits other than 0/1,
word ids out of the vocabulary.

Every call must either return, within ``CALL_SECONDS`` of CPU time, outputs with one row
per request item and finite numbers, or raise an ``InvalidArgumentError``
with a documented message: the limit exceeded ("request too large: at most
..."), the expected shape, or the invalid values. A request inside the
string limits must be answered (only the limits on words, tree nodes and
depth, which need tokenizing to know, may refuse it), and the process's peak
RSS must stay under ``RSS_MB``.
"""

import json

import keras
import numpy as np
import pytest
from fuzz_record import SCALE, record

import keras_seqmodels as ks
from keras_seqmodels import export
from keras_seqmodels.export import (
    copy_task,
    generic,
    images,
    language_model,
    question_answering,
    tagging,
    translation,
)
from keras_seqmodels.testing import run_in_clean_process
from keras_seqmodels.trees import serving

pytestmark = [pytest.mark.tf_only, pytest.mark.slow]

CALL_SECONDS = 60  # CPU seconds per call (all threads; not wall time, which load stretches)
# Peak RSS of the process serving all nine signatures, its own (VmHWM): 1.24 GB
# on a 2-core x86-64 CPU (2026-11-27). ru_maxrss, used before, also counts the
# peak of the process that started it (fork + exec keeps it), which made this
# figure read 4.3-6.0 GB when the test runner had grown that large.
RSS_MB = 2500

# label: (zoo name or None, signature, kind, limits, examples at CI scale)
SIGNATURES = {
    "multi30k-en-de": ("multi30k-en-de", "serving_default", "text:inputs", translation.LIMITS, 12),
    "sst-treelstm": ("sst-treelstm", "serving_default", "trees", serving.SERVING_LIMITS, 40),
    "mnist-renet": ("mnist-renet", "serving_default", "pixels", images.LIMITS, 30),
    "babi-memn2n": ("babi-memn2n", "serving_default", "qa", question_answering.LIMITS, 30),
    "babi-memn2n:serve_ids": ("babi-memn2n", "serve_ids", "qa_ids", question_answering.LIMITS,
                              30),
    "ntm-copy": ("ntm-copy", "serving_default", "bits", copy_task.LIMITS, 30),
    "ptb-lstm": ("ptb-lstm", "serving_default", "text:text", language_model.LIMITS, 30),
    "ud-ewt-upos": ("ud-ewt-upos", "serving_default", "text:tagger", tagging.LIMITS, 30),
    "generic:sequences": (None, "serving_default", "sequences", generic.LIMITS, 30),
}

FUZZ_SNIPPET = r'''
import json
import time

import numpy as np
import tensorflow as tf
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

plan = json.loads(str(inputs["plan"]))
CALL_SECONDS = float(inputs["call_seconds"])
DOCUMENTED = ("request too large", "wrong request shape", "not compatible with expected shape",
              "must be", "give one question per story")


def peak_mb():
    # VmHWM: this program's peak (ru_maxrss would include its parent's; the
    # package, where keras_seqmodels.testing.peak_rss_bytes lives, is not
    # importable in this process).
    with open("/proc/self/status", encoding="ascii") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmHWM:")) / 1024


def repeat_to(n, unit=b"x "):
    return (unit * (n // len(unit) + 1))[:n]


def text_items(max_bytes):
    return st.one_of(
        st.text(max_size=30).map(lambda s: s.encode("utf-8")),
        st.binary(max_size=30),
        st.sampled_from([b"", b" ", b" \t\n\r ", b"the cat sat on the mat .",
                         "\u00e9t\u00e9 \u4e2d\u6587 \U0001f600".encode("utf-8"),
                         b"\xff\xfe caf\xe9 \xc3\x28 \x80"]),
        st.tuples(st.sampled_from([b"a ", b"the ", "\u00e9 ".encode(), b"(", b")"]),
                  st.integers(0, 400)).map(lambda t: t[0] * t[1]),
        st.sampled_from([max_bytes - 1, max_bytes, max_bytes + 1, 2 * max_bytes]).map(repeat_to),
    )


def batches(items, max_batch):
    return st.one_of(
        st.lists(items, min_size=0, max_size=5),
        st.lists(items, min_size=0, max_size=5),
        st.lists(items, min_size=0, max_size=5),
        st.just([b""] * (max_batch + 1)),
    )


@st.composite
def tree_strings(draw):
    def tree(depth):
        if depth <= 0 or draw(st.booleans()):
            word = draw(st.sampled_from(["film", "good", "Bad", "\u00e9t\u00e9", "8 1\\/2", "."]))
            return "(%d %s)" % (draw(st.integers(0, 4)), word)
        return "(%d %s %s)" % (draw(st.integers(0, 4)), tree(depth - 1), tree(depth - 1))
    text = tree(draw(st.integers(0, 5)))
    damage = draw(st.sampled_from([None] * 4 + ["drop", "add", "three", "garbage"]))
    if damage == "drop" and ")" in text:
        i = text.rindex(")")
        text = text[:i] + text[i + 1:]
    elif damage == "add":
        text = text + ")"
    elif damage == "three":
        text = "(2 (2 a) (2 b) (2 c))"
    elif damage == "garbage":
        text = text + " tail"
    return text.encode("utf-8")


def deep_tree(depth):
    return (b"(1 " * depth) + b"x" + (b")" * depth)


def balanced_tree(leaves):
    if leaves == 1:
        return "(2 w)"
    half = leaves // 2
    return "(2 %s %s)" % (balanced_tree(half), balanced_tree(leaves - half))


def string_beyond(batch, limits, max_bytes_key="max_bytes"):
    sizes = [len(b) for b in batch]
    return (len(batch) > limits["max_batch"] or max(sizes + [0]) > limits[max_bytes_key]
            or sum(sizes) > limits.get("max_total_bytes", float("inf")))


def judge_rows(out, rows):
    problems = []
    for key, value in out.items():
        if value.ndim == 0 or value.shape[0] != rows:
            problems.append(f"{key} has shape {value.shape}, expected {rows} rows")
        if value.dtype.kind == "f" and not np.all(np.isfinite(value)):
            problems.append(f"{key} not finite")
    return problems


def run(label, spec):
    fn = tf.saved_model.load(spec["dir"]).signatures[spec["signature"]]
    specs = fn.structured_input_signature[1]
    kind, limits = spec["kind"], spec["limits"]
    counts = {"output": 0, "documented error": 0}
    failures, slowest = [], [0.0, ""]
    expected_bad_rows = []  # pixels: the rows with a non-finite pixel

    if kind.startswith("text"):
        key = [k for k, s in specs.items() if s.dtype == tf.string][0]
        strategy = batches(text_items(limits["max_bytes"]), limits["max_batch"])
        # Words are limited (ptb-lstm) and cannot be told apart without
        # tokenizing as TensorFlow does: inside the byte limits such a
        # refusal is allowed.
        may_refuse = kind in ("text:text", "text:tagger")

        def make(batch):
            return {key: tf.constant(batch, tf.string)}, string_beyond(batch, limits), None

    elif kind == "trees":
        items = st.one_of(tree_strings(), tree_strings(), text_items(limits["max_bytes"]),
                          st.sampled_from([deep_tree(limits["max_depth"]),
                                           deep_tree(limits["max_depth"] + 1),
                                           balanced_tree(2000).encode()]))
        strategy = batches(items, limits["max_batch"])
        may_refuse = True

        def make(batch):
            return {"trees": tf.constant(batch, tf.string)}, string_beyond(batch, limits), None

    elif kind == "qa":
        pair = st.tuples(text_items(limits["max_story_bytes"]),
                         text_items(limits["max_question_bytes"]))
        strategy = batches(pair, limits["max_batch"]).map(
            lambda b: [p if isinstance(p, tuple) else (p, p) for p in b])
        may_refuse = False

        def make(batch):
            stories = [s for s, _ in batch]
            questions = [q for _, q in batch]
            sizes = [len(s) for s in stories] + [len(q) for q in questions]
            beyond = (len(batch) > limits["max_batch"]
                      or max([len(s) for s in stories] + [0]) > limits["max_story_bytes"]
                      or max([len(q) for q in questions] + [0]) > limits["max_question_bytes"]
                      or sum(sizes) > limits["max_total_bytes"])
            feed = {"story": tf.constant(stories, tf.string),
                    "question": tf.constant(questions, tf.string)}
            return feed, beyond, None

    else:
        may_refuse = False
        shapes = {k: s.shape.as_list() for k, s in specs.items()}

        @st.composite
        def arrays(draw):
            feed, bad_shape, bad_values, beyond = {}, False, None, False
            nonfinite_rows = []
            rows = draw(st.sampled_from([0, 1, 2, 3, 3, limits["max_batch"] + 1]))
            beyond = rows > limits["max_batch"]
            for k, shape in sorted(shapes.items()):
                dims = []
                for axis, d in enumerate(shape):
                    if axis == 0:
                        dims.append(rows)
                    elif d is None:
                        longest = limits.get("max_length", 64)
                        n = draw(st.sampled_from([0, 1, 5, 12, longest + 1]))
                        beyond |= n > longest
                        dims.append(n)
                    else:
                        dims.append(d)
                wrong = draw(st.sampled_from([None] * 5 + ["rank", "size", "flat"]))
                if wrong == "rank":
                    dims = dims + [3]
                elif wrong == "size" and len(dims) > 1:
                    dims[-1] = max(dims[-1] // 2, 1) if dims[-1] != 1 else 2
                elif wrong == "flat" and len(dims) > 2:
                    dims = [dims[0], int(np.prod(dims[1:]))]
                bad_shape |= len(dims) != len(shape) or any(
                    d is not None and d != n for n, d in zip(dims, shape))
                if int(np.prod(dims)) > 2_000_000:
                    dims = [0] + dims[1:]
                rng = np.random.default_rng(draw(st.integers(0, 2**16)))
                if kind == "pixels":
                    value = rng.uniform(0, 255, dims).astype("float32")
                    if value.size and draw(st.integers(0, 4)) == 0:
                        value.flat[0] = draw(st.sampled_from([np.nan, np.inf]))
                        nonfinite_rows = [0]  # answered alone, class -1
                elif kind == "bits":
                    value = rng.integers(0, 2, dims).astype("float32")
                    if value.size and draw(st.integers(0, 4)) == 0:
                        value.flat[0] = 0.5
                        bad_values = "bits must be 0 or 1"
                elif kind == "qa_ids":
                    value = rng.integers(0, limits["vocabulary"], dims).astype("int32")
                    if value.size and draw(st.integers(0, 4)) == 0:
                        value.flat[0] = draw(st.sampled_from([-1, limits["vocabulary"]]))
                        bad_values = "word ids must be"
                    if k == "stories" and len(dims) == 3 and dims[1] > limits["memory_size"]:
                        beyond = True
                else:
                    value = rng.normal(size=dims).astype("float32")
                feed[k] = value
            rows_of = {v.shape[0] for v in feed.values()}
            return feed, bad_shape, bad_values, beyond or len(rows_of) > 1, nonfinite_rows

        strategy = arrays()

        def make(case):
            feed, bad_shape, bad_values, beyond, nonfinite_rows = case
            expected_bad_rows[:] = nonfinite_rows
            tensors = {k: tf.constant(v, specs[k].dtype) for k, v in feed.items()}
            return tensors, beyond or bad_shape, "shape" if bad_shape else bad_values

    @settings(max_examples=spec["examples"], deadline=None, derandomize=True, database=None,
              suppress_health_check=list(HealthCheck))
    @given(case=strategy)
    def prop(case):
        feed, must_fail, reason = make(case)
        rows = int(next(iter(feed.values())).shape[0])
        start = time.process_time()
        try:
            out = {k: v.numpy() for k, v in fn(**feed).items()}
            status, message = "output", ""
        except tf.errors.InvalidArgumentError as err:
            status, message = "error", str(err)
        elapsed = time.process_time() - start
        if elapsed > slowest[0]:
            slowest[:] = [elapsed, f"{rows} rows, {status}"]
        described = {k: (list(v.shape), str(v.dtype)) for k, v in feed.items()}
        problem = None
        if elapsed > CALL_SECONDS:
            problem = f"took {elapsed:.1f} s of CPU"
        elif status == "error":
            if not any(d in message for d in DOCUMENTED):
                problem = "undocumented error: " + message[:400]
            elif not must_fail and not reason and not may_refuse:
                problem = "refused a request inside the limits: " + message[:400]
            elif not must_fail and not reason and "request too large" not in message:
                problem = "error inside the limits: " + message[:400]
        elif must_fail or reason:
            problem = f"answered a request beyond the limits or invalid ({reason})"
        else:
            issues = judge_rows(out, rows)
            if kind == "trees":
                bad = out["error"] != b""
                if np.any((out["root_class"] == -1) != bad):
                    issues.append("root_class -1 does not match the error rows")
            if kind == "pixels":
                bad = np.zeros(rows, bool)
                bad[expected_bad_rows] = True
                if np.any((out["class_id"] == -1) != bad) or np.any((out["error"] != b"") != bad):
                    issues.append("class_id -1 / error do not match the non-finite images")
            if issues:
                problem = "; ".join(issues)
        if problem:
            failures.append({"input": described, "problem": problem})
            counts["failure"] = counts.get("failure", 0) + 1
        else:
            counts["output" if status == "output" else "documented error"] += 1

    prop()
    return {"counts": counts, "failures": failures[:5], "slowest": slowest,
            "peak_mb": peak_mb()}


results = {}
for label, spec in plan.items():
    results[label] = run(label, spec)
outputs["results"] = np.asarray(json.dumps(results))
'''


def _sequence_model():
    keras.utils.set_random_seed(0)
    inputs = keras.Input((None, 1), name="sequences")
    h = ks.layers.Recurrent(ks.cells.LSTMCell(4), return_sequences=True)(inputs)
    return keras.Model(inputs, keras.layers.Dense(1)(h))


@pytest.fixture(scope="module")
def exported(tmp_path_factory, zoo_savedmodel):
    """Every export: {zoo name or label: directory} (the zoo's written once
    per test run, ``zoo_savedmodel``)."""
    root = tmp_path_factory.mktemp("fuzz_exports")
    dirs = {}
    for label, (name, *_) in SIGNATURES.items():
        key = name or label
        if key not in dirs:
            if name:
                dirs[key] = zoo_savedmodel(name)
            else:
                dirs[key] = str(root / key.replace(":", "_"))
                export.export(_sequence_model(), dirs[key])
    return dirs


@pytest.fixture(scope="module")
def fuzz_results(exported):
    dirs = exported
    with open(ks.zoo.asset_path("babi-memn2n", "vocab"), encoding="utf-8") as f:
        vocabulary = json.load(f)["vocabulary"]
    plan = {}
    for label, (name, signature, kind, limits, examples) in SIGNATURES.items():
        limits = dict(limits)
        if kind == "qa_ids":
            limits.update(vocabulary=len(vocabulary), memory_size=50)
        plan[label] = {
            "dir": dirs[name or label],
            "signature": signature,
            "kind": kind,
            "limits": limits,
            "examples": max(1, int(examples * SCALE)),
        }
    out = run_in_clean_process(
        FUZZ_SNIPPET,
        {"plan": np.asarray(json.dumps(plan)), "call_seconds": CALL_SECONDS},
        timeout=1200,
    )
    return json.loads(str(out["results"]))


@pytest.mark.parametrize("label", sorted(SIGNATURES))
def test_signature_answers_or_refuses_with_a_documented_error(label, fuzz_results):
    result = fuzz_results[label]
    for outcome, n in result["counts"].items():
        for _ in range(n):
            record(f"serving fuzz {label}", outcome)
    assert not result["failures"], json.dumps(result["failures"], indent=1)[:4000]
    assert result["counts"]["output"] > 0, result["counts"]
    assert result["counts"]["documented error"] > 0, result["counts"]
    assert result["peak_mb"] < RSS_MB, result["peak_mb"]


CASES_SNIPPET = r"""
import json

import tensorflow as tf

dirs = json.loads(str(inputs["dirs"]))


def call(name, **feed):
    fn = tf.saved_model.load(dirs[name]).signatures["serving_default"]
    try:
        out = fn(**{k: tf.constant(v) for k, v in feed.items()})
        out = {k: v.numpy().tolist() for k, v in out.items() if k != "root_probabilities"}
        return {k: [x.decode() if isinstance(x, bytes) else x for x in v] if isinstance(v, list)
                else v for k, v in out.items()}
    except tf.errors.InvalidArgumentError as err:
        return {"error": " ".join(str(err).split())[:600]}


def balanced(leaves):
    return "(2 w)" if leaves == 1 else "(2 %s %s)" % (balanced(leaves // 2),
                                                     balanced(leaves - leaves // 2))


zeros = lambda *shape: tf.zeros(shape).numpy()
cases = {
    "mnist (2, 28, 28)": call("mnist-renet", pixels=zeros(2, 28, 28)),
    "mnist (2, 28, 28, 3)": call("mnist-renet", pixels=zeros(2, 28, 28, 3)),
    "mnist (4, 14, 14)": call("mnist-renet", pixels=zeros(4, 14, 14)),
    "mnist (0, 28, 28)": call("mnist-renet", pixels=zeros(0, 28, 28)),
    "mnist NaN image": call("mnist-renet", pixels=tf.tensor_scatter_nd_update(
        tf.zeros([2, 28, 28]), [[0, 3, 4]], [float("nan")]).numpy()),
    "mnist 1,025 images": call("mnist-renet", pixels=zeros(1025, 28, 28)),
    "ntm (2, 10, 8, 1)": call("ntm-copy", bits=zeros(2, 10, 8, 1)),
    "ntm 513 steps": call("ntm-copy", bits=zeros(1, 513, 8)),
    "sst empty string": call("sst-treelstm", trees=[""]),
    "sst blank": call("sst-treelstm", trees=[" \t\n "]),
    "sst no brackets": call("sst-treelstm", trees=["a wonderful film"]),
    "sst empty batch": call("sst-treelstm", trees=tf.zeros([0], tf.string)),
    "sst mixed": call("sst-treelstm", trees=["(1 (2 a) (3 b)", "(4 (2 a) (4 (4 good) (2 film)))",
                                             "(1 (2 a) (2 b) (2 c))", ""]),
    "sst 513 levels": call("sst-treelstm", trees=["(1 " * 513 + "x" + ")" * 513]),
}


def peak_rss_bytes():
    with open("/proc/self/status", encoding="ascii") as f:  # VmHWM, as in FUZZ_SNIPPET
        return next(int(line.split()[1]) for line in f if line.startswith("VmHWM:")) * 1024


before = peak_rss_bytes()
big = balanced(10500)
cases["sst 100 KB tree"] = call("sst-treelstm", trees=[big])
cases["sst 100 KB tree"]["bytes"] = len(big)
cases["sst 100 KB tree"]["rss_mb"] = (peak_rss_bytes() - before) / 2**20
outputs["cases"] = json.dumps(cases)
"""


def test_documented_limits_and_clean_answers(exported):
    out = run_in_clean_process(
        CASES_SNIPPET, {"dirs": np.asarray(json.dumps(exported))}, timeout=600
    )
    cases = json.loads(str(out["cases"]))
    record("serving cases", "fixed cases")
    assert len(cases["mnist (2, 28, 28)"]["class_id"]) == 2
    # The full shape is checked: no reshaping of other images into 28 x 28.
    assert ("mnist-renet: wrong request shape: `pixels` must have shape (None, 28, 28). "
            "Received shape [2,28,28,3]") in cases["mnist (2, 28, 28, 3)"]["error"]
    assert "Received shape [4,14,14]" in cases["mnist (4, 14, 14)"]["error"]
    assert cases["mnist (0, 28, 28)"]["class_id"] == []
    nan = cases["mnist NaN image"]  # the NaN image alone is refused, the other answered
    assert nan["class_id"][0] == -1 and nan["class_id"][1] in range(10), nan
    assert nan["error"] == ["pixels must be finite", ""], nan
    assert "request too large: at most 1,024 images per request" in (
        cases["mnist 1,025 images"]["error"])
    assert "ntm-copy: wrong request shape: `bits`" in cases["ntm (2, 10, 8, 1)"]["error"]
    assert "at most 512 steps per sequence" in cases["ntm 513 steps"]["error"]
    for name, message in (
        ("sst empty string", "empty: no tree"),
        ("sst blank", "empty: no tree"),
        ("sst no brackets", "not a bracketed tree"),
    ):
        assert cases[name]["root_class"] == [-1], cases[name]
        assert len(cases[name]["error"]) == 1 and message in cases[name]["error"][0], cases
    assert cases["sst empty batch"]["root_class"] == []
    mixed = cases["sst mixed"]
    assert mixed["root_class"][0] == -1 and mixed["root_class"][2] == -1, mixed
    assert mixed["root_class"][3] == -1 and mixed["root_class"][1] in range(5), mixed
    assert "unbalanced" in mixed["error"][0] and "more than two" in mixed["error"][2], mixed
    assert mixed["error"][1] == "" and mixed["error"][3] == "empty: no tree", mixed
    assert "at most 512 levels of brackets per tree" in cases["sst 513 levels"]["error"]
    big = cases["sst 100 KB tree"]
    assert big["bytes"] > 100_000 and big["root_class"][0] in range(5), big
    # A (T, T) bool matrix of its 98,000 tokens would take 9.6 GB.
    assert big["rss_mb"] < 1500, big
