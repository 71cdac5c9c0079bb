"""``seqmodels plot``: pictures as PNG files.

    seqmodels plot curves runs/NAME/history.json -o curves.png
    seqmodels plot attention "A man is riding a bicycle." -o attention.png
    seqmodels plot ntm --model-path runs/NAME/best.keras -o ntm.png

``curves``: training curves from a log (Keras ``CSVLogger`` CSV, JSON
``{"history": {...}}``, a JSON dict of lists, or JSON lines). ``attention``:
the attention heat-map of a translation model for one sentence. ``ntm``: the
read and write weightings of a Neural Turing Machine over one sequence. The
drawing code is ``keras_seqmodels.utils.plotting``.
"""

import os

from keras_seqmodels.cli import options
from keras_seqmodels.utils.errors import UserError
from keras_seqmodels.utils.loading import load_model_file

# The zoo models whose specs name these commands in cli_defaults are their defaults.
ATTENTION_COMMAND, NTM_COMMAND = "plot attention", "plot ntm"
MAX_NTM_LENGTH = 1000  # the picture has one column per step


def __getattr__(name):
    """``NTM_ZOO_MODEL``: the zoo model ``plot ntm`` uses by default (from the specs)."""
    if name != "NTM_ZOO_MODEL":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from keras_seqmodels.zoo.models import default_model

    return default_model(NTM_COMMAND)


def _check_output(path):

    if not path.lower().endswith(".png"):
        raise UserError(f"--output must be a .png file; got {path!r}")
    directory = os.path.dirname(os.path.abspath(path))
    if os.path.exists(directory) and not os.path.isdir(directory):
        raise UserError(f"--output: {directory} is not a directory")


def _curves(args):
    from keras_seqmodels.utils import plotting

    _check_output(args.output)
    try:
        history = plotting.load_history(args.log)
    except UnicodeDecodeError:
        raise UserError(f"{args.log} is not a text log (not UTF-8); give a Keras "
                        "CSVLogger CSV or a JSON history") from None
    except plotting.PlotError as err:
        raise UserError(str(err)) from None
    try:
        metrics = args.metrics.split(",") if args.metrics else None
        title = args.title if args.title is not None else os.path.basename(args.log)
        plotting.plot_history(history, args.output, title=title, metrics=metrics)
    except plotting.PlotError as err:
        raise UserError(str(err)) from None
    epochs = len(next(iter(history.values())))
    print(f"wrote {args.output} ({epochs} epochs: {', '.join(sorted(history))})")


def _attention(args):
    import tensorflow as tf

    from keras_seqmodels import zoo
    from keras_seqmodels.utils import plotting
    from keras_seqmodels.zoo.models import default_model

    _check_output(args.output)
    if not args.sentence.strip():
        raise UserError("give a non-blank sentence")
    if args.model_path:
        model = load_model_file(args.model_path, option="--model-path")
    else:
        model = zoo.load(args.model).model
    if not callable(getattr(model, "attention_weights", None)):
        raise UserError(
            f"model {args.model_path or args.model!r} is not a translation model with "
            "attention (expected a keras_seqmodels.seq2seq.Translator, as the zoo's "
            f"{default_model(ATTENTION_COMMAND)})"
        )
    translation = model(tf.constant([args.sentence])).numpy()[0].decode("utf-8")
    weights, src, tgt = model.attention_weights(args.sentence, translation)
    title = f"{args.model_path or args.model} attention\n{args.sentence}\n{translation}"
    plotting.plot_attention(weights, src, tgt, args.output, title=title,
                            source_label="source pieces", target_label="output pieces")
    print(translation)
    print(f"wrote {args.output}")


def _ntm(args):
    import numpy as np

    from keras_seqmodels import zoo
    from keras_seqmodels.utils import plotting

    _check_output(args.output)
    if args.model_path:
        model = load_model_file(args.model_path, option="--model-path")
        name = os.path.basename(args.model_path)
    else:
        if args.model not in zoo.list_models():
            raise UserError(
                f"zoo model {args.model!r} is not registered "
                f"(known: {', '.join(zoo.list_models()) or 'none'}); give an NTM "
                ".keras file with --model-path"
            )
        model = zoo.load(args.model).model
        name = args.model
    try:
        ntm = plotting.find_ntm(model)
        if args.input:
            if not os.path.isfile(args.input):
                raise UserError(f"--input: no such file: {args.input}")
            try:
                x = np.load(args.input, allow_pickle=False)
            except ValueError as err:
                raise UserError(f"--input: {args.input} is not a .npy array ({err})") from None
        else:
            inputs = model.inputs if ntm is not model else None
            features = inputs[0].shape[-1] if inputs else ntm.cell.kernel.shape[0]
            x = plotting.copy_sequence(args.length, features, seed=args.seed)
        reads, writes = plotting.ntm_weightings(model, x)
        title = f"{name}: " + (
            os.path.basename(args.input) if args.input
            else f"copy sequence of length {args.length}"
        )
        plotting.plot_ntm_weightings(reads, writes, args.output, title=title)
    except plotting.PlotError as err:
        raise UserError(str(err)) from None
    print(f"wrote {args.output} ({reads.shape[0]} steps, {reads.shape[-1]} slots)")


def register(subparsers):
    from keras_seqmodels.zoo.models import default_model

    parser = subparsers.add_parser(
        "plot",
        help="write a PNG: training curves, attention heat-map, NTM memory access",
        description="Write a picture as a PNG file (matplotlib, Agg backend).",
    )
    sub = parser.add_subparsers(dest="plot_command", metavar="KIND")
    sub.required = True

    p = sub.add_parser(
        "curves",
        help="training curves from a log",
        description="Training curves from a log: a Keras CSVLogger CSV, JSON "
        '{"history": {name: [values]}}, a JSON dict of lists, or JSON lines with one '
        "{name: value} object per epoch. Each metric gets a panel with its val_ twin.",
    )
    p.add_argument("log", help="the log file")
    p.add_argument("-o", "--output", default="curves.png", help="PNG to write")
    p.add_argument("--metrics", help="comma-separated metrics to draw (default: all)")
    p.add_argument("--title", default=None, help="figure title (default: the log's name)")
    p.set_defaults(func=_curves)

    p = sub.add_parser(
        "attention",
        help="attention heat-map of a translation model for one sentence",
        description="Translate one sentence and draw the decoder's attention over the "
        "source pieces (rows: output pieces, columns: source pieces).",
    )
    p.add_argument("sentence", help="the source sentence")
    p.add_argument("-o", "--output", default="attention.png", help="PNG to write")
    p.add_argument("--model", default=default_model(ATTENTION_COMMAND),
                   help="zoo translation model")
    p.add_argument("--model-path", default=None, help="a .keras Translator file instead")
    p.set_defaults(func=_attention)

    p = sub.add_parser(
        "ntm",
        help="NTM read/write weightings over time",
        description="Run a Neural Turing Machine model over one sequence and draw its "
        "write and read weightings (memory slot x time step). The sequence is --input "
        "(a .npy array (time, features)) or, by default, a copy-task sequence: random "
        "bits, a delimiter on the last channel, then blanks. The model is the zoo's "
        f"{default_model(NTM_COMMAND)} once registered, or any .keras file with an NTM layer.",
    )
    p.add_argument("-o", "--output", default="ntm.png", help="PNG to write")
    p.add_argument("--model", default=default_model(NTM_COMMAND), help="zoo model name")
    p.add_argument("--model-path", default=None, help="a .keras file with an NTM layer")
    p.add_argument("--input", default=None, help="a .npy array (time, features)")
    p.add_argument("--length", type=options.int_range(1, MAX_NTM_LENGTH), default=10,
                   help=f"length of the default copy sequence, 1 to {MAX_NTM_LENGTH} "
                   "(default 10)")
    p.add_argument("--seed", type=options.seed, default=0,
                   help="seed of the default copy sequence (default 0)")
    p.set_defaults(func=_ntm)
