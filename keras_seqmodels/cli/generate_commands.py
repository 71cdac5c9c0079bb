"""``seqmodels generate ptb-lstm --prompt "the company" --length 30``."""


def sample(model, vocabulary, prompt, length, temperature=1.0, seed=None):
    """Sample ``length`` words after ``prompt`` from a word-level language model.

    Each next word w is drawn from softmax(logits / temperature), the logits
    of the model at the last position of the text so far. Prompt words not in
    the vocabulary become ``<unk>``.

    Args:
        model: maps int ids ``(1, time)`` to logits ``(1, time, vocab)``.
        vocabulary: list of words, id i ↦ ``vocabulary[i]``.
        prompt: whitespace-separated words (lower-cased, as PTB).
        length: number of words to sample.
        temperature: > 0; lower is greedier.
        seed: integer seed of the sampler.

    Returns:
        The sampled words, a list of strings.
    """
    import numpy as np

    if temperature <= 0:
        raise ValueError(f"generate: `temperature` must be > 0. Received: {temperature}")
    index = {w: i for i, w in enumerate(vocabulary)}
    unk = index.get("<unk>", 0)
    eos = index.get("<eos>")
    ids = [index.get(w, unk) for w in prompt.lower().split()]
    if not ids:
        ids = [eos if eos is not None else unk]
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(length):
        logits = np.asarray(model(np.array([ids], "int32"), training=False))[0, -1]
        logits = logits.astype("float64") / temperature
        p = np.exp(logits - logits.max())
        nxt = int(rng.choice(len(p), p=p / p.sum()))
        ids.append(nxt)
        out.append(vocabulary[nxt])
    return out


def _run(args):
    from keras_seqmodels import zoo
    from keras_seqmodels.cli.main import UserError

    if args.length <= 0:
        raise UserError(f"--length must be a positive integer, got {args.length}")
    if args.temperature <= 0:
        raise UserError(f"--temperature must be > 0, got {args.temperature}")
    model = zoo.load(args.name)
    with open(zoo.asset_path(args.name, "vocabulary"), encoding="utf-8") as f:
        vocabulary = [line.rstrip("\n") for line in f if line.rstrip("\n")]
    words = sample(model, vocabulary, args.prompt, args.length, args.temperature, args.seed)
    text = " ".join(w if w != "<eos>" else "\n" for w in words)
    print(f"{args.prompt} {text}".replace(" \n ", "\n").strip())


def register(subparsers):
    text = "sample text from a zoo language model, with temperature"
    parser = subparsers.add_parser("generate", help=text, description=text)
    parser.add_argument("name", help="zoo language model, e.g. ptb-lstm")
    parser.add_argument("--prompt", default="", help="words to continue")
    parser.add_argument("--length", type=int, default=30, help="words to sample")
    parser.add_argument("--temperature", type=float, default=1.0)
    parser.add_argument("--seed", type=int, default=None)
    parser.set_defaults(func=_run)
