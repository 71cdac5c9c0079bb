"""``seqmodels generate NAME --prompt "the company" --length 30`` (or ``mine.keras``)."""

from keras_seqmodels.cli import options
from keras_seqmodels.utils.errors import UserError
from keras_seqmodels.utils.loading import load_model_file

MAX_LENGTH = 10_000  # words per call: each costs one model step


def _run(args):
    from keras_seqmodels import zoo
    from keras_seqmodels.language_model.decoding import sample

    if args.name.endswith(".keras"):  # a WordLanguageModel trained on your own text
        from keras_seqmodels.language_model import WordLanguageModel

        model = load_model_file(args.name)
        if not isinstance(model, WordLanguageModel):
            raise UserError(
                f"{args.name} holds a {type(model).__name__}, not a WordLanguageModel "
                "(keras_seqmodels.language_model.train_language_model makes one)"
            )
        words = model.generate(args.prompt, args.length, temperature=args.temperature,
                               seed=args.seed).split()  # fmt: skip
    else:
        lm = zoo.load(args.name)
        if not hasattr(lm, "vocabulary"):
            raise UserError(
                f"{args.name} is not a word-level language model (it has no vocabulary)"
            )
        words = sample(lm.model, lm.vocabulary, args.prompt, args.length, args.temperature,
                       args.seed)  # fmt: skip
    text = " ".join(w if w != "<eos>" else "\n" for w in words)
    print(f"{args.prompt} {text}".replace(" \n ", "\n").strip())


def register(subparsers):
    text = "sample text from a zoo language model (or a .keras WordLanguageModel), with temperature"
    parser = subparsers.add_parser("generate", help=text, description=text)
    parser.add_argument(
        "name",
        help="a zoo language model (`seqmodels zoo list`) or a .keras file from "
        "train_language_model",
    )
    parser.add_argument("--prompt", default="", help="words to continue")
    parser.add_argument("--length", type=options.int_range(1, MAX_LENGTH), default=30,
                        help=f"words to sample, 1 to {MAX_LENGTH} (default 30)")
    parser.add_argument("--temperature", type=options.positive_float(), default=1.0,
                        help="> 0; lower is greedier (default 1)")
    parser.add_argument("--seed", type=options.seed, default=None,
                        help="seed of the sampler, 0 to 2**32 - 1 (default: random)")
    parser.set_defaults(func=_run)
