"""``ptb-lstm``: text in, the next word's distribution out; ``generate`` continues it."""

from keras_seqmodels.zoo import api
from keras_seqmodels.zoo.task import Task


class LanguageModelTask(Task):
    """Word-level language model over PTB's 10,000 words.

    Text is lower-cased and split on whitespace; words outside the
    vocabulary become ``<unk>``; empty text is a sentence start (``<eos>``).
    ``predict(text)`` gives the most likely next words as a list of ``(word,
    probability)`` pairs, most likely first (``top_k`` of them; all when
    ``top_k=None``). ``generate(prompt)`` samples a continuation.
    """

    def __init__(self, name, model=None, vocabulary=None):
        super().__init__(name, model)
        if vocabulary is None:
            vocabulary = export_defaults(name)["vocabulary"]
        self.vocabulary = list(vocabulary)
        self._index = {w: i for i, w in enumerate(self.vocabulary)}

    def ids(self, text):
        """Word ids of ``text`` as the model reads them."""
        unk = self._index["<unk>"]
        ids = [self._index.get(w, unk) for w in str(text).lower().split()]
        return ids or [self._index["<eos>"]]

    def predict_batch(self, inputs, top_k=10):
        import numpy as np

        from keras_seqmodels.language_model.decoding import decoder_for

        decoder = decoder_for(self.model)
        out = []
        for text in inputs:
            logits = np.asarray(decoder.start(self.ids(text)), "float64")
            p = np.exp(logits - logits.max())
            p /= p.sum()
            order = np.argsort(-p, kind="stable")[: top_k or len(p)]
            out.append([(self.vocabulary[i], float(p[i])) for i in order])
        return out

    def predict(self, inputs, top_k=10):
        """Next-word distributions: a list of ``(word, probability)`` per text."""
        if isinstance(inputs, str):
            return self.predict_batch([inputs], top_k)[0]
        return self.predict_batch(list(inputs), top_k)

    def generate(self, prompt="", length=30, temperature=1.0, seed=None):
        """The prompt's continuation: ``length`` sampled words, as one string.

        Args:
            prompt: words to continue (may be empty: a sentence start).
            length: number of words to sample (> 0).
            temperature: > 0; lower is greedier.
            seed: integer seed of the sampler (same seed, same words).
        """
        from keras_seqmodels.language_model.decoding import sample

        if not isinstance(length, int) or length < 1:
            raise ValueError(f"generate: `length` must be a positive integer. Received: {length}")
        return " ".join(sample(self.model, self.vocabulary, str(prompt), length,
                               temperature, seed))  # fmt: skip

    def export_options(self, format="savedmodel"):
        if format != "savedmodel":
            return {}
        return {"vocabulary": self.vocabulary}


def export_defaults(name):
    """The exporter's options beyond the model: the shipped vocabulary (asset ``vocabulary``)."""
    text = api.read_asset(name, "vocabulary").decode("utf-8")
    return {"vocabulary": [w for w in text.split("\n") if w]}


TASK = LanguageModelTask
