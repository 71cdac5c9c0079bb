"""``seqmodels export NAME OUT [--format savedmodel|litert|onnx]``: write a
zoo model or a ``.keras`` file as a SavedModel (a folder), a LiteRT flatbuffer
(``OUT`` a ``.tflite`` file) or an ONNX graph (``OUT`` a ``.onnx`` file)."""

import functools
import os
import re
import sys
import threading
import time
import warnings

from keras_seqmodels.cli import options
from keras_seqmodels.utils.errors import UserError
from keras_seqmodels.utils.loading import load_model_file

_LITERT_ONLY = (
    "--quantize, --representative-data, --batch-size and --strict are for --format litert"
)
# The writers' Python argument names, as the command's flags.
_FLAGS = (
    (r"pass batch_size=1 \(or any int\) to to_litert", "pass --batch-size 1 (or any size)"),
    (r"\bbatch_size=", "--batch-size "),
    (r"`?representative_data`?", "--representative-data"),
    (r"\bstrict=True\b", "--strict"),
    (r"\bbeam_size\b", "--beam"),
    (r"quantize='(\w+)' or '(\w+)'", r"--quantize \1 or \2"),
    (r"quantize='(\w+)'", r"--quantize \1"),
    (r"\bto_(litert|onnx): ", ""),
)
_ANNOUNCE_AFTER = 3.0  # seconds before an export says what it writes
_PROGRESS_EVERY = 15.0  # seconds between "still writing" lines


def as_flags(message):
    """A writer's message with its Python arguments named as this command's flags.

    Example:

    >>> as_flags("to_litert: quantize='int8' needs `representative_data`")
    '--quantize int8 needs --representative-data'
    """
    for pattern, flag in _FLAGS:
        message = re.sub(pattern, flag, message)
    return message


def _memory_gb(peak=False):
    """This process's resident memory (``peak``: its most so far), in GB."""
    import resource

    if peak:
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6  # KiB on Linux
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1e9
    except (OSError, ValueError, IndexError):
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6


def _say(text):
    print(f"seqmodels export: {text}", file=sys.stderr, flush=True)


def _write_announced(write, what):
    """Run ``write()``, saying on standard error, once it has run
    ``_ANNOUNCE_AFTER`` seconds, what it writes, then every
    ``_PROGRESS_EVERY`` seconds the time and memory so far (a LiteRT
    conversion of a large model takes a minute and several GB), and at the
    end the time and peak memory; each distinct warning of the writers once,
    as the package's. A quick failure stays the command's one error line."""
    start = time.monotonic()
    done = threading.Event()

    def tick():
        if done.wait(_ANNOUNCE_AFTER):
            return
        _say(f"writing {what}...")
        while not done.wait(_PROGRESS_EVERY):
            seconds = time.monotonic() - start
            _say(f"still writing {what}: {seconds:.0f} s, {_memory_gb():.1f} GB in use")

    ticker = threading.Thread(target=tick, daemon=True)
    ticker.start()
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result = write()
    finally:
        done.set()
        ticker.join()
    seen = set()
    for warning in caught:
        text = as_flags(" ".join(str(warning.message).split()))
        if text not in seen:
            seen.add(text)
            _say(f"warning: {text}")
    _say(f"done in {time.monotonic() - start:.0f} s, peak memory {_memory_gb(peak=True):.1f} GB")
    return result


def _export(args):
    """One path for every format and source: a zoo model's ``Task.export``
    or ``keras_seqmodels.export.write`` of a ``.keras`` file, which
    ``Task.export`` calls with the writer and options of the model's spec."""
    from keras_seqmodels import export, zoo

    target = export.FORMATS[args.format]
    litert_options = (args.quantize, args.representative_data, args.batch_size, args.strict)
    if args.format != "litert" and any(litert_options):
        raise UserError(_LITERT_ONLY)
    if args.quantize == "int8" and args.representative_data is None:
        raise UserError(
            "--quantize int8 needs --representative-data FILE: a .npy (one input) or .npz "
            "(one array per input) of real inputs that calibrate the integer ranges"
        )
    if target.suffix is None:
        if os.path.isdir(args.directory) and os.listdir(args.directory):
            raise UserError(f"{args.directory} is not empty; give a new or empty folder")
    else:
        if not args.directory.endswith(target.suffix):
            raise UserError(
                f"--format {args.format} writes one file: give OUT ending in {target.suffix}"
            )
        if os.path.exists(args.directory):
            raise UserError(f"{args.directory} exists; give a new file name")
        if args.beam is not None:
            raise UserError("--beam is for the SavedModel of a translation model")
    export_options = {}
    if args.beam is not None:
        export_options["beam_size"] = args.beam
    if args.format == "litert":
        export_options = {
            "quantize": args.quantize,
            "representative_data": _representative(args.representative_data),
            "batch_size": args.batch_size,
            "strict": args.strict,
        }
    if args.name.endswith(".keras"):
        write = functools.partial(export.write, load_model_file(args.name))
    else:
        try:
            write = zoo.load(args.name).export  # its spec's writer and options
        except KeyError as err:
            raise UserError(str(err).strip("'\"")) from None
    article = "an" if target.written[:1] in "AEIOU" else "a"
    what = f"{args.name} as {article} {target.written}"
    try:
        written = _write_announced(
            lambda: write(args.directory, args.format, **export_options), what
        )
    except FileExistsError as err:
        raise UserError(str(err)) from None
    except (ValueError, TypeError, NotImplementedError) as err:
        raise UserError(f"{args.name}: {as_flags(str(err).splitlines()[0])}") from None
    if target.suffix is None:
        print(f"wrote {written} (SavedModel; signature 'serving_default')")
    else:
        print(f"wrote {written} ({target.written})")
    return 0


def _representative(path):
    """The arrays of ``--representative-data`` (``.npy``: one input; ``.npz``:
    one array per input, in the model's input order), or ``None``."""
    if path is None:
        return None
    import numpy as np

    if not os.path.isfile(path):
        raise UserError(f"--representative-data: no such file: {path}")
    try:
        if path.endswith(".npz"):
            with np.load(path, allow_pickle=False) as loaded:
                arrays = [loaded[k] for k in loaded.files]
        else:
            arrays = [np.load(path, allow_pickle=False)]
    except (OSError, ValueError) as err:
        raise UserError(
            f"--representative-data: cannot read {path} as .npy/.npz ({err}); "
            "give np.save / np.savez output of real model inputs"
        ) from None
    if not arrays:
        raise UserError(f"--representative-data: {path} holds no arrays")
    return arrays[0] if len(arrays) == 1 else arrays


def register(subparsers):
    from keras_seqmodels.export import FORMATS
    from keras_seqmodels.zoo.models import specs

    signatures = "; ".join(f"{s.name} {s.serving}" for s in specs().values() if s.serving)
    p = subparsers.add_parser(
        "export",
        help="export a zoo model or a .keras file for serving: a SavedModel, a LiteRT "
        "file or an ONNX graph (--format)",
        description="Export a zoo model (or a .keras file) for serving. --format "
        "savedmodel (default): a TensorFlow SavedModel whose 'serving_default' "
        f"signature takes the model's natural input: {signatures}; any other model "
        "(a .keras file) gets the generic export: the model's named inputs -> "
        "'output_0', ...; the folder must be new or empty. --format litert: a .tflite "
        "file; --format onnx: a .onnx file; both hold the id-level network "
        "(docs/deploy.md).",
    )
    p.add_argument(
        "name", help="zoo model name (see `seqmodels zoo list`) or a path to a .keras file"
    )
    p.add_argument(
        "directory",
        metavar="OUT",
        help="output: a new or empty folder (savedmodel), a new .tflite file (litert) "
        "or a new .onnx file (onnx)",
    )
    p.add_argument(
        "--format",
        choices=tuple(FORMATS),
        default="savedmodel",
        help="savedmodel (default): the serving signature, raw input in; litert and onnx: "
        "the id-level network with the runtime's own recurrent kernels (LiteRT's fused "
        "LSTM, ONNX's LSTM/GRU/RNN nodes); see docs/deploy.md",
    )
    p.add_argument(
        "--quantize",
        choices=("dynamic", "float16", "int8"),
        default=None,
        help="LiteRT only: dynamic-range, float16 or full-integer weights "
        "(int8 needs --representative-data)",
    )
    p.add_argument(
        "--batch-size",
        type=options.int_range(1, 4096),
        default=None,
        help="LiteRT only: a fixed batch size (1 for on-device use); needed where a "
        "recurrent layer has neither its batch nor its length fixed (e.g. an NTM)",
    )
    p.add_argument(
        "--representative-data",
        default=None,
        metavar="FILE",
        help="LiteRT int8: a .npy (one input) or .npz (one array per input) of real "
        "inputs that calibrate the integer ranges",
    )
    p.add_argument(
        "--strict",
        action="store_true",
        help="LiteRT only: an option that did not take effect in the file (weights left "
        "float32 by --quantize, a layer written as a loop instead of the fused op) is an "
        "error and nothing is written, instead of a warning",
    )
    p.add_argument(
        "--beam",
        type=options.beam_size,
        default=None,
        help=f"beam size of the exported search, 1 to {options.MAX_BEAM} (translation models)",
    )
    p.set_defaults(func=_export)
