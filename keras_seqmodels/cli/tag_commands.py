"""``seqmodels tag "I can't eat butter!"``: token/TAG pairs from a zoo tagger.

Raw text is split into tokens the way the tagger's training data (UD English
EWT) is (``keras_seqmodels.data.tokenize``: punctuation and clitics split off,
``can't`` -> ``ca n't``), so the output has one tag per token:
``I/PRON ca/AUX n't/PART eat/VERB butter/NOUN !/PUNCT``. ``--pretokenized``
splits on whitespace only, for text that is already tokenised.
"""

import os
import sys

from keras_seqmodels.cli import options
from keras_seqmodels.cli.inputs import Progress, read_lines, write_lines
from keras_seqmodels.utils.errors import UserError
from keras_seqmodels.utils.loading import load_model_file

COMMAND = "tag"  # the zoo model whose spec names it in cli_defaults is the default


def load_tagger(model_name=None, model_path=None):
    """The zoo tagger ``model_name`` (default: the command's, from the specs),
    or the ``.keras`` file ``model_path``."""
    from keras_seqmodels import zoo
    from keras_seqmodels.zoo.models import default_model

    if model_path:
        return load_model_file(
            model_path, option="--model-path", hint="give a tagger saved with model.save"
        )
    return zoo.load(model_name or default_model(COMMAND)).model


def tag(sentences, model_name=None, model_path=None, model=None,
        pretokenized=False):
    """Tag raw sentences: one list of ``(token, tag)`` per non-blank sentence.

    Args:
        sentences: strings of raw text (split with
            ``keras_seqmodels.data.tokenize.tokenize``) or, with
            ``pretokenized``, of whitespace-separated tokens.
        model_name: the zoo tagger, used when ``model`` is not given
            (default: the one whose spec names ``tag`` in ``cli_defaults``).
        model_path: a ``.keras`` tagger file instead of the zoo's.
        model: an already loaded tagger (a Keras model taking a string
            ``(batch,)`` of space-separated tokens).
        pretokenized: split on whitespace only.

    Returns:
        A list, one entry per non-blank sentence, of ``(token, tag)`` pairs.
    """
    from keras_seqmodels.tagging.text import tag_sentences

    if not any(s.strip() for s in sentences):
        return []
    if model is None:
        model = load_tagger(model_name, model_path)
    return tag_sentences(model, sentences, pretokenized)


def _run(args):

    if args.model_path and not os.path.isfile(args.model_path):
        raise UserError(f"--model-path: no such file: {args.model_path}")
    lines, from_file = read_lines(
        args.sentences, args.file, 'a sentence ("I can\'t eat butter!")'
    )
    keep = [i for i, line in enumerate(lines) if line.strip()]
    if not keep:
        raise UserError("give one or more sentences (or lines on standard input)")
    progress = (
        Progress(len(keep), stream=sys.stderr) if from_file and not args.quiet else None
    )
    from keras_seqmodels.cli.options import require_tensorflow

    require_tensorflow()
    model = load_tagger(args.model, args.model_path)
    out = [""] * len(lines)
    for start in range(0, len(keep), args.batch_size):
        rows = keep[start : start + args.batch_size]
        tagged = tag([lines[i] for i in rows], model=model, pretokenized=args.pretokenized)
        for i, pairs in zip(rows, tagged):
            out[i] = " ".join(f"{w}/{t}" for w, t in pairs)
        if progress is not None:
            progress(len(rows))
    write_lines(out, args.output)


def register(subparsers):
    from keras_seqmodels.zoo.models import default_model

    text = "tag English sentences with a zoo tagger (prints token/TAG)"
    parser = subparsers.add_parser(
        "tag",
        help=text,
        description="Tag English sentences with a zoo tagger: one output line of "
        "token/TAG pairs per input line. Raw text is split into tokens as in the "
        "tagger's training data (UD English EWT): punctuation and clitics become "
        "tokens of their own (\"can't\" -> ca n't, \"butter!\" -> butter !); "
        "numbers, abbreviations (U.S., Mr.), URLs and e-mail addresses stay whole.",
    )
    parser.add_argument("sentences", nargs="*", help="sentences (default: lines of stdin)")
    parser.add_argument("--file", help="a UTF-8 text file, one sentence per line "
                        "(progress bar on standard error; blank lines stay blank)")
    parser.add_argument("--output", help="write the tagged lines here (default stdout)")
    parser.add_argument("--batch-size", type=options.positive_int, default=64,
                        help="sentences per model call (>= 1, default 64)")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.add_argument("--pretokenized", action="store_true",
                        help="the input is already tokenised: split on whitespace only")
    parser.add_argument("--model", default=default_model(COMMAND), help="zoo tagger name")
    parser.add_argument("--model-path", default=None, help="a .keras tagger file instead")
    parser.set_defaults(func=_run)
