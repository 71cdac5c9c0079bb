"""Batch orders that keep a ``keras.utils.PyDataset`` of varying shapes usable.

On TensorFlow, ``fit`` turns a ``PyDataset`` into a ``tf.data`` pipeline whose
signature Keras infers from the dataset's first two batches
(``keras.src.trainers.data_adapters.data_adapter_utils.NUM_BATCHES_FOR_TENSOR_SPEC``):
a dimension on which those two agree is fixed, and a later batch that differs
there (a wider length bucket, fewer rows for long sentences) stops training
with a shape error. ``vary_first_two`` reorders a list of batches so that the
first two differ in every dimension that varies anywhere in the list. New
relative to Keras: Keras has no way to pass the signature of a ``PyDataset``.
"""

import numpy as np


def _shapes(batch):
    if isinstance(batch, dict):
        return [s for key in sorted(batch) for s in _shapes(batch[key])]
    if isinstance(batch, (tuple, list)):
        return [s for item in batch for s in _shapes(item)]
    return [np.shape(batch)]


def vary_first_two(batches):
    """``batches`` (a list) with two batches moved to the front whose shapes
    differ in every dimension where any two batches differ.

    Args:
        batches: a list of batches, each a nested tuple / list / dict of
            arrays with the same structure.

    Returns:
        A new list, the same batches; the rest keep their order. Unchanged
        if fewer than two batches or no dimension varies; if no pair
        differs everywhere, the pair that differs in the most varying
        dimensions leads.

    Example:

    >>> import numpy as np
    >>> b = [np.zeros((32, 16)), np.zeros((32, 16)), np.zeros((8, 128))]
    >>> [x.shape for x in vary_first_two(b)]
    [(32, 16), (8, 128), (32, 16)]
    """
    batches = list(batches)
    if len(batches) < 2:
        return batches
    shapes = [_shapes(b) for b in batches]
    varying = [
        (k, d)
        for k, first in enumerate(shapes[0])
        for d in range(len(first))
        if len({s[k][d] for s in shapes}) > 1
    ]
    if not varying:
        return batches
    keys = [tuple(s[k][d] for k, d in varying) for s in shapes]
    distinct = list(dict.fromkeys(keys))  # one representative shape each
    best, pair = -1, None
    for a in range(len(distinct)):
        for b in range(a + 1, len(distinct)):
            score = sum(x != y for x, y in zip(distinct[a], distinct[b]))
            if score > best:
                best, pair = score, (distinct[a], distinct[b])
        if best == len(varying):
            break
    i = keys.index(pair[0])
    j = keys.index(pair[1])
    return [batches[i], batches[j]] + [b for k, b in enumerate(batches) if k not in (i, j)]
