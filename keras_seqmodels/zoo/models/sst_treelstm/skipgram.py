"""Skip-gram pre-training of the sst-treelstm word embedding, by ``model.fit``.

Skip-gram with negative sampling (Mikolov et al. 2013) on an id corpus
(``-1`` ends a sentence): centre and context words within ``window`` of each
other in one sentence, frequent words subsampled (t = 1e-4), ``negatives``
noise words per pair drawn from counts ** 0.75. A two-embedding Keras model
scores the pairs (logits of the true context and of the noise words) and is
trained with a binary cross-entropy for a wall-clock budget; its input
vectors start the tree model's embedding.
"""

import time

import numpy as np


def corpus_ids(sentences, words):
    """In-vocabulary ids of ``sentences`` (token lists) as one array, word
    ``words[i]`` -> ``i + 1`` (the ``StringLookup`` ids; 0 is out of
    vocabulary), ``-1`` after each sentence; ``""`` is skipped."""
    index = {w: i + 1 for i, w in enumerate(words)}
    out = []
    for sent in sentences:
        out.extend(index[t] for t in sent if t in index and t != "")
        out.append(-1)
    return np.array(out, np.int32)


def text_sentences(path):
    """Lower-cased token lists of a text file: a ``.conllu`` file's FORM
    column (one list per sentence), else whitespace tokens per line."""
    with open(path, encoding="utf-8") as f:
        if not path.endswith(".conllu"):
            return [line.lower().split() for line in f]
        out, sent = [], []
        for line in f:
            cols = line.rstrip("\n").split("\t")
            if len(cols) == 10 and cols[0].isdigit():  # not ranges 1-2 or empty nodes 1.1
                sent.append(cols[1].lower())
            elif not line.strip() and sent:
                out.append(sent)
                sent = []
        return out + ([sent] if sent else [])


def pair_batches(corpus, vocab_size, batch, steps, seed, window=5, negatives=5):
    """A ``PyDataset`` of ``steps`` random batches ``((centre, context,
    noise), targets, weights)``; weight 0 marks a pair that crosses a
    sentence end or was subsampled."""
    import keras

    corpus = np.asarray(corpus)
    sentence = np.cumsum(corpus < 0)
    counts = np.bincount(corpus[corpus >= 0], minlength=vocab_size).astype(np.float64)
    freq = np.maximum(counts / counts.sum(), 1e-12)
    keep = np.minimum(1.0, np.sqrt(1e-4 / freq) + 1e-4 / freq)
    noise = counts**0.75
    table = np.random.default_rng(seed).choice(vocab_size, 2_000_000, p=noise / noise.sum())
    valid = np.flatnonzero(corpus >= 0)
    targets = np.zeros((batch, 1 + negatives), "float32")
    targets[:, 0] = 1.0

    class Pairs(keras.utils.PyDataset):
        rng = np.random.default_rng(seed)

        def __len__(self):
            return steps

        def __getitem__(self, i):
            rng = self.rng
            c_pos = valid[rng.integers(0, len(valid), batch)]
            offset = rng.integers(1, window + 1, batch) * rng.choice([-1, 1], batch)
            o_pos = np.clip(c_pos + offset, 0, len(corpus) - 1)
            c, o = corpus[c_pos], corpus[o_pos]
            w = (
                (o >= 0)
                & (sentence[c_pos] == sentence[o_pos])
                & (rng.random(batch) < keep[c])
                & (rng.random(batch) < keep[np.maximum(o, 0)])
            )
            n = table[rng.integers(0, len(table), (batch, negatives))]
            inputs = (c, np.maximum(o, 0).astype(np.int32), n.astype(np.int32))
            return inputs, targets, w.astype("float32")

    return Pairs()


def build_scorer(vocab_size, dim, seed):
    """``(centre, context, noise)`` ids -> logits ``(batch, 1 + negatives)``."""
    import keras

    centre = keras.Input((), dtype="int32", name="centre")
    context = keras.Input((), dtype="int32", name="context")
    noise = keras.Input((None,), dtype="int32", name="noise")
    w_in = keras.layers.Embedding(
        vocab_size, dim, name="input_vectors",
        embeddings_initializer=keras.initializers.RandomUniform(-0.5 / dim, 0.5 / dim, seed),
    )  # fmt: skip
    w_out = keras.layers.Embedding(vocab_size, dim, name="output_vectors",
                                   embeddings_initializer="zeros")  # fmt: skip
    u = w_in(centre)
    candidates = keras.layers.Concatenate(axis=1)(
        [keras.layers.Reshape((1, dim))(w_out(context)), w_out(noise)]
    )
    logits = keras.layers.Dot(axes=(2, 1))([candidates, u])
    return keras.Model([centre, context, noise], logits, name="skipgram")


def train_vectors(corpus, vocab_size, dim, seconds, seed, lr=1e-2, batch=16384, steps=None):
    """Input vectors ``(vocab_size, dim)`` after ``seconds`` of training
    (or ``steps`` batches, whichever comes first)."""
    import keras

    class Budget(keras.callbacks.Callback):
        def on_train_begin(self, logs=None):
            self.start = time.monotonic()

        def on_train_batch_end(self, batch, logs=None):
            if time.monotonic() - self.start > seconds:
                self.model.stop_training = True

    scorer = build_scorer(vocab_size, dim, seed)
    scorer.compile(keras.optimizers.Adam(lr),
                   keras.losses.BinaryCrossentropy(from_logits=True))  # fmt: skip
    data = pair_batches(corpus, vocab_size, batch, steps or 10**7, seed)
    from keras_seqmodels.training import loop

    loop.fit(scorer, data, epochs=1, callbacks=[Budget()], verbose=0)
    return np.asarray(scorer.get_layer("input_vectors").embeddings)
