"""``seqmodels tag "The old man the boats ."``: word/TAG pairs from a zoo tagger."""

import sys


def tag(sentences, model_name="ud-ewt-upos", model_path=None):
    """Tag whitespace-tokenised sentences; returns one list of (word, tag) per sentence."""
    import keras
    import numpy as np

    from keras_seqmodels import zoo

    sentences = [s for s in sentences if s.strip()]
    if not sentences:
        return []
    if model_path:
        import keras_seqmodels  # noqa: F401  (registers the layers)

        model = keras.saving.load_model(model_path, compile=False, safe_mode=True)
    else:
        model = zoo.load(model_name)
    tags = np.asarray(model.predict_on_batch(np.array(sentences, dtype=object)))
    return [
        list(zip(s.split(), [t.decode("utf-8") for t in row if t]))
        for s, row in zip(sentences, tags)
    ]


def _run(args):
    from keras_seqmodels.cli.main import UserError

    sentences = args.sentences or [line.rstrip("\n") for line in sys.stdin]
    if not any(s.strip() for s in sentences):
        raise UserError("give one or more sentences (or lines on standard input)")
    for pairs in tag(sentences, args.model, args.model_path):
        print(" ".join(f"{w}/{t}" for w, t in pairs))


def register(subparsers):
    text = "tag whitespace-tokenised sentences with a zoo tagger (prints word/TAG)"
    parser = subparsers.add_parser("tag", help=text, description=text)
    parser.add_argument("sentences", nargs="*", help="sentences (default: lines of stdin)")
    parser.add_argument("--model", default="ud-ewt-upos", help="zoo tagger name")
    parser.add_argument("--model-path", default=None, help="a .keras tagger file instead")
    parser.set_defaults(func=_run)
