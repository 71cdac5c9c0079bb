"""``ud-ewt-upos``: tokenised English sentences in, one UPOS tag per token out."""

from keras_seqmodels.zoo.task import Task


class TaggingTask(Task):
    """Universal POS tagging of whitespace-tokenised sentences.

    ``predict("The old man the boats .")`` gives ``["DET", "ADJ", ...]``, one
    of the 17 UPOS tags per whitespace-separated token (``[]`` for a blank
    sentence).
    """

    def predict_batch(self, inputs):
        from keras_seqmodels.cli.tag_commands import tag

        inputs = [str(s) for s in inputs]
        tagged = iter(tag(inputs, model=self.model))
        return [[t for _, t in next(tagged)] if s.strip() else [] for s in inputs]


TASK = TaggingTask
