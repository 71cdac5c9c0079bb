"""``--smoke``: a test of a recipe's whole path in seconds, the same for every model.

A recipe's ``load_data`` gives a few generated or fixture examples when
``smoke`` is set; the framework then bounds the run whatever the model's
defaults are: ``EPOCHS`` epochs (unless ``--epochs`` is given) of at most
``BATCHES`` training and validation batches each. A smoke split with no
batch at all is a recipe error, said at once with the sizes that cause it.
"""

EPOCHS = 2
BATCHES = 3


def cut(name, split, data, batch_size):
    """``data`` (``load_data``'s form) bounded to ``BATCHES`` batches.

    Arrays (a tuple, batched by the framework with ``batch_size``) keep their
    first ``BATCHES * batch_size`` rows; a ``PyDataset`` shows its first
    ``BATCHES`` batches (drawn from it at each step, so its epoch hooks and
    any attribute a callback sets on it still act); a ``tf.data.Dataset``
    takes ``BATCHES``.

    Raises:
        ValueError: the split has no batch, naming the model, the split and
            its size.
    """
    import keras

    if data is None:
        return None
    if isinstance(data, tuple):
        rows = len(keras.tree.flatten(data[0])[0])
        if rows == 0:
            raise _empty(name, split, "0 rows")
        keep = BATCHES * batch_size
        return tuple(keras.tree.map_structure(lambda a: a[:keep], part) for part in data)
    if isinstance(data, keras.utils.PyDataset):
        if len(data) == 0:
            raise _empty(name, split, "a PyDataset of length 0")
        # The first batches, in the recipe's order: a recipe may order them
        # for Keras (its tf.data signature is read from the first two).
        return _first_batches(data, list(range(min(len(data), BATCHES))))
    if hasattr(data, "take"):  # a tf.data.Dataset
        return data.take(BATCHES)
    return data


def _empty(name, split, what):
    return ValueError(
        f"{name}: the --smoke {split} data is {what}: the recipe's smoke examples do "
        "not fill one batch at these options (--batch-size and the model's sizes); "
        "the recipe's load_data must give at least one batch with smoke=True"
    )


def _first_batches(source, indices):
    """The batches ``indices`` of the ``PyDataset`` ``source``, in order."""
    import keras

    class FirstBatches(keras.utils.PyDataset):
        def __len__(self):
            return len(indices)

        def __getitem__(self, index):
            if index >= len(indices):
                raise IndexError(index)
            return source[indices[index]]

        def on_epoch_begin(self):
            source.on_epoch_begin()

        def on_epoch_end(self):
            source.on_epoch_end()

    return FirstBatches()
