"""Training batches that change every epoch, for recipes that augment."""

import numpy as np


def epoch_batches(count, batch_size, seed, redraw, batch):
    """A ``keras.utils.PyDataset`` of ``ceil(count / batch_size)`` batches
    whose rows are reshuffled, and whose random augmentation is drawn
    again, at every epoch.

    Keras's ``fit`` shuffles only in-memory arrays; this gives the same to
    a recipe whose batches are made on the fly (random shifts, inserted
    empty memories), with one seeded generator for both draws.

    Args:
        count: number of training examples.
        batch_size: rows per batch (the last batch may be shorter).
        seed: seed of the generator; each epoch draws the row order first,
            then calls ``redraw``.
        redraw: ``redraw(rng)`` returns the epoch's augmentation (any
            value), drawn from ``rng``.
        batch: ``batch(rows, drawn)`` returns one ``(inputs, targets)``
            batch for the example indices ``rows``.

    Returns:
        A ``PyDataset``; its ``order`` and ``drawn`` hold the current
        epoch's row order and augmentation.

    Example:

    >>> data = epoch_batches(5, 2, 0, lambda rng: rng.integers(0, 9, 5),
    ...                      lambda rows, noise: (rows + noise[rows], rows))
    >>> len(data), sorted(int(r) for i in range(3) for r in data[i][1])
    (3, [0, 1, 2, 3, 4])
    """
    import keras

    rng = np.random.default_rng(seed)

    class EpochBatches(keras.utils.PyDataset):
        def __init__(self):
            super().__init__()
            self.on_epoch_end()

        def __len__(self):
            return -(-count // batch_size)

        def on_epoch_end(self):
            self.order = rng.permutation(count)
            self.drawn = redraw(rng)

        def __getitem__(self, i):
            return batch(self.order[i * batch_size : (i + 1) * batch_size], self.drawn)

    return EpochBatches()
