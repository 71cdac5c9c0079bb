"""Quick start: a bidirectional LSTM part-of-speech tagger in under a minute.

Trains ``keras_seqmodels`` LSTM cells (run by the package's ``Recurrent``
runner, wrapped in ``keras.layers.Bidirectional``) on 2,000 sentences of UD
English EWT and prints the UPOS accuracy on the dev set. Without the data
directory it falls back to the small EWT sample committed under
``tests/fixtures``.

    python examples/quickstart.py [--data-dir ../shared/data] [--sentences 2000]
"""

import argparse
import os
import time

import keras
import numpy as np

import keras_seqmodels as ks

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_DATA = os.path.join(HERE, "..", "..", "shared", "data")


def encode(sentences, word_index, tag_index, max_len):
    x = np.zeros((len(sentences), max_len), "int32")
    y = np.zeros((len(sentences), max_len), "int32")
    for i, (words, tags) in enumerate(sentences):
        for j, (w, t) in enumerate(zip(words[:max_len], tags[:max_len])):
            x[i, j] = word_index.get(w.lower(), 1)
            y[i, j] = tag_index[t]
    return x, y


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default=DEFAULT_DATA)
    parser.add_argument("--sentences", type=int, default=2000)
    parser.add_argument("--epochs", type=int, default=4)
    args = parser.parse_args()

    ewt = os.path.join(args.data_dir, "ud_english_ewt")
    if os.path.isdir(ewt):
        train = ks.data.read_conllu(os.path.join(ewt, "en_ewt-ud-train.conllu"))
        dev = ks.data.read_conllu(os.path.join(ewt, "en_ewt-ud-dev.conllu"))
        source = "UD English EWT (train subset / dev)"
    else:
        fixtures = os.path.join(HERE, "..", "tests", "fixtures")
        train = ks.data.read_conllu(os.path.join(fixtures, "ewt_train_sample.conllu"))
        dev = ks.data.read_conllu(os.path.join(fixtures, "ewt_dev_sample.conllu"))
        source = "EWT sample in tests/fixtures"
    train = train[: args.sentences]

    counts = {}
    for words, _ in train:
        for w in words:
            counts[w.lower()] = counts.get(w.lower(), 0) + 1
    vocab = [w for w, c in counts.items() if c >= 2]
    word_index = {w: i + 2 for i, w in enumerate(vocab)}  # 0 pad, 1 unknown
    tagset = sorted({t for _, tags in train + dev for t in tags})
    tag_index = {t: i + 1 for i, t in enumerate(tagset)}  # 0 = padding
    max_len = 64
    x_train, y_train = encode(train, word_index, tag_index, max_len)
    x_dev, y_dev = encode(dev, word_index, tag_index, max_len)

    keras.utils.set_random_seed(0)
    inputs = keras.Input((None,), dtype="int32")
    h = keras.layers.Embedding(len(word_index) + 2, 64, mask_zero=True)(inputs)
    h = keras.layers.Bidirectional(
        ks.layers.Recurrent(ks.cells.LSTMCell(64), return_sequences=True)
    )(h)
    outputs = keras.layers.Dense(len(tag_index) + 1, activation="softmax")(h)
    model = keras.Model(inputs, outputs)
    model.compile(
        optimizer=keras.optimizers.Adam(1e-2, global_clipnorm=5.0),
        loss="sparse_categorical_crossentropy",
    )
    start = time.time()
    model.fit(x_train, y_train, batch_size=32, epochs=args.epochs, verbose=2)
    pred = model.predict(x_dev, verbose=0).argmax(-1)
    real = y_dev > 0
    accuracy = float((pred[real] == y_dev[real]).mean())
    print(f"data: {source}; {len(train)} training sentences, {len(dev)} dev")
    print(f"training time: {time.time() - start:.1f} s")
    print(f"UPOS accuracy (dev): {accuracy:.4f}")


if __name__ == "__main__":
    main()
