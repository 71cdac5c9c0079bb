"""Checks around a LiteRT export: what ``to_litert`` is given, what it will
build, and what the written file holds.

- ``check_representative``: the int8 calibration samples against the
  model's inputs (count, rank, shape, dtype), before the converter sees
  them, the expected shape in the message; ``converter_hint`` translates
  the converter's own messages into what to change.
- ``check_unroll``: a recurrent layer that converts as a loop is unrolled at
  a dynamic batch size (or with int8): one copy of its step per time step.
  The copies of a whole export are counted before each layer is traced and
  refused past ``MAX_UNROLLED_STEPS`` with the alternatives (a fixed batch
  size: a ``WHILE`` loop; a shorter length; ONNX, whose nodes do not grow
  with the length).
- ``check_weight_bytes``: a model whose weights cannot fit one file (2 GiB
  for a flatbuffer or a protobuf) is refused before converting.
- ``file_findings``: what an option did to the written file, read from the
  flatbuffer (tensor types, op names): ``quantize`` that left weights
  float32, ``"float16"`` kept as float32, a loop where the fused op was
  asked for (and whether it is a ``WHILE`` or unrolled).
- ``quantized_error`` / ``answer_finding``: a ``"dynamic"`` or ``"int8"``
  file run on up to ``CHECKED_ROWS`` representative samples against
  ``model.predict``; an error over ``MAX_QUANTIZED_ERROR`` of the output's
  range is a finding.
- ``report``: those findings as warnings naming the layer or weights, or,
  with ``strict=True``, one ``ValueError`` before the file is written.
"""

import re
import warnings

import numpy as np

# Unrolled copies of a recurrent step in one export (time steps x recurrent
# runners that convert unrolled). Measured in docs/reliability.md: a GRU at a
# dynamic batch, 1,000 steps, converts in minutes and about 2 GB.
MAX_UNROLLED_STEPS = 1_000

# TensorFlow's dynamic-range quantization leaves weight tensors of fewer
# elements than this float32 (its ``min_elements_for_weights``).
MIN_QUANTIZED_ELEMENTS = 1024


# Representative data ----------------------------------------------------------


def _expected(spec):
    dims = ", ".join("any" if d is None else str(d) for d in list(spec.shape)[1:])
    return f"(samples, {dims})" if dims else "(samples,)"


def check_representative(data, specs, names=None):
    """``data`` checked against the model's inputs ``specs`` (``tf.TensorSpec``
    s, batch first; ``names``: the inputs' names for messages); returns it as
    a list of arrays, or, for a callable, a callable whose samples are
    checked as they come.

    Raises:
        ValueError: naming the input, what was received and the expected
            shape, e.g. ``(samples, 10, 3)``.
    """
    if callable(data):

        def checked():
            for k, sample in enumerate(data()):
                items = list(sample) if isinstance(sample, (list, tuple)) else [sample]
                what = f"sample {k} yielded by `representative_data`"
                _check_arrays(items, specs, names, what, batch_axis=True)
                yield items

        return checked
    arrays = list(data) if isinstance(data, (list, tuple)) else [data]
    _check_arrays(arrays, specs, names, "`representative_data`", batch_axis=False)
    return [np.asarray(a) for a in arrays]


def _check_arrays(arrays, specs, names, what, batch_axis):
    names = list(names or [s.name for s in specs])
    listed = ", ".join(f"'{n}' {_expected(s)}" for n, s in zip(names, specs))
    if len(arrays) != len(specs):
        raise ValueError(
            f"to_litert: {what} holds {len(arrays)} array(s); the model has {len(specs)} "
            f"input(s): {listed}; give one array per input, in that order"
        )
    for array, spec, name in zip(arrays, specs, names):
        a = np.asarray(array)
        shape, want = tuple(a.shape), list(spec.shape)
        where = f"to_litert: {what} for input '{name}' has shape {shape}"
        expected = _expected(spec)
        if batch_axis:  # one calibration batch: its first axis is the batch
            expected = expected.replace("samples", "batch", 1)
        if a.dtype.kind not in "biuf":
            raise ValueError(
                f"to_litert: {what} for input '{name}' has dtype {a.dtype}; expected "
                f"numbers ({spec.dtype.name}) of shape {expected}"
            )
        if a.ndim == len(want) + 1 and 1 in shape[1:]:
            axis = shape.index(1, 1)
            raise ValueError(
                f"{where}, one axis more than the input's {expected}: drop axis {axis} "
                f"(np.squeeze(data, {axis})); the first axis is the samples"
            )
        if a.ndim != len(want):
            raise ValueError(f"{where}; expected {expected} (rank {len(want)})")
        for axis in range(1, a.ndim):
            if want[axis] is not None and shape[axis] != want[axis]:
                part = "steps" if axis == 1 and a.ndim >= 3 else f"values along axis {axis}"
                raise ValueError(
                    f"{where}: {shape[axis]} {part}, where the model takes {want[axis]}; "
                    f"expected {expected} (cut or pad the samples to the model's shape)"
                )
        if not batch_axis and shape[0] == 0:
            raise ValueError(f"{where}: no samples; expected {expected} with samples >= 1")
        if batch_axis and want[0] is not None and shape[0] != want[0]:
            raise ValueError(
                f"{where}: a batch of {shape[0]}, where the file's batch size is {want[0]}; "
                f"expected {expected.replace('batch', str(want[0]), 1)}"
            )


_HINTS = (
    (
        r"Attempting to resize dimension (\d+) of tensor (\d+) with value (\d+) to (\d+)",
        lambda m: (
            f"a calibration sample is {m.group(3)} along axis {m.group(1)} of input "
            f"{m.group(2)}, where the model takes {m.group(4)}: give representative_data "
            "of the model's input shape (samples first)"
        ),
    ),
    (
        r"(?i)(Flex|Select TF ops|TF ops|not supported by the TFLite builtin)",
        lambda m: (
            "an op has no LiteRT builtin form; a recurrent layer that converts as a loop "
            "takes builtin ops only at a fixed batch_size or sequence length"
        ),
    ),
    (
        r"(?i)tensor ?list|TensorListReserve|while.*dynamic",
        lambda m: (
            "a loop over an unknown length or batch: pass batch_size=1 (or any int) or "
            "fix the sequence length in keras.Input"
        ),
    ),
)


def converter_hint(message):
    """What to change, for a LiteRT converter error message (``None`` if it
    is not one of the known cases)."""
    for pattern, hint in _HINTS:
        match = re.search(pattern, message)
        if match:
            return hint(match)
    return None


# Unrolled loops ---------------------------------------------------------------


def unrolled_copies(layer, args, quantize, runners):
    """How many step copies tracing ``layer`` unrolled adds: its length times
    the cells of its recurrent runners, or 0 when it stays a ``WHILE`` loop
    (a fixed batch, no int8) or its length is unknown (refused elsewhere)."""
    shape = getattr(args[0], "shape", None) if args else None
    if not runners or shape is None or len(shape) < 2 or shape[1] is None:
        return 0
    if shape[0] is not None and quantize != "int8":
        return 0
    cells = 0
    for runner in runners:
        inner = getattr(getattr(runner, "cell", None), "cells", None)
        cells += len(inner) if isinstance(inner, (list, tuple)) else 1
    return int(shape[1]) * cells


def check_unroll(total, layer, copies, quantize):
    """Refuse a trace that would unroll more than ``MAX_UNROLLED_STEPS``
    step copies in all, before it is traced; returns the new total."""
    total += copies
    if total > MAX_UNROLLED_STEPS:
        int8 = quantize == "int8"
        raise ValueError(
            f"to_litert: layer '{layer.name}' converts as a loop, unrolled "
            f"{'for int8' if int8 else 'at a dynamic batch size'}: {total:,} copies of a "
            f"recurrent step in this file, over the limit of {MAX_UNROLLED_STEPS:,} (each "
            "costs converter time and memory; docs/reliability.md); "
            + ("use quantize='dynamic' (a WHILE loop at a fixed batch_size), "
               if int8 else "pass batch_size=1 (or any int): a WHILE loop of one step, ")
            + "a shorter sequence length, or to_onnx (one node per layer at any length)"
        )  # fmt: skip
    return total


# Sizes -------------------------------------------------------------------------

# A .tflite flatbuffer and an .onnx protobuf (weights inside) address at most
# 2 GiB; the writers refuse a model whose float32 weights alone pass this, before
# converting (the converter and onnx.save would fail at the end, after minutes).
MAX_FILE_BYTES = 2**31 - (64 << 20)  # 2 GiB less room for the graph itself


def check_weight_bytes(model, writer, quantize=None):
    """Refuse a model whose weights do not fit one file (``MAX_FILE_BYTES``),
    counted before anything is built: 4 bytes a float32 weight (1 with int8
    weights, 2 with float16)."""
    count = sum(int(np.prod(w.shape)) for w in model.weights)
    width = {"dynamic": 1, "int8": 1, "float16": 2}.get(quantize, 4)
    size = count * width
    if size > MAX_FILE_BYTES:
        other = (
            "quantize='dynamic' (1 byte a weight) or the SavedModel export"
            if writer == "to_litert" and width > 1
            else "the SavedModel export (weights in files of their own)"
        )
        raise ValueError(
            f"{writer}: model '{model.name}' has {count:,} weights, {size:,} bytes in the "
            f"file, over the {MAX_FILE_BYTES:,} bytes one {writer[3:]} file can hold; "
            f"use {other}"
        )
    return size


# What the file holds ---------------------------------------------------------


def _constants(content, weights=()):
    """``(owner, type name, element count)`` of each constant tensor of rank
    2 or more in the file, in every graph (a loop's body holds the weights
    its steps read): the weight matrices. A float constant whose values are
    all equal (a zero state, a fill) is not one. ``owner`` is the Keras
    weight whose values the tensor holds (``weights``: ``(path, values)``
    pairs; a fused op's gate block holds part of one), else the tensor's
    name in the file."""
    from tensorflow.lite.python import schema_py_generated as schema

    from keras_seqmodels.export.litert_flatbuffer import _read
    from keras_seqmodels.export.litert_runtime import tensor_values

    model = _read(content)
    types = {v: k for k, v in vars(schema.TensorType).items() if not k.startswith("_")}
    out, seen = [], set()
    for graph in model.subgraphs:
        for index, tensor in enumerate(graph.tensors):
            data = model.buffers[tensor.buffer].data
            shape = list(tensor.shape) if tensor.shape is not None else []
            if data is None or not len(data) or len(shape) < 2 or tensor.buffer in seen:
                continue
            seen.add(tensor.buffer)
            name = tensor.name.decode() if isinstance(tensor.name, bytes) else str(tensor.name)
            kind = types.get(tensor.type, "?")
            if kind in ("FLOAT32", "FLOAT16"):
                values = tensor_values(model, graph, index)
                if values is not None and values.size and np.ptp(values) == 0:
                    continue
                if weights:
                    name = _owner(values, weights) or name
            out.append((name, kind, int(np.prod(shape))))
    return out


def _owner(values, weights):
    """The path of the Keras weight that holds ``values`` (exactly, or as
    float16 values widened), or ``None``."""
    if values is None or not values.size:
        return None
    flat = np.ravel(values).astype(np.float32)
    for path, weight in weights:
        w = np.ravel(weight).astype(np.float32)
        if w.size < flat.size:
            continue
        for candidate in (w, w.astype(np.float16).astype(np.float32)):
            if np.isin(flat, candidate).all():
                return path
    return None


def _names(items, limit=4):
    items = sorted(set(items))
    shown = ", ".join(items[:limit])
    return shown + (f" and {len(items) - limit} more" if len(items) > limit else "")


def file_findings(content, quantize, batch_size_fixed, weights=()):
    """What ``quantize`` did to the written file, read from its tensors;
    ``weights``: the model's ``(path, values)``, to name the tensors by."""
    findings = []
    constants = _constants(content, weights) if quantize else []
    floats = [(n, c) for n, t, c in constants if t == "FLOAT32"]
    if quantize in ("dynamic", "int8") and floats:
        small = [n for n, c in floats if c < MIN_QUANTIZED_ELEMENTS]
        large = [n for n, c in floats if c >= MIN_QUANTIZED_ELEMENTS]
        what = "every weight matrix" if len(floats) == len(constants) else (
            f"{len(floats)} of {len(constants)} weight matrices")  # fmt: skip
        why = []
        if small:
            why.append(
                f"{_names(small)}: fewer than {MIN_QUANTIZED_ELEMENTS:,} weights each, "
                "which the converter keeps float32"
            )
        if large:
            why.append(f"{_names(large)}: read by ops without an int8 form")
        findings.append(
            f"to_litert: quantize={quantize!r} left {what} float32 in the file ("
            + "; ".join(why)
            + ")"
            + ("; its weights are the float32 file's" if len(floats) == len(constants) else "")
        )
    if quantize == "float16":
        halves = [n for n, t, _ in constants if t == "FLOAT16"]
        kept = [n for n, t, _ in constants if t == "FLOAT32"]
        if kept:
            reason = (
                "the fused LSTM and RNN ops keep float32 weights at a dynamic batch size "
                "(pass batch_size=1, or any int, for float16 weights throughout)"
                if not batch_size_fixed
                else "read by ops without a float16 form"
            )
            what = "every weight matrix" if not halves else f"{len(kept)} weight matrices"
            findings.append(
                f"to_litert: quantize='float16' kept {what} float32 in the file "
                f"({_names(kept)}): {reason}"
                + ("; its weights are the float32 file's" if not halves else "")
            )
    return findings, op_names(content)


def op_names(content):
    """The op names of the file's main graph."""
    from keras_seqmodels.export.litert_flatbuffer import _read
    from keras_seqmodels.export.litert_runtime import op_name

    model = _read(content)
    return [op_name(model, op) for op in model.subgraphs[0].operators]


def loop_form(ops):
    """How the file's loops are written: a ``WHILE`` loop, or unrolled."""
    if "WHILE" in ops:
        return "a WHILE loop of builtin ops"
    return (
        "a loop unrolled into one copy of its step per time step, not a WHILE loop "
        f"({len(ops):,} ops in the file)"
    )


_LOOP_CLAIMS = re.compile(r"converts as (a WHILE loop|a loop of builtin ops)")


def with_loop_form(message, ops):
    """A tracer warning's "converts as a loop" made to say what the file
    holds (a ``WHILE`` loop, or unrolled steps)."""
    return _LOOP_CLAIMS.sub(f"converts as {loop_form(ops)}", message)


def report(findings, strict, stacklevel=3):
    """Warn once per finding, or with ``strict`` raise them as one error."""
    if not findings:
        return
    if strict:
        raise ValueError(
            "to_litert: strict=True and the file would not be what was asked: "
            + " | ".join(f.removeprefix("to_litert: ") for f in findings)
        )
    for finding in findings:
        warnings.warn(finding, stacklevel=stacklevel)


# Answers of a quantized file ---------------------------------------------------

# Largest |file - model.predict| over the output's range (max - min over the
# checked rows) a quantized file may answer with. Measured (docs/reliability.md):
# int8 files of an LSTM, and of an LSTM added to a Dense branch, are about 1%
# off; a fused LSTM concatenated with a Dense branch 29% to 67%.
MAX_QUANTIZED_ERROR = 0.1

# Rows of the representative samples run through the file and the model.
CHECKED_ROWS = 16


def check_rows(data, rows=CHECKED_ROWS):
    """Up to ``rows`` samples of ``representative_data`` (arrays, a list of
    them, or a callable yielding lists of batches), as a list of arrays, one
    per input; ``None`` when there are none."""
    if data is None:
        return None
    if callable(data):
        parts = None
        count = 0
        for sample in data():
            items = list(sample) if isinstance(sample, (list, tuple)) else [sample]
            items = [np.asarray(a) for a in items]
            parts = [[] for _ in items] if parts is None else parts
            for part, a in zip(parts, items):
                part.append(a)
            count += len(items[0])
            if count >= rows:
                break
        if parts is None:
            return None
        return [np.concatenate(p)[:rows] for p in parts]
    arrays = list(data) if isinstance(data, (list, tuple)) else [data]
    return [np.asarray(a)[:rows] for a in arrays]


def quantized_error(content, model, arrays, run_litert, batch=None):
    """The largest ``|file - model.predict|`` over ``arrays`` (one per input),
    relative to the range of the model's output it is in; the file run with
    ``run_litert(interpreter, *arrays)`` (the writer's, passed in: this module
    sits below it) in ``batch``-row pieces (its fixed batch size) or at once."""
    from ai_edge_litert.interpreter import Interpreter

    count = len(arrays[0])
    if batch is not None:
        count -= count % batch
        if count == 0:
            return None
    arrays = [np.asarray(a[:count], dtype=np.float32) if a.dtype.kind == "f" else a[:count]
              for a in arrays]  # fmt: skip
    expected = model.predict(arrays if len(arrays) > 1 else arrays[0], verbose=0)
    expected = expected if isinstance(expected, (list, tuple)) else [expected]
    interpreter = Interpreter(model_content=content)
    step = batch or count
    pieces = [run_litert(interpreter, *[a[s : s + step] for a in arrays])
              for s in range(0, count, step)]  # fmt: skip
    worst = 0.0
    for k, want in enumerate(expected):
        want = np.asarray(want, dtype=np.float64)
        got = np.concatenate([np.asarray(p[k], dtype=np.float64) for p in pieces])
        scale = float(want.max() - want.min()) or float(np.abs(want).max()) or 1.0
        worst = max(worst, float(np.abs(got.reshape(want.shape) - want).max()) / scale)
    return worst


def answer_finding(error, quantize, rows):
    """A finding when a quantized file's ``error`` (``quantized_error``) is
    over ``MAX_QUANTIZED_ERROR``, else ``None``."""
    if error is None or error <= MAX_QUANTIZED_ERROR:
        return None
    other = "quantize='dynamic', or float32 (no quantize)" if quantize == "int8" else (
        "float32 (no quantize) or quantize='float16'")  # fmt: skip
    return (
        f"to_litert: the quantize={quantize!r} file answers {rows} representative samples "
        f"with a largest error of {error:.1%} of the output's range, over the "
        f"{MAX_QUANTIZED_ERROR:.0%} allowed (model.predict as reference); use {other}"
    )
