"""A tree classifier that keeps its label set: per-node logits in, labels out."""

import keras
import numpy as np

from keras_seqmodels.utils import bounds


@keras.saving.register_keras_serializable(package="keras_seqmodels")
class TreeClassifier(keras.Model):
    """A tree network together with the labels its output columns stand for.

    ``TreeClassifier([tokens, children, levels]) -> logits (B, N, classes)``:
    the call is the wrapped network's (a tree classifier as
    ``keras_seqmodels.trees.serving`` defines it: token strings per node,
    ``children (B, N, 2)``, ``levels (B, N)``), so everything that takes the
    zoo's sentiment tree network takes this model too. What it adds is
    the label set of the training file (column ``i`` of the logits is
    ``labels[i]``, any integers or strings, not only SST's 0-4) and the
    lower-casing of tokens, kept in the model's config: a saved ``.keras``
    file and an exported SavedModel need nothing else to name their answers.

    ``predict_labels`` and ``predict_probabilities`` take bracketed trees,
    ``Tree`` objects or plain sentences (tokenised PTB-style and given a
    balanced binary tree, as ``seqmodels sentiment`` does).
    ``train_tree_classifier`` (also ``TreeClassifier.from_tree_file``) trains
    one from a file of bracketed trees; ``seqmodels export model.keras DIR``
    or ``keras_seqmodels.trees.serving.export_sentiment_savedmodel`` exports
    it. String tensors exist on the TensorFlow backend only, so the model
    runs there.

    Args:
        network: a Keras model ``[tokens, children, levels] -> logits``
            (``keras_seqmodels.trees.build_tree_network`` makes one).
        labels: the label of each output column (distinct ints or strings).
        lower: whether tokens are lower-cased before the network sees them
            (the network's vocabulary was built so).

    Call arguments:
        inputs: ``[tokens (B, N) string, children (B, N, 2) int32,
            levels (B, N) int32]`` (``keras_seqmodels.trees.encode``).
        training: passed to the network (dropout).

    Returns:
        Per-node logits ``(B, N, len(labels))``.

    Example:

    >>> from keras_seqmodels.trees import TreeClassifier, build_tree_network
    >>> net = build_tree_network(["", "good", "bad"], num_classes=2,
    ...                          embedding_dim=4, units=4, dropout=0.0)
    >>> clf = TreeClassifier(net, labels=[-1, 1])
    >>> clf.predict_probabilities(["(1 (1 good) (0 fun))", "bad film"]).shape
    (2, 2)
    """

    def __init__(self, network, labels, lower=True, **kwargs):
        super().__init__(**kwargs)
        name = type(self).__name__
        if not isinstance(network, keras.Model) or len(network.inputs or []) != 3:
            raise ValueError(
                f"{name}: `network` must be a Keras model with 3 inputs (tokens, "
                "children, levels), such as build_tree_network returns. "
                f"Received: {type(network).__name__}"
            )
        labels = list(labels)
        if len(labels) < 2 or len(set(labels)) != len(labels):
            raise ValueError(
                f"{name}: `labels` must hold at least 2 distinct labels, one per "
                f"output column. Received: labels={labels}"
            )
        if not all(isinstance(x, (int, str)) and not isinstance(x, bool) for x in labels):
            raise ValueError(f"{name}: `labels` must be ints or strings. Received: labels={labels}")
        classes = network.outputs[0].shape[-1]
        if classes != len(labels):
            raise ValueError(
                f"{name}: the network has {classes} output columns but {len(labels)} "
                f"labels were given. Received: labels={labels}"
            )
        self.network = network
        self.labels = labels
        self.lower = bool(lower)

    def build(self, input_shape=None):
        self.built = True

    def call(self, inputs, training=None):
        return self.network(inputs, training=training)

    @property
    def _default_save_signature(self):
        # String inputs: the SavedModel signature is declared by the exporter.
        return None

    @property
    def label_names(self):
        """The labels as strings (``str(label)``), in output-column order."""
        return [str(x) for x in self.labels]

    def predict_probabilities(self, inputs, batch_size=64):
        """Root class probabilities ``(len(inputs), len(labels))``.

        Args:
            inputs: bracketed trees (labels in them are ignored), ``Tree``
                objects or plain sentences.
            batch_size: trees per model call.
        """
        from keras_seqmodels.trees.serving import root_probabilities

        return root_probabilities(self, _as_trees(inputs), batch_size, lower=self.lower)

    def predict_labels(self, inputs, batch_size=64):
        """The predicted root label of each input (elements of ``labels``).

        Args:
            inputs: bracketed trees, ``Tree`` objects or plain sentences.
            batch_size: trees per model call.
        """
        probs = self.predict_probabilities(inputs, batch_size)
        return [self.labels[i] for i in np.argmax(probs, axis=1)]

    @classmethod
    def from_tree_file(cls, train_path, validation_path=None, **options):
        """``train_tree_classifier(train_path, validation_path, **options)``."""
        from keras_seqmodels.trees.training import train_tree_classifier

        return train_tree_classifier(train_path, validation_path, **options)

    def get_config(self):
        config = super().get_config()
        config.update(
            network=keras.saving.serialize_keras_object(self.network),
            labels=self.labels,
            lower=self.lower,
        )
        return config

    @classmethod
    def from_config(cls, config):
        bounds.check_config(cls.__name__, config)
        config = dict(config)
        config["network"] = keras.saving.deserialize_keras_object(config["network"])
        return cls(**config)


def _as_trees(inputs):
    from keras_seqmodels.trees.tree import Tree

    if isinstance(inputs, (str, Tree)):
        raise TypeError(
            "TreeClassifier: give a list of trees or sentences, not one. "
            f"Received: {type(inputs).__name__}"
        )
    out = []
    for x in inputs:
        tree = x if isinstance(x, Tree) else _text_to_tree(str(x))
        # Labels in the input are not read (and may be strings).
        out.append(tree.with_values(labels=[None] * len(tree)))
    return out


def _text_to_tree(text):
    from keras_seqmodels.trees.text import text_to_tree

    return text_to_tree(text)
