"""The options of ``seqmodels train NAME`` and ``seqmodels evaluate NAME``,
and the options every recipe takes (``add_common_arguments``)."""

import argparse
import math
import os

from keras_seqmodels.training.distribute import STRATEGIES
from keras_seqmodels.zoo.framework import smoke

DATA_ENV = "KERAS_SEQMODELS_DATA"
SPLITS = ("validation", "test")
PRECISIONS = ("float32", "mixed_float16", "mixed_bfloat16")


def default_data_dir():
    """``../shared/data`` beside the checkout when it exists, else ``None``."""
    here = os.path.dirname(os.path.abspath(__file__))  # keras_seqmodels/zoo/framework
    root = os.path.dirname(os.path.dirname(os.path.dirname(here)))
    candidate = os.path.join(os.path.dirname(root), "shared", "data")
    return candidate if os.path.isdir(candidate) else None


def add_common_arguments(parser, epochs=10, batch_size=32, data_dir=None, epochs_help=None):
    """Add the options every recipe takes to an ``argparse`` parser.

    ``--data-dir``, ``--epochs``, ``--batch-size`` (global, over all
    replicas), ``--strategy {default,mirrored,multi-worker,tpu}``, ``--tpu``
    (TPU name or address) and ``--precision {float32,mixed_float16,
    mixed_bfloat16}``. ``--epochs`` must be positive, or with
    ``epochs_help`` (what 0 means, shown in ``--help``) at least 0.
    Returns the parser.
    """
    parser.add_argument(
        "--data-dir",
        default=data_dir or default_data_dir(),
        help="folder of the shared data sets (default: $KERAS_SEQMODELS_DATA, else "
        "shared/data beside the checkout's folder, where it exists)",
    )
    if epochs_help is None:
        parser.add_argument("--epochs", type=_positive_int, default=epochs)
    else:
        parser.add_argument("--epochs", type=_count, default=epochs, help=epochs_help)
    parser.add_argument(
        "--batch-size",
        type=_positive_int,
        default=batch_size,
        help="global batch size, split over the replicas",
    )
    parser.add_argument(
        "--strategy",
        choices=STRATEGIES,
        default="default",
        help="tf.distribute strategy: one device, all local devices, the "
        "workers of TF_CONFIG, or a TPU (untested here)",
    )
    parser.add_argument("--tpu", default=None, help="TPU name or address")
    parser.add_argument("--precision", choices=PRECISIONS, default="float32")
    return parser


def _positive_int(text):
    return _integer_at_least(text, 1, "a positive integer")


def _count(text):
    return _integer_at_least(text, 0, "an integer >= 0")


def _integer_at_least(text, low, expected):
    try:
        value = int(text)
    except ValueError:
        value = low - 1
    if value < low:
        raise argparse.ArgumentTypeError(f"must be {expected}. Received: {text!r}")
    return value


def _int_list(text):
    try:
        return [int(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"must be comma-separated integers, e.g. 1,2,3. Received: {text!r}"
        ) from None


def _sweep_item(text):
    key, sep, values = text.partition("=")
    if not sep or not values:
        raise argparse.ArgumentTypeError(f"must be KEY=V1,V2. Received: {text!r}")
    return key.replace("-", "_"), values.split(",")


def number(kind, low=None, high=None, below_high=False):
    """An ``argparse`` type for a finite ``int`` or ``float`` in a range.

    Every numeric option of the recipes goes through it: NaN, infinities,
    text and values out of range are a usage error naming the option, the
    expected form and the value (``argument --time-budget: must be a finite
    number >= 0. Received: 'nan'``), exit status 2.

    Example:

    >>> number(float, 0)("2.5"), number(int, 1)("3")
    (2.5, 3)
    """
    what = "an integer" if kind is int else "a finite number"
    bounds = []
    if low is not None:
        bounds.append(f">= {low:g}")
    if high is not None:
        bounds.append(f"{'<' if below_high else '<='} {high:g}")
    expected = f"{what} {' and '.join(bounds)}".strip()

    def parse(text):
        try:
            value = kind(text)
        except (TypeError, ValueError):
            value = None
        if value is not None and kind is float and not math.isfinite(value):
            value = None
        if value is not None and low is not None and value < low:
            value = None
        if value is not None and high is not None and (
            value >= high if below_high else value > high
        ):
            value = None
        if value is None:
            raise argparse.ArgumentTypeError(f"must be {expected}. Received: {text!r}")
        return value

    parse.__name__ = expected
    return parse


# Model options that are sizes or counts: at least 1.
_SIZES = ("units", "dim", "layers", "size", "hops", "bptt", "beam", "length", "steps", "count")


def _config_type(key, default):
    """The type of a model option: its default's type, finite; at least 1
    for a size (``_SIZES`` in its name), at least 0 where the default is
    (rates, norms, epochs of a schedule); a dropout rate in [0, 1)."""
    kind = type(default)
    if kind not in (int, float):
        return kind
    if "dropout" in key:
        return number(float, 0, 1, below_high=True)
    if kind is int and default > 0 and any(part in key for part in _SIZES):
        return number(int, 1)
    return number(kind, 0 if default >= 0 else None)


def _option(parser, key, default):
    flag = "--" + key.replace("_", "-")
    if isinstance(default, bool):
        parser.add_argument(
            flag,
            type=lambda t: t.lower() in ("1", "true", "yes"),
            default=default,
            metavar="{true,false}",
        )
    else:
        kind = str if default is None else _config_type(key, default)
        parser.add_argument(flag, type=kind, default=default)


def parser_for(recipe, action):
    """An ``argparse`` parser for ``action`` (``"train"`` or ``"evaluate"``)."""
    config = dict(recipe.config)
    parser = argparse.ArgumentParser(
        prog=f"seqmodels {action} {recipe.name}",
        description=f"{action.capitalize()} the zoo model {recipe.name}"
        + (f" ({recipe.task})" if recipe.task else "")
        + ".",
    )
    # train --epochs 0: the data loaded and the network built (a recipe's
    # data cache written), or with --init-from FILE: FILE packaged.
    zero = "0: train nothing (with --init-from FILE: package FILE)" if action == "train" else None
    add_common_arguments(
        parser,
        epochs=config.pop("epochs", 10),
        batch_size=config.pop("batch_size", 32),
        epochs_help=zero,
    )
    parser.add_argument("--seed", type=int, default=config.pop("seed", 0))
    parser.add_argument(
        "--smoke",
        action="store_true",
        help="a test of the whole path in seconds: a few generated or fixture "
        f"examples, {smoke.EPOCHS} epochs (unless --epochs) of at most "
        f"{smoke.BATCHES} batches",
    )
    parser.add_argument(
        "--verbose",
        type=int,
        choices=(0, 1, 2),
        default=None,
        help="0: quiet; 1: Keras's progress bar per batch; 2: a line per epoch, and "
        "a plain progress line every 30 s within it (default: 1 on a terminal, "
        "2 when the output goes to a file or pipe)",
    )
    if action == "train":
        parser.add_argument(
            "--tensorboard",
            default=None,
            metavar="DIR",
            help="also write TensorBoard logs (loss and metrics per epoch) to DIR "
            "(`tensorboard --logdir DIR`)",
        )
        parser.add_argument(
            "--work-dir",
            default=os.path.join("runs", recipe.name),
            help="checkpoints, backups and logs (rerun to resume)",
        )
        parser.add_argument(
            "--seeds",
            type=_int_list,
            default=None,
            help="one model per seed, the best on validation kept",
        )
        parser.add_argument(
            "--sweep",
            type=_sweep_item,
            action="append",
            default=[],
            metavar="KEY=V1,V2",
            help="one model per value (grid)",
        )
        parser.add_argument(
            "--ensemble",
            type=number(int, 0),
            default=0,
            metavar="K",
            help="combine up to K of the runs, chosen greedily on validation "
            "(needs --seeds or --sweep and the model's `combine`)",
        )
        parser.add_argument(
            "--ensemble-with",
            action="append",
            default=[],
            metavar="FILE",
            help="a packaged .keras model (e.g. the shipped one) added to the --ensemble "
            "candidates (repeatable; with --ensemble, one run is enough)",
        )
        parser.add_argument(
            "--time-budget",
            type=number(float, 0),
            default=0.0,
            help="stop each run after this many seconds (0: none)",
        )
        parser.add_argument("--init-from", default=None, help="start from this .keras file")
        parser.add_argument(
            "--weights-dtype",
            choices=("float32", "float16"),
            default="float32",
            help="dtype of the weights stored in the packaged WORK_DIR/NAME.keras "
            "(float16: half the file, loaded and run in float32)",
        )
        parser.add_argument(
            "--export",
            default=None,
            metavar="DIR",
            help="export the selected model as a SavedModel",
        )
    else:
        parser.add_argument("--split", choices=SPLITS, default="validation")
        parser.add_argument(
            "--model", default=None, help="a .keras file (default: the shipped artifact)"
        )
        parser.add_argument(
            "--register",
            action="store_true",
            help="with --model and --split test: ship it in the zoo",
        )
    for key, default in config.items():
        _option(parser, key, default)
    return parser


def parse(recipe, action, argv):
    """``argv`` parsed by ``parser_for(recipe, action)``; with ``--smoke`` and
    no ``--epochs``, the smoke run's epochs (``smoke.EPOCHS``), not the
    model's."""
    parser = parser_for(recipe, action)
    # An attribute already in the namespace is not replaced by its default,
    # so None here means that --epochs was not given.
    args = parser.parse_args(list(argv), namespace=argparse.Namespace(epochs=None))
    if args.epochs is None:
        args.epochs = smoke.EPOCHS if args.smoke else parser.get_default("epochs")
    return args


def config_of(recipe, args):
    """The model's config: its defaults, overridden by the parsed options."""
    config = dict(recipe.config)
    config.update({k: getattr(args, k) for k in config if hasattr(args, k)})
    config.update(smoke=args.smoke)
    return config


def resolve_data_dir(recipe, data_dir, smoke=False):
    """The model's data folder: ``<data-dir>/<data_subdir>`` (``--data-dir``,
    else ``$KERAS_SEQMODELS_DATA``, else ``../shared/data`` beside the
    checkout), or ``data_dir`` itself when it is that folder already.

    Returns ``None`` with ``smoke`` (tiny data needs no folder) or when the
    model needs no data.

    Raises:
        FileNotFoundError: naming the model, the folder looked for and the
            option that sets it.
    """
    if smoke or recipe.data_subdir is None:
        return None
    root = data_dir or os.environ.get(DATA_ENV) or default_data_dir()
    candidates = [os.path.join(root, recipe.data_subdir)] if root else []
    if root and os.path.basename(os.path.normpath(root)) == recipe.data_subdir:
        candidates.append(root)
    for path in candidates:
        if os.path.isdir(path):
            return path
    if not root:
        raise FileNotFoundError(
            f"{recipe.name}: no data folder given, and there is no shared/data beside "
            f"the checkout. Pass --data-dir DATA (the folder holding {recipe.data_subdir}/) "
            f"or set {DATA_ENV}."
        )
    raise FileNotFoundError(
        f"{recipe.name}: data folder {recipe.data_subdir!r} not found under "
        f"{root!r}. Pass --data-dir (the folder holding {recipe.data_subdir}/) "
        f"or set {DATA_ENV}."
    )
