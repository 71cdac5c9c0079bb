"""A bidirectional LSTM part-of-speech tagger with a CRF, on the EWT samples.

Trains on the committed UD English EWT training sample and reports UPOS
accuracy on the dev sample (CC BY-SA 4.0, tests/fixtures/). The model is the
zoo's ud-ewt-upos architecture at toy size: word embeddings plus a
character-level BiLSTM (``CharacterEncoder``), a BiLSTM over the sentence and
a linear-chain ``CRF`` trained with the forward algorithm and decoded with
Viterbi inside the graph. It runs in about a minute on a laptop CPU.

    python examples/bidirectional_tagger.py [--epochs 8]
"""

import argparse
import collections
import os
import sys

import keras
import numpy as np

import keras_seqmodels as ks
from keras_seqmodels.data import read_conllu

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURES = os.path.join(ROOT, "tests", "fixtures")


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
    w_in = keras.Input((None,), dtype="int32")
    c_in = keras.Input((None, None), dtype="int32")
    gold = keras.Input((None,), dtype="int32")
    words = keras.layers.Embedding(num_words, 32, mask_zero=True)(w_in)
    chars = ks.layers.CharacterEncoder(num_chars, 16, 16)(c_in)
    x = keras.layers.Concatenate()([words, chars])
    x = keras.layers.Bidirectional(keras.layers.LSTM(units, return_sequences=True))(x)
    potentials = keras.layers.Dense(num_tags)(x)
    crf = ks.layers.CRF(num_tags)
    train_model = keras.Model([w_in, c_in, gold], crf(potentials, tags=gold))
    tagger = keras.Model([w_in, c_in], crf(potentials))
    return train_model, tagger


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=8)
    parser.add_argument("--limit", type=int, default=0, help="first N training sentences")
    args = parser.parse_args(argv)
    keras.utils.set_random_seed(0)
    train = read_conllu(os.path.join(FIXTURES, "ewt_train_sample.conllu"))
    dev = read_conllu(os.path.join(FIXTURES, "ewt_dev_sample.conllu"))
    if args.limit:
        train = train[: args.limit]
    counts = collections.Counter(w.lower() for ws, _ in train for w in ws)
    words = {w: i + 2 for i, w in enumerate(sorted(counts))}
    chars = {c: i + 2 for i, c in enumerate(sorted({c for ws, _ in train for w in ws for c in w}))}
    tags = {t: i for i, t in enumerate(sorted({t for _, ts in train + dev for t in ts}))}
    train_model, tagger = build(len(words) + 2, len(chars) + 2, len(tags))
    train_model.compile(keras.optimizers.Adam(5e-3), loss=None)
    w, c, y = encode(train, words, chars, tags)
    history = train_model.fit([w, c, y], epochs=args.epochs, batch_size=16, verbose=0)
    dw, dc, dy = encode(dev, words, chars, tags)
    pred = np.asarray(tagger.predict([dw, dc], verbose=0))
    real = dw > 0
    accuracy = float((pred == dy)[real].mean())
    majority = collections.Counter(t for _, ts in train for t in ts).most_common(1)[0][0]
    baseline = float((dy == tags[majority])[real].mean())
    print(f"train loss {history.history['loss'][0]:.2f} -> {history.history['loss'][-1]:.2f}")
    print(f"dev UPOS accuracy {accuracy:.3f} (most-frequent-tag baseline {baseline:.3f})")
    return {"accuracy": accuracy, "baseline": baseline, "loss": history.history["loss"]}


if __name__ == "__main__":
    main(sys.argv[1:])
