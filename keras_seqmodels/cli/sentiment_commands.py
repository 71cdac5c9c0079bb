"""``seqmodels sentiment``: sentiment of sentences or trees with a zoo tree model.

    seqmodels sentiment "A gorgeous, witty, seductive movie."
    seqmodels sentiment "(3 (2 It) (4 (4 (2 's) (4 (3 a) (4 lovely) (2 film))) (2 .)))"
    seqmodels sentiment --file reviews.txt --output labels.txt

One label per input line on standard output (or ``--output``), in input
order; a blank input line gives a blank output line. With ``--file`` a
progress bar goes to standard error.

An input line whose first character is ``(`` is read as a bracketed
Penn-Treebank / SST tree (``(label (label word) ...)``; the labels are
ignored). Any other line is plain text: it is split into PTB-style tokens
and given a balanced binary tree (``keras_seqmodels.trees.balanced_tree``),
a structure that does not depend on the sentence. The zoo model was trained
on the treebank's parses, so plain text is scored less accurately than the
treebank parse of the same sentence.
"""

import sys

from keras_seqmodels.cli import options
from keras_seqmodels.cli.inputs import Progress, read_lines, write_lines
from keras_seqmodels.utils.errors import UserError
from keras_seqmodels.utils.loading import load_model_file

COMMAND = "sentiment"  # the zoo model whose spec names it in cli_defaults is the default


def __getattr__(name):
    """``DEFAULT_MODEL``: the zoo model this command uses by default (from the specs)."""
    if name != "DEFAULT_MODEL":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from keras_seqmodels.zoo.models import default_model

    return default_model(COMMAND)


def _load_model(args):
    from keras_seqmodels import zoo

    if args.model_path:
        model = load_model_file(args.model_path, option="--model-path")
    else:
        model = zoo.load(args.model).model
    from keras_seqmodels.trees import TreeClassifier

    if isinstance(model, TreeClassifier):  # trained from your own trees
        return model
    if len(getattr(model, "inputs", None) or []) != 3:
        raise UserError(
            f"model {args.model_path or args.model!r} is not a tree classifier: expected "
            "3 inputs (tokens, children, levels), as the zoo's tree models have"
        )
    return model


def _sentiment(args):
    from keras_seqmodels.trees import TreeError
    from keras_seqmodels.trees import text as tree_text
    from keras_seqmodels.trees.serving import root_probabilities

    lines, from_file = read_lines(
        args.text, args.file, 'a sentence ("A gorgeous, witty movie."), a bracketed tree'
    )
    where = "argument" if args.text else f"{args.file or 'standard input'} line"
    trees, keep = [], []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            trees.append(tree_text.text_to_tree(line, args.input_format))
        except TreeError as err:
            raise UserError(f"{where} {number}: {err}") from None
        keep.append(number - 1)
    if not trees:
        return 0
    from keras_seqmodels.cli.options import require_tensorflow

    require_tensorflow()
    model = _load_model(args)
    progress = (
        Progress(len(trees), stream=sys.stderr) if from_file and not args.quiet else None
    )
    chunks = []
    for start in range(0, len(trees), args.batch_size * 4):
        chunk = trees[start : start + args.batch_size * 4]
        chunks.append(root_probabilities(model, chunk, batch_size=args.batch_size,
                                         lower=getattr(model, "lower", True)))
        if progress is not None:
            progress(len(chunk))
    import numpy as np

    probs = np.concatenate(chunks)
    names = getattr(model, "label_names", None) or tree_text.label_names(probs.shape[1])
    out = [""] * len(lines)
    for row, p in zip(keep, probs):
        label = names[int(p.argmax())]
        if args.probabilities:
            label += "\t" + " ".join(f"{v:.3f}" for v in p)
        out[row] = label
    write_lines(out, args.output)
    return 0


def register(subparsers):
    from keras_seqmodels.zoo.models import default_model

    default = default_model(COMMAND)
    p = subparsers.add_parser(
        "sentiment",
        help="sentiment of sentences or bracketed trees with the zoo's Tree-LSTM",
        description="Print one sentiment label per input (very negative, negative, "
        f"neutral, positive, very positive) with the zoo's {default} model, "
        "from arguments, --file, or standard input (one input per line). A line "
        "starting with '(' is a bracketed PTB/SST tree (its labels are ignored); "
        "other lines are plain text, tokenised PTB-style and given a balanced "
        "binary tree that does not depend on the sentence, which is less accurate "
        "than the treebank's parse of the same sentence.",
    )
    p.add_argument("text", nargs="*", help="sentences or bracketed trees")
    p.add_argument("--file", help="a UTF-8 text file, one sentence or tree per line")
    p.add_argument("--output", help="write the labels here (default stdout)")
    p.add_argument("--input-format", choices=("auto", "tree", "text"), default="auto",
                   help="auto (default): lines starting with '(' are trees; tree: every "
                   "line is a tree; text: every line is plain text")
    p.add_argument("--probabilities", action="store_true",
                   help="also print the class probabilities after a tab")
    p.add_argument("--batch-size", type=options.positive_int, default=64,
                   help="trees per model call (>= 1, default 64)")
    p.add_argument("--model", default=default, help="zoo model name")
    p.add_argument("--model-path", default=None,
                   help="a .keras tree classifier file instead of the zoo model (a "
                   "TreeClassifier from train_tree_classifier prints its own labels)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=_sentiment)
