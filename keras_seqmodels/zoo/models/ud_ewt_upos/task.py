"""``ud-ewt-upos``: English sentences in, one UPOS tag per token out."""

from keras_seqmodels.zoo.task import Task


class TaggingTask(Task):
    """Universal POS tagging of English sentences.

    ``predict("I can't eat butter!")`` gives one of the 17 UPOS tags per token
    of ``tokenize(text)`` (UD-style: punctuation and clitics split off, ``I
    ca n't eat butter !`` -> ``["PRON", "AUX", "PART", "VERB", "NOUN",
    "PUNCT"]``); ``pretokenized=True`` splits on whitespace only. A blank
    sentence gives ``[]``.
    """

    @staticmethod
    def tokenize(text, pretokenized=False):
        """The tokens ``predict`` tags, in order."""
        from keras_seqmodels.data.tokenize import tokenize

        return str(text).split() if pretokenized else tokenize(str(text))

    def predict_batch(self, inputs, pretokenized=False):
        from keras_seqmodels.tagging.text import tag_sentences

        inputs = [str(s) for s in inputs]
        tagged = iter(tag_sentences(self.model, inputs, pretokenized))
        return [[t for _, t in next(tagged)] if s.strip() else [] for s in inputs]

    def predict(self, inputs, pretokenized=False):
        """UPOS tags: a list per sentence (one sentence: one list)."""
        if isinstance(inputs, str):
            return self.predict_batch([inputs], pretokenized)[0]
        return self.predict_batch(list(inputs), pretokenized) if len(inputs) else []


TASK = TaggingTask
