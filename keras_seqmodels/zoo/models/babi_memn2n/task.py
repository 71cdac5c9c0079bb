"""``babi-memn2n``: a story and a question in, a one-word answer out."""

import json
import re

from keras_seqmodels.zoo import api
from keras_seqmodels.zoo.task import InputError, Task

EXPECTED = 'a (story, question) pair or {"story": ..., "question": ...}, both non-empty text'


class QuestionAnsweringTask(Task):
    """bAbI question answering with an ensemble of end-to-end memory networks.

    An input is a pair ``(story, question)`` (or a dict with those keys):
    ``story`` is the statements, oldest first, each ending with ``.``,
    ``!``, ``?`` or a newline (``"Mary moved to the bathroom. John went to
    the hallway."``); ``question`` is ``"Where is Mary?"``. The answer is a
    string (``"bathroom"``). Preprocessing is that of the SavedModel export:
    lower-cased ``[a-z0-9]`` tokens, unknown words as ``<unk>``, the most
    recent statements that fit the memory.
    """

    input_kind = "pair"
    input_expected = EXPECTED

    def __init__(self, name, model=None, vocabulary=None):
        super().__init__(name, model)
        if vocabulary is None:
            vocabulary = export_defaults(name)["vocabulary"]
        self.vocabulary = [str(w) for w in vocabulary]
        sizes = [getattr(layer, "memory_size", None) for layer in self.model.layers]
        self.memory_size = next(s for s in sizes if s)

    def is_single(self, inputs):
        # A bare string is one input too (refused in ``encode``: no story).
        return isinstance(inputs, (dict, str)) or (
            isinstance(inputs, tuple) and len(inputs) == 2 and isinstance(inputs[0], str)
        )

    def _pair(self, item):
        """``(story, question)`` of one input, or an ``InputError``."""
        if isinstance(item, dict):
            missing = [k for k in ("story", "question") if k not in item]
            if missing:
                raise InputError(self.name, f"no {' and no '.join(missing)}", EXPECTED)
            story, question = item["story"], item["question"]
        elif isinstance(item, (tuple, list)) and len(item) == 2:
            story, question = item
        else:
            got = "a string alone (no story)" if isinstance(item, str) else type(item).__name__
            raise InputError(self.name, got, EXPECTED)
        for part, text in (("story", story), ("question", question)):
            if not isinstance(text, str) or not text.strip():
                raise InputError(self.name, f"an empty or non-text {part}", EXPECTED)
        return story, question

    def encode(self, inputs):
        """Integer arrays ``[stories, queries]`` the Keras model takes."""
        from keras_seqmodels.data import babi
        from keras_seqmodels.export.question_answering import STATEMENT_END

        examples = []
        for item in inputs:
            story, question = self._pair(item)
            statements = [babi.tokenize(s) for s in re.split(STATEMENT_END, str(story))]
            examples.append(([s for s in statements if s], babi.tokenize(str(question)), ""))
        stories, queries, _ = babi.vectorize(
            examples, self.vocabulary, self.memory_size,
            self.model.inputs[0].shape[-1], self.model.inputs[1].shape[-1],
        )  # fmt: skip
        return [stories, queries]

    def predict_batch(self, inputs):
        import numpy as np

        scores = np.asarray(self.run_model(self.encode(inputs)))
        return [self.vocabulary[int(i)] for i in scores.argmax(-1)]

    def export_options(self, format="savedmodel"):
        if format != "savedmodel":
            return {}
        return {"vocabulary": self.vocabulary, "memory_size": self.memory_size}


def export_defaults(name):
    """The exporter's options beyond the model: the shipped vocabulary (asset ``vocab``)."""
    return {"vocabulary": json.loads(api.read_asset(name, "vocab"))["vocabulary"]}


TASK = QuestionAnsweringTask
