"""vary_first_two: a PyDataset of varying shapes trains on TensorFlow."""

import keras
import numpy as np
import pytest

from keras_seqmodels.training.batch_order import vary_first_two


def _batch(rows, width, value=0.0):
    x = np.full((rows, width), value, "float32")
    return x, x.sum(-1, keepdims=True)


def test_first_two_differ_in_every_varying_dimension():
    batches = [_batch(32, 16), _batch(32, 16, 1), _batch(32, 32), _batch(8, 128)]
    ordered = vary_first_two(batches)
    assert [b[0].shape for b in ordered[:2]] == [(32, 16), (8, 128)]
    assert sorted(id(b) for b in ordered) == sorted(id(b) for b in batches)
    # Nothing varies, or too few: unchanged.
    same = [_batch(4, 4), _batch(4, 4)]
    assert vary_first_two(same) == same and vary_first_two(same[:1]) == same[:1]
    # No pair differs everywhere: the pair differing most leads.
    partial = [_batch(32, 16), _batch(32, 32), _batch(16, 16)]
    assert [b[0].shape for b in vary_first_two(partial)[:2]] == [(32, 32), (16, 16)]


class _Widths(keras.utils.PyDataset):
    def __init__(self, batches):
        super().__init__()
        self.batches = batches

    def __len__(self):
        return len(self.batches)

    def __getitem__(self, i):
        return self.batches[i]


def _fit(batches):
    inputs = keras.Input((None,))
    model = keras.Model(inputs, keras.layers.Lambda(
        lambda x: keras.ops.sum(x, -1, keepdims=True) * 0.5)(inputs))  # fmt: skip
    model.compile("sgd", "mse")
    model.fit(_Widths(batches), epochs=1, verbose=0)


@pytest.mark.tf_only
def test_pydataset_of_varying_shapes_trains_once_reordered():
    if keras.backend.backend() != "tensorflow":
        pytest.skip("the signature is inferred on TensorFlow's tf.data path")
    batches = [_batch(32, 16), _batch(32, 16), _batch(8, 128), _batch(32, 32)]
    with pytest.raises(Exception, match="shape"):
        _fit(batches)  # Keras fixes (32, 16) from the first two
    _fit(vary_first_two(batches))
