"""``sst-treelstm``: a sentence or a bracketed tree in, a sentiment label out."""

from keras_seqmodels.zoo.task import InputError, Task


class SentimentTask(Task):
    """Five-class sentence sentiment with a Tree-LSTM.

    An input starting with ``(`` is a bracketed PTB/SST tree (labels
    ignored); other text is tokenised PTB-style and given a balanced binary
    tree (less accurate than a treebank parse). Each answer is a dict
    ``{"label": str, "probabilities": {label: float}}`` over ``very
    negative``, ``negative``, ``neutral``, ``positive``, ``very positive``.
    """

    def predict_batch(self, inputs, batch_size=64):
        from keras_seqmodels.trees.serving import root_probabilities
        from keras_seqmodels.trees.text import label_names, text_to_tree

        inputs = [str(s) for s in inputs]
        for i, text in enumerate(inputs):
            if not text.strip():
                raise InputError(
                    self.name,
                    f"text {i} is empty (nothing to classify)",
                    "a sentence or a bracketed tree",
                )
        probs = root_probabilities(self.model, [text_to_tree(str(s)) for s in inputs],
                                   batch_size=batch_size)  # fmt: skip
        names = label_names(probs.shape[1])
        return [
            {
                "label": names[int(p.argmax())],
                "probabilities": {n: float(v) for n, v in zip(names, p)},
            }
            for p in probs
        ]


TASK = SentimentTask
