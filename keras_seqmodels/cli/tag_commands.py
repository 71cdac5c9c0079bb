"""``seqmodels tag "The old man the boats ."``: word/TAG pairs from a zoo tagger."""

import os
import sys

from keras_seqmodels.cli import options
from keras_seqmodels.cli.inputs import read_lines, write_lines


def load_tagger(model_name="ud-ewt-upos", model_path=None):
    """The zoo tagger ``model_name``, or the ``.keras`` file ``model_path``."""
    import keras

    from keras_seqmodels import zoo

    if model_path:
        from keras_seqmodels.cli.main import UserError

        try:
            return keras.saving.load_model(model_path, compile=False, safe_mode=True)
        except Exception as err:  # a corrupt or foreign file: one line
            first = str(err).splitlines()[0] if str(err) else ""
            raise UserError(
                f"--model-path: cannot load {model_path} as a Keras model "
                f"({type(err).__name__}: {first}); give a tagger saved with model.save"
            ) from None
    return zoo.load(model_name).model


def tag(sentences, model_name="ud-ewt-upos", model_path=None, model=None):
    """Tag whitespace-tokenised sentences; returns one list of (word, tag) per
    non-blank sentence (``model``: an already loaded tagger, else one is loaded)."""
    import numpy as np

    sentences = [s for s in sentences if s.strip()]
    if not sentences:
        return []
    if model is None:
        model = load_tagger(model_name, model_path)
    tags = np.asarray(model.predict_on_batch(np.array(sentences, dtype=object)))
    return [
        list(zip(s.split(), [t.decode("utf-8") for t in row if t]))
        for s, row in zip(sentences, tags)
    ]


def _run(args):
    from keras_seqmodels.cli.main import UserError
    from keras_seqmodels.cli.translate_commands import _Progress

    if args.model_path and not os.path.isfile(args.model_path):
        raise UserError(f"--model-path: no such file: {args.model_path}")
    lines, from_file = read_lines(
        args.sentences, args.file, 'a sentence ("The old man the boats .")'
    )
    keep = [i for i, line in enumerate(lines) if line.strip()]
    if not keep:
        raise UserError("give one or more sentences (or lines on standard input)")
    progress = (
        _Progress(len(keep), stream=sys.stderr) if from_file and not args.quiet else None
    )
    model = load_tagger(args.model, args.model_path)
    out = [""] * len(lines)
    for start in range(0, len(keep), args.batch_size):
        rows = keep[start : start + args.batch_size]
        tagged = tag([lines[i] for i in rows], model=model)
        for i, pairs in zip(rows, tagged):
            out[i] = " ".join(f"{w}/{t}" for w, t in pairs)
        if progress is not None:
            progress(len(rows))
    write_lines(out, args.output)


def register(subparsers):
    text = "tag whitespace-tokenised sentences with a zoo tagger (prints word/TAG)"
    parser = subparsers.add_parser("tag", help=text, description=text)
    parser.add_argument("sentences", nargs="*", help="sentences (default: lines of stdin)")
    parser.add_argument("--file", help="a UTF-8 text file, one sentence per line "
                        "(progress bar on standard error; blank lines stay blank)")
    parser.add_argument("--output", help="write the tagged lines here (default stdout)")
    parser.add_argument("--batch-size", type=options.positive_int, default=64,
                        help="sentences per model call (>= 1, default 64)")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.add_argument("--model", default="ud-ewt-upos", help="zoo tagger name")
    parser.add_argument("--model-path", default=None, help="a .keras tagger file instead")
    parser.set_defaults(func=_run)
