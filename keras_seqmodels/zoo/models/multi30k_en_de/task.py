"""``multi30k-en-de``: English sentences in, German strings out."""

from keras_seqmodels.zoo.task import Task


class TranslationTask(Task):
    """English to German translation (``model`` is a ``seq2seq.Translator``).

    Example:

    >>> task = TranslationTask("multi30k-en-de")   # doctest: +SKIP
    >>> task.predict("A man is riding a bicycle.")  # doctest: +SKIP
    'Ein Mann fährt Fahrrad.'
    """

    def predict_batch(self, inputs, beam_size=None, batch_size=32, progress=None):
        """Translations of a list of sentences (see ``Translator.translate``).

        The search is compiled at the first call of a beam size and kept on
        the model, so later calls (any sentences, any batch) reuse it.
        """
        return self.model.translate(list(inputs), beam_size, batch_size, progress)

    def predict(self, inputs, beam_size=None):
        """German translations: a ``str`` for a ``str``, a list for a list.

        Args:
            inputs: an English sentence or a list of them.
            beam_size: beam width (default: the model's, 5); 1 is greedy.
        """
        if isinstance(inputs, str):
            return self.predict_batch([inputs], beam_size)[0]
        return self.predict_batch(list(inputs), beam_size) if len(inputs) else []


TASK = TranslationTask
