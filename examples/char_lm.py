"""A character-level Elman language model (Elman 1990) on the EWT sample text.

Trains ``Recurrent(ElmanCell)`` to predict the next character of the
committed UD English EWT training sample (CC BY-SA 4.0), reports bits per
character on the dev sample against the uniform baseline log2(V), then
samples text. Truncated back-propagation through time over windows of the
character stream. Runs in about a minute on a laptop CPU.

    python examples/char_lm.py [--epochs 6] [--units 128]
"""

import argparse
import math
import os
import sys

import keras
import numpy as np

import keras_seqmodels as ks
from keras_seqmodels.data import read_conllu

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURES = os.path.join(ROOT, "tests", "fixtures")


def text_of(path):
    return "\n".join(" ".join(ws) for ws, _ in read_conllu(path)) + "\n"


def windows(ids, length):
    """Non-overlapping (input, next-character target) windows of the stream."""
    n = (len(ids) - 1) // length
    x = ids[: n * length].reshape(n, length)
    y = ids[1 : n * length + 1].reshape(n, length)
    return x, y


def build(vocab_size, units):
    ids = keras.Input((None,), dtype="int32")
    x = keras.layers.Embedding(vocab_size, 32)(ids)
    x = ks.layers.Recurrent(ks.cells.ElmanCell(units), return_sequences=True)(x)
    return keras.Model(ids, keras.layers.Dense(vocab_size)(x))


def sample(model, chars, prompt, length, temperature, rng):
    index = {c: i for i, c in enumerate(chars)}
    ids = [index.get(c, 0) for c in prompt]
    for _ in range(length):
        logits = np.asarray(model(np.array([ids], "int32")))[0, -1] / temperature
        p = np.exp(logits - logits.max())
        ids.append(int(rng.choice(len(p), p=p / p.sum())))
    return "".join(chars[i] for i in ids)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=6)
    parser.add_argument("--units", type=int, default=128)
    parser.add_argument("--window", type=int, default=64)
    parser.add_argument("--limit", type=int, default=0, help="first N training characters")
    parser.add_argument("--sample", type=int, default=120, help="characters to sample")
    args = parser.parse_args(argv)
    keras.utils.set_random_seed(0)
    train = text_of(os.path.join(FIXTURES, "ewt_train_sample.conllu"))
    dev = text_of(os.path.join(FIXTURES, "ewt_dev_sample.conllu"))
    if args.limit:
        train = train[: args.limit]
    chars = ["?"] + sorted(set(train))  # id 0: characters unseen in training
    index = {c: i for i, c in enumerate(chars)}
    encode = lambda s: np.array([index.get(c, 0) for c in s], "int32")  # noqa: E731
    model = build(len(chars), args.units)
    loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    model.compile(keras.optimizers.Adam(1e-2, global_clipnorm=1.0), loss)
    x, y = windows(encode(train), args.window)
    model.fit(x, y, epochs=args.epochs, batch_size=32, verbose=0)
    dx, dy = windows(encode(dev), args.window)
    nats = float(model.evaluate(dx, dy, verbose=0, batch_size=64))
    bpc, uniform = nats / math.log(2), math.log2(len(chars))
    print(f"dev bits per character {bpc:.2f} (uniform {uniform:.2f})")
    text = sample(model, chars, "The ", args.sample, 0.7, np.random.default_rng(0))
    print(repr(text))
    return {"bpc": bpc, "uniform_bpc": uniform, "sample": text}


if __name__ == "__main__":
    main(sys.argv[1:])
