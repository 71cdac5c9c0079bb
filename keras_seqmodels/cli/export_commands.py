"""``seqmodels export NAME OUT [--format savedmodel|litert|onnx]``: write a
zoo model or a ``.keras`` file as a SavedModel (a folder), a LiteRT flatbuffer
(``OUT`` a ``.tflite`` file) or an ONNX graph (``OUT`` a ``.onnx`` file)."""

import os

from keras_seqmodels.cli import options
from keras_seqmodels.utils.bounds import check_keras_file

_LITERT_ONLY = "--quantize, --representative-data and --batch-size are for --format litert"


def _export(args):
    if args.format != "savedmodel":
        return _export_file(args)
    if args.quantize or args.representative_data or args.batch_size:
        from keras_seqmodels.cli.main import UserError

        raise UserError(_LITERT_ONLY)
    from keras_seqmodels import export
    from keras_seqmodels.cli.main import UserError

    export_options = {}
    if args.beam is not None:
        export_options["beam_size"] = args.beam
    source = args.name
    exporter = export.export
    if source.endswith(".keras"):
        path, source = source, _load_keras_file(source)
        exporter = _keras_file_exporter(path, source) or exporter
    if os.path.isdir(args.directory) and os.listdir(args.directory):
        raise UserError(f"{args.directory} is not empty; give a new or empty folder")
    try:
        exporter(source, args.directory, **export_options)
    except FileExistsError as err:
        raise UserError(str(err)) from err
    print(f"wrote {args.directory} (SavedModel; signature 'serving_default')")
    return 0


def _export_file(args):
    """``--format litert|onnx``: the id-level network, written as one file."""
    from keras_seqmodels import export, zoo
    from keras_seqmodels.cli.main import UserError

    suffix = export.FORMATS[args.format].suffix
    if not args.directory.endswith(suffix):
        raise UserError(f"--format {args.format} writes one file: give OUT ending in {suffix}")
    if os.path.exists(args.directory):
        raise UserError(f"{args.directory} exists; give a new file name")
    if args.beam is not None:
        raise UserError("--beam is for the SavedModel of a translation model")
    if args.format == "onnx" and (args.quantize or args.representative_data or args.batch_size):
        raise UserError(_LITERT_ONLY)
    writer = export.FORMATS[args.format].writer()
    if args.name.endswith(".keras"):
        model = _load_keras_file(args.name)
    else:
        try:
            model = zoo.load_model(args.name)
        except KeyError as err:
            raise UserError(str(err).strip("'\"")) from None
        # A zoo model's own writer for the format (e.g. a tagger's id-level part).
        writer = export.exporter_for(args.name, args.format, default=writer)
    try:
        options = {}
        if args.format == "litert":
            options = {
                "quantize": args.quantize,
                "representative_data": _representative(args.representative_data),
                "batch_size": args.batch_size,
            }
        written = writer(model, args.directory, **options)
    except (ValueError, TypeError, NotImplementedError) as err:
        raise UserError(f"{args.name}: {str(err).splitlines()[0]}") from None
    print(f"wrote {written} ({export.FORMATS[args.format].written})")
    return 0


def _representative(path):
    """The arrays of ``--representative-data`` (``.npy``: one input; ``.npz``:
    one array per input, in the model's input order), or ``None``."""
    if path is None:
        return None
    import numpy as np

    from keras_seqmodels.cli.main import UserError

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


def _keras_file_exporter(path, model):
    """The exporter a loaded .keras model needs (None: the generic one), or one line."""
    from keras_seqmodels import export
    from keras_seqmodels.cli.main import UserError

    try:
        exporter, kind = export.exporter_for_model(model)
    except ValueError as err:
        raise UserError(f"{path} holds {err}") from None
    if kind is None:
        return None
    if kind == "a translator":
        return exporter
    return _without_beam(path, kind, exporter)


def _without_beam(path, kind, exporter):
    """``exporter(model, directory, served_name=model.name)``; ``--beam`` is one line."""
    from keras_seqmodels.cli.main import UserError

    def export_file(model, directory, beam_size=None):
        if beam_size is not None:
            raise UserError(f"{path} holds {kind}; --beam is for translation models")
        return exporter(model, directory, served_name=model.name)

    return export_file


def _load_keras_file(path):
    import keras

    from keras_seqmodels.cli.main import UserError

    if not os.path.isfile(path):
        raise UserError(f"no such .keras file: {path}")
    try:
        check_keras_file(path)  # sizes in its config bounded first
        return keras.saving.load_model(path, compile=False, safe_mode=True)
    except Exception as err:  # a corrupt or foreign file: one line
        first = str(err).splitlines()[0] if str(err) else ""
        raise UserError(
            f"cannot load {path} as a Keras model ({type(err).__name__}: {first}); "
            "give a model saved with model.save"
        ) from None


def register(subparsers):
    from keras_seqmodels.export import FORMATS
    from keras_seqmodels.zoo.models import specs

    signatures = "; ".join(f"{s.name} {s.serving}" for s in specs().values() if s.serving)
    p = subparsers.add_parser(
        "export",
        help="export a zoo model as a TensorFlow SavedModel for serving",
        description="Export a zoo model (or a .keras file) as a TensorFlow "
        "SavedModel whose 'serving_default' signature takes the model's natural "
        f"input: {signatures}. "
        "Any other model (a .keras file) gets the generic export: "
        "the model's named inputs -> 'output_0', ... The folder must be new or empty.",
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
        "--beam",
        type=options.beam_size,
        default=None,
        help=f"beam size of the exported search, 1 to {options.MAX_BEAM} "
        "(translation models)",
    )
    p.set_defaults(func=_export)
