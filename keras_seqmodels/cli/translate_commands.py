"""``seqmodels translate``: English to German with the shipped model.

    seqmodels translate "A man is riding a bicycle."
    echo "Two dogs play in the snow." | seqmodels translate
    seqmodels translate --file sentences.txt --output german.txt

One translation per line on standard output (or ``--output``), in input
order; a line of several sentences is translated sentence by sentence. With
``--file`` a progress bar goes to standard error, and so does one line for
each input unlike the training data or whose numbers or names the
translation lost (``--quiet`` leaves these out too).
"""

import sys

from keras_seqmodels.cli import options
from keras_seqmodels.cli.inputs import Progress, read_lines, write_lines

COMMAND = "translate"  # the zoo model whose spec names it in cli_defaults is the default


def __getattr__(name):
    """``DEFAULT_MODEL``: the zoo model this command uses by default (from the specs)."""
    if name != "DEFAULT_MODEL":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from keras_seqmodels.zoo.models import default_model

    return default_model(COMMAND)


def _translate(args):
    lines, show_progress = read_lines(
        args.text, args.file, 'a sentence ("A man is riding a bicycle.")'
    )
    if not lines:
        return 0
    from keras_seqmodels import zoo
    from keras_seqmodels.cli.options import require_tensorflow

    require_tensorflow()
    task = zoo.load(args.model)
    progress = Progress(len(lines)) if show_progress and not args.quiet else None
    out = task.predict_batch(lines, args.beam, args.batch_size, progress, details=True)
    write_lines([item["translation"] for item in out], args.output)
    if not args.quiet:
        for number, item in enumerate(out, 1):
            why = task.warning_text(item)
            if why:
                sys.stderr.write(f"seqmodels translate: line {number}: {why}; "
                                 "the translation is likely wrong\n")
    return 0


def register(subparsers):
    from keras_seqmodels.zoo.models import default_model

    default = default_model(COMMAND)
    p = subparsers.add_parser(
        "translate",
        help="translate English to German with the shipped model",
        description="Translate English sentences to German with the zoo's "
        f"{default} model: from arguments, --file, or standard input "
        "(one sentence per line).",
    )
    p.add_argument("text", nargs="*", help="sentences to translate")
    p.add_argument("--file", help="a UTF-8 text file, one sentence per line")
    p.add_argument("--output", help="write the translations here (default stdout)")
    p.add_argument("--beam", type=options.beam_size, default=None,
                   help=f"beam size, 1 to {options.MAX_BEAM}; 1 = greedy "
                   "(default: the model's, 5)")
    p.add_argument("--batch-size", type=options.positive_int, default=32,
                   help="sentences per decoding call (>= 1, default 32)")
    p.add_argument("--model", default=default, help="zoo model name")
    p.add_argument("--quiet", action="store_true",
                   help="no progress bar and no warnings about doubtful translations")
    p.set_defaults(func=_translate)
