"""A tree classifier that keeps its label set: per-node logits in, labels out."""

import keras
import numpy as np

from keras_seqmodels.training import loop
from keras_seqmodels.trees import training
from keras_seqmodels.utils import bounds, serialization
from keras_seqmodels.utils import validation as checks


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
    or ``keras_seqmodels.export.trees.export_sentiment_savedmodel`` exports
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
        return cls(**serialization.deserialize_nested(config, ("network",)))


def train_tree_classifier(
    train_path,
    validation_path=None,
    *,
    epochs=10,
    batch_size=25,
    embedding_dim=100,
    units=150,
    dropout=0.5,
    learning_rate=2e-3,
    min_count=2,
    lower=True,
    callbacks=None,
    seed=0,
    verbose="auto",
    work_dir=None,
):
    """Train a Tree-LSTM ``TreeClassifier`` on a file of labelled bracketed trees.

    The vocabulary (words seen ``min_count`` times; rarer ones share the
    unknown id) and the label set (every distinct node label of the file,
    sorted; any integers, or any strings) come from the training file.
    Every labelled node of every tree is a training example (cross-entropy
    on per-node logits, Tai et al. 2015), batched ``batch_size`` whole trees
    at a time and reshuffled each epoch; ``root_accuracy`` is reported for
    training and, with ``validation_path``, ``val_loss`` (all nodes) and
    ``val_root_accuracy`` each epoch. Validation nodes with a label the
    training file never had are left out of both (a warning gives their
    number).

    Args:
        train_path: UTF-8 file, one bracketed tree per line, labels on the
            nodes (``read_labelled_trees``).
        validation_path: optional file of held-out trees in the same form.
        epochs, batch_size, learning_rate: training (Adam).
        embedding_dim, units, dropout: model (``build_tree_network``).
        min_count: occurrences a word needs to get its own id.
        lower: lower-case tokens (kept in the model, applied when it
            predicts or is exported).
        callbacks: Keras callbacks for ``fit`` (e.g. ``EarlyStopping`` on
            ``val_root_accuracy``).
        seed: seed of the weights and the batch order.
        verbose: ``fit``'s verbosity.
        work_dir: optional folder for the run's files
            (``keras_seqmodels.training.loop.fit``, as ``seqmodels train``
            keeps them): ``best.keras``, the classifier at its best
            ``val_loss`` (``loss`` without ``validation_path``), ``history.csv``, and a
            backup from which the same call, rerun after a kill, resumes at
            the interrupted epoch.

    Returns:
        A trained ``TreeClassifier``; ``classifier.history`` is the Keras
        ``History`` of the training. Save it with
        ``classifier.save("x.keras")``.

    Raises:
        FileNotFoundError, ValueError: as ``read_labelled_trees``, naming
            this function, the file and the line; ``ValueError`` too for
            fewer than 2 labels or another backend than TensorFlow.

    Example (TensorFlow backend):

    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "train.txt")
    >>> _ = open(path, "w").write("(1 (1 good) (1 fun))\\n(0 (0 dull) (1 fun))\\n")
    >>> clf = train_tree_classifier(path, epochs=1, embedding_dim=4, units=4,
    ...                             min_count=1, verbose=0)
    >>> clf.labels, clf.predict_probabilities(["(1 (1 good) (0 dull))"]).shape
    ([0, 1], (1, 2))
    """
    from keras_seqmodels.trees.dataset import tree_dataset
    from keras_seqmodels.trees.network import build_tree_network, build_vocabulary
    from keras_seqmodels.trees.root_accuracy import RootAccuracy

    name = "train_tree_classifier"
    if keras.backend.backend() != "tensorflow":
        raise ValueError(
            f"{name}: the model takes token strings (StringLookup inside) and the tree "
            "batches are tf.data, so it trains on the TensorFlow backend only. "
            f"Received: KERAS_BACKEND={keras.backend.backend()!r}"
        )
    checks.check_positive_ints(
        name, epochs=epochs, batch_size=batch_size, embedding_dim=embedding_dim, units=units,
        min_count=min_count,
    )  # fmt: skip
    checks.check_rate(name, "dropout", dropout)
    checks.check_positive_float(name, "learning_rate", learning_rate)
    train = training.read_labelled_trees(train_path, name)
    validation = (
        None if validation_path is None else training.read_labelled_trees(validation_path, name)
    )
    labels = sorted({x for t in train for x in t.labels if x is not None})
    if len(labels) < 2:
        raise ValueError(
            f"{name}: {train_path} has only the label {labels}; a classifier needs at "
            "least 2 distinct node labels"
        )
    index = {x: i for i, x in enumerate(labels)}
    train = [training.relabel(t, index, lower) for t in train]
    keras.utils.set_random_seed(seed)
    network = build_tree_network(
        build_vocabulary(train, min_count), len(labels), embedding_dim, units, dropout
    )
    classifier = TreeClassifier(network, labels, lower=lower)
    classifier.compile(
        optimizer=keras.optimizers.Adam(learning_rate),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True, ignore_class=-1),
        metrics=[RootAccuracy()],
    )
    val_data = None
    if validation is not None:
        unseen = sum(x is not None and x not in index for t in validation for x in t.labels)
        if unseen:
            import warnings

            warnings.warn(
                f"{name}: {unseen} node(s) of {validation_path} have labels that "
                f"{train_path} does not have ({labels}); they are left out of validation",
                stacklevel=2,
            )
        val_data = tree_dataset([training.relabel(t, index, lower) for t in validation], batch_size)
    loop.fit(
        classifier,
        tree_dataset(train, batch_size, shuffle=True, seed=seed),
        validation_data=val_data,
        shuffle=False,  # the dataset reshuffles itself
        epochs=epochs,
        callbacks=callbacks,
        verbose=verbose,
        work_dir=work_dir,
        monitor=("val_loss" if val_data is not None else "loss", "min"),
    )
    return classifier


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
