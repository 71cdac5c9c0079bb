"""``multi30k-en-de``: English sentences in, German strings out."""

import warnings

from keras_seqmodels.zoo.task import Task


class UnfamiliarInputWarning(UserWarning):
    """An input unlike the translator's training data (many unknown words or
    a low model confidence), or whose numbers or names the translation lost:
    its translation is likely wrong. ``predict(..., details=True)`` gives the
    figures behind it instead of the warning."""


def warning_text(details):
    """One line saying why a translation is doubtful (``""``: it is not).

    Args:
        details: one dict of ``predict(..., details=True)``.

    Example:

    >>> warning_text({"unfamiliar": True, "unknown_rate": 1.0, "confidence": -1.0,
    ...               "not_carried": ["2017"]})
    'unlike the training data (100% unknown words, confidence -1.00); lost: 2017'
    """
    parts = []
    if details["unfamiliar"]:
        parts.append(
            f"unlike the training data ({details['unknown_rate']:.0%} unknown words, "
            f"confidence {details['confidence']:.2f})"
        )
    if details["not_carried"]:
        parts.append("lost: " + " ".join(details["not_carried"]))
    return "; ".join(parts)


class TranslationTask(Task):
    """English to German translation (``model`` is a ``seq2seq.Translator``).

    Any text goes in: it is split into sentences, each translated and the
    translations joined; shouted or uncased sentences are re-cased first;
    numbers and names the model cannot translate are copied through (see
    docs/translation.md, "Input handling"). An input unlike the training data
    gives an ``UnfamiliarInputWarning``; ``details=True`` returns the figures
    instead.

    Example:

    >>> task = TranslationTask("multi30k-en-de")   # doctest: +SKIP
    >>> task.predict("A man is riding a bicycle.")  # doctest: +SKIP
    'Ein Mann fährt Fahrrad.'
    """

    warning_text = staticmethod(warning_text)

    def predict_batch(self, inputs, beam_size=None, batch_size=32, progress=None,
                      details=False):  # fmt: skip
        """Translations of a list of texts (see ``Translator.translate``).

        The search is compiled at the first call of a beam size and kept on
        the model, so later calls (any sentences, any batch) reuse it.

        Args:
            inputs: a list of English texts.
            beam_size: beam width (default: the model's, 5); 1 is greedy.
            batch_size: sentences per call of the search.
            progress: optional callable, given the number of texts finished.
            details: return one dict per text: ``translation``,
                ``unknown_rate`` (share of its words the model does not
                know), ``confidence`` (the model's lowest mean
                log-probability per output token over its sentences),
                ``unfamiliar`` (either beyond what the validation set
                shows) and ``not_carried`` (numbers and names the
                translation lost); without it, a list of strings and an
                ``UnfamiliarInputWarning`` per doubtful text.
        """
        out = self.model.translate(list(inputs), beam_size, batch_size, progress, details=True)
        if details:
            return out
        for number, item in enumerate(out):
            why = self.warning_text(item)
            if why:
                warnings.warn(
                    f"{self.name}: text {number}: {why}; its translation is likely wrong",
                    UnfamiliarInputWarning,
                    stacklevel=2,
                )
        return [item["translation"] for item in out]

    def predict(self, inputs, beam_size=None, details=False):
        """German translations: a ``str`` for a ``str``, a list for a list.

        Args:
            inputs: an English text (one or more sentences) or a list of them.
            beam_size: beam width (default: the model's, 5); 1 is greedy.
            details: dicts instead of strings (see ``predict_batch``).
        """
        if isinstance(inputs, str):
            return self.predict_batch([inputs], beam_size, details=details)[0]
        inputs = list(inputs)
        return self.predict_batch(inputs, beam_size, details=details) if inputs else []


TASK = TranslationTask
