"""A BiLSTM-CRF part-of-speech tagger on UD English EWT, from the package's own layers.

Word embeddings plus a character-level BiLSTM (``ks.tagging.CharacterEncoder``),
a sentence BiLSTM (``ks.layers.Bidirectional(ks.layers.Recurrent(
ks.cells.LSTMCell))``) and emission scores, wrapped in ``ks.tagging.CRFTagger``:
a linear-chain CRF trained with ``fit(x, y)`` on integer UPOS tags (forward
algorithm loss) that predicts Viterbi tags inside the graph. Prints UPOS
accuracy on the dev set beside the most-frequent-tag baseline.

Reads ``*train*.conllu`` and ``*dev*.conllu`` from ``--data-dir``: the full
treebank in ``../shared/data/ud_english_ewt`` when it is there (see the data
page for where to get it), otherwise the small samples committed in
``tests/fixtures`` (UD English EWT, CC BY-SA 4.0).

    python examples/bidirectional_tagger.py [--epochs 3] [--limit 2000]
"""

import argparse
import collections
import glob
import os
import sys

import keras
import numpy as np

import keras_seqmodels as ks
from keras_seqmodels.data import read_conllu

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURES = os.path.join(ROOT, "tests", "fixtures")
SHARED = os.path.join(os.path.dirname(ROOT), "shared", "data", "ud_english_ewt")


def find_split(data_dir, split):
    """The one ``*<split>*.conllu`` file of ``data_dir``."""
    paths = sorted(glob.glob(os.path.join(data_dir, f"*{split}*.conllu")))
    if not paths:
        raise SystemExit(f"bidirectional_tagger: no *{split}*.conllu file in {data_dir}")
    return paths[0]


def encode(sentences, words, chars, tags, max_chars=12):
    """Padded word ids, char ids and tag ids (0 = padding, 1 = unknown)."""
    n, t = len(sentences), max(len(ws) for ws, _ in sentences)
    w_ids = np.zeros((n, t), "int32")
    c_ids = np.zeros((n, t, max_chars), "int32")
    y = np.zeros((n, t), "int32")
    for i, (ws, ts) in enumerate(sentences):
        for j, (w, tag) in enumerate(zip(ws, ts)):
            w_ids[i, j] = words.get(w.lower(), 1)
            c_ids[i, j, : len(w[:max_chars])] = [chars.get(c, 1) for c in w[:max_chars]]
            y[i, j] = tags[tag]
    return w_ids, c_ids, y


def build(num_words, num_chars, num_tags, units=32):
    """Inputs (word ids, char ids) -> potentials, wrapped in a CRFTagger."""
    w_in = keras.Input((None,), dtype="int32", name="words")
    c_in = keras.Input((None, None), dtype="int32", name="chars")
    words = keras.layers.Embedding(num_words, 32, mask_zero=True)(w_in)
    chars = ks.tagging.CharacterEncoder(num_chars, 16, 16)(c_in)
    x = keras.layers.Concatenate()([words, chars])
    x = ks.layers.Bidirectional(
        ks.layers.Recurrent(ks.cells.LSTMCell(units), return_sequences=True))(x)
    potentials = keras.layers.Dense(num_tags)(x)
    return ks.tagging.CRFTagger(keras.Model([w_in, c_in], potentials))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default=SHARED if os.path.isdir(SHARED) else FIXTURES)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--limit", type=int, default=2000,
                        help="first N training sentences (0: all)")
    parser.add_argument("--max-length", type=int, default=40,
                        help="training sentences longer than this are left out")
    args = parser.parse_args(argv)
    keras.utils.set_random_seed(0)
    train = read_conllu(find_split(args.data_dir, "train"))
    dev = read_conllu(find_split(args.data_dir, "dev"))
    train = [s for s in train if len(s[0]) <= args.max_length]
    if args.limit:
        train = train[: args.limit]
    counts = collections.Counter(w.lower() for ws, _ in train for w in ws)
    words = {w: i + 2 for i, w in enumerate(sorted(counts))}
    chars = {c: i + 2 for i, c in enumerate(sorted({c for ws, _ in train for w in ws for c in w}))}
    tags = {t: i for i, t in enumerate(sorted({t for _, ts in train + dev for t in ts}))}
    tagger = build(len(words) + 2, len(chars) + 2, len(tags))
    tagger.compile(keras.optimizers.Adam(5e-3), metrics=["accuracy"])
    w, c, y = encode(train, words, chars, tags)
    dw, dc, dy = encode(dev, words, chars, tags)
    history = tagger.fit([w, c], y, epochs=args.epochs, batch_size=16, verbose=0)
    dev_metrics = tagger.evaluate([dw, dc], dy, batch_size=64, verbose=0, return_dict=True)
    pred = np.asarray(tagger.predict([dw, dc], batch_size=64, verbose=0))
    real = dw > 0
    accuracy = float((pred == dy)[real].mean())
    majority = collections.Counter(t for _, ts in train for t in ts).most_common(1)[0][0]
    baseline = float((dy == tags[majority])[real].mean())
    print(f"{len(train)} training sentences from {args.data_dir}, {args.epochs} epochs")
    print(f"train loss {history.history['loss'][0]:.2f} -> {history.history['loss'][-1]:.2f}")
    print(f"dev UPOS accuracy {accuracy:.3f} (most-frequent-tag baseline {baseline:.3f})")
    return {"accuracy": accuracy, "baseline": baseline, "loss": history.history["loss"],
            "evaluate_accuracy": dev_metrics["accuracy"]}


if __name__ == "__main__":
    main(sys.argv[1:])
