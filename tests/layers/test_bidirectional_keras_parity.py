"""ks.layers.Bidirectional equals keras.layers.Bidirectional (same weights) under masks.

For Keras's own LSTM / GRU / SimpleRNN and the package's Recurrent, with
return_sequences True and False, right-padded masks and masks with holes.
"""

import keras
import numpy as np
import pytest
from keras import ops

import keras_seqmodels as ks

MASKS = {
    "right_padded": np.array(
        [[1, 1, 1, 1, 1, 1], [1, 1, 1, 0, 0, 0], [1, 0, 0, 0, 0, 0], [1, 1, 1, 1, 1, 0]], bool),
    # Holes inside rows, a left-padded row, and padding after a hole.
    "holes": np.array(
        [[1, 0, 1, 1, 0, 1], [0, 0, 1, 1, 1, 1], [1, 1, 0, 1, 0, 0], [1, 1, 1, 1, 1, 1]], bool),
}
KERAS_LAYERS = {
    "LSTM": keras.layers.LSTM,
    "GRU": keras.layers.GRU,
    "SimpleRNN": keras.layers.SimpleRNN,
}


def batch(mask, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(mask.shape + (3,)).astype("float32")
    x[~mask] = 50.0  # garbage at masked steps: any leak shows
    return x


def compare(ours, theirs, x, mask):
    ours.build(x.shape)
    theirs.build(x.shape)
    rng = np.random.default_rng(7)
    assert len(ours.weights) == len(theirs.weights)
    for src, dst in zip(ours.weights, theirs.weights):
        value = rng.uniform(-0.6, 0.6, src.shape).astype("float32")
        src.assign(value)
        dst.assign(value)
    got = ops.convert_to_numpy(ours(x, mask=mask))
    want = ops.convert_to_numpy(theirs(x, mask=mask))
    np.testing.assert_allclose(got, want, atol=2e-5)
    return got


@pytest.mark.parametrize("mask_kind", list(MASKS))
@pytest.mark.parametrize("return_sequences", [True, False])
@pytest.mark.parametrize("kind", list(KERAS_LAYERS))
def test_keras_layers_match_keras_bidirectional(kind, return_sequences, mask_kind):
    mask = MASKS[mask_kind]
    x = batch(mask)
    make = KERAS_LAYERS[kind]
    got = compare(
        ks.layers.Bidirectional(make(4, return_sequences=return_sequences)),
        keras.layers.Bidirectional(make(4, return_sequences=return_sequences)),
        x, mask,
    )
    if not return_sequences:
        # Both halves of every row carry information (the old failure: zeros).
        assert (np.abs(got[:, :4]).max(axis=1) > 1e-3).all()
        assert (np.abs(got[:, 4:]).max(axis=1) > 1e-3).all()


@pytest.mark.parametrize("mask_kind", list(MASKS))
@pytest.mark.parametrize("return_sequences", [True, False])
def test_package_recurrent_matches_keras_bidirectional_lstm(return_sequences, mask_kind):
    """The package's Recurrent(LSTMCell) against Keras's LSTM: the same weights and numbers."""
    mask = MASKS[mask_kind]
    x = batch(mask, seed=1)
    layer = ks.layers.Recurrent(ks.cells.LSTMCell(4), return_sequences=return_sequences)
    compare(
        ks.layers.Bidirectional(layer),
        keras.layers.Bidirectional(keras.layers.LSTM(4, return_sequences=return_sequences)),
        x, mask,
    )


@pytest.mark.parametrize("zero_output_for_mask", [True, False])
def test_user_setting_of_zero_output_for_mask_does_not_change_results(zero_output_for_mask):
    mask = MASKS["holes"]
    x = batch(mask, seed=2)
    compare(
        ks.layers.Bidirectional(
            keras.layers.GRU(4, zero_output_for_mask=zero_output_for_mask)),
        keras.layers.Bidirectional(keras.layers.GRU(4)),
        x, mask,
    )
