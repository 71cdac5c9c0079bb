"""No NaN from finite inputs at extreme but legal values, for every cell.

10,000-step sequences whose rows are scaled by 1, 1e6, 1e15 and 1e37 (the
last is within a factor 10 of float32's largest value), through cells with
their default weights and with every weight multiplied by 100 (saturated
gates, recurrent spectral radius about 100). Outputs and states must be
finite, and bounded where the equations bound them. Runs through
``Model.predict`` (compiled loop) on either backend.
"""

import keras
import numpy as np
import pytest
from fuzz_record import record
from test_fuzz_recurrent import OTHER_CELLS, REFERENCE_CELLS, make_cell

STEPS = 10_000
SCALES = (1.0, 1e6, 1e15, 1e37)
# Cells whose every output and state is a convex mix of tanh values.
BOUNDED = {"ElmanCell", "GRUCell", "GatedCell"}


def long_inputs():
    x = np.random.default_rng(0).standard_normal((1, STEPS, 3))
    return np.concatenate([x * s for s in SCALES]).astype("float32")


def run(key, weight_scale):
    import keras_seqmodels as ks

    keras.utils.set_random_seed(0)
    inputs = keras.Input((None, 3))
    layer = ks.layers.Recurrent(
        make_cell(key, 4, "float32"), return_state=True, precompute_inputs=True
    )
    model = keras.Model(inputs, layer(inputs))
    rng = np.random.default_rng(1)
    for v in layer.weights:
        if v.trainable:
            # Peepholes start at zero; give every weight a non-zero value.
            value = v.numpy() if np.any(v.numpy()) else rng.uniform(-1, 1, v.shape)
            v.assign((value * weight_scale).astype("float32"))
    return [np.asarray(o) for o in model.predict(long_inputs(), verbose=0)]


@pytest.mark.slow
@pytest.mark.parametrize("weight_scale", [1.0, 100.0])
@pytest.mark.parametrize("key", list(REFERENCE_CELLS))
def test_reference_cells_stay_finite(key, weight_scale):
    out, *states = run(key, weight_scale)
    for row, scale in enumerate(SCALES):
        assert np.all(np.isfinite(out[row])), (key, scale)
        assert all(np.all(np.isfinite(s[row])) for s in states), (key, scale)
    assert np.all(np.abs(out) <= 1.0)  # h = o * tanh(c) or a tanh mix
    if key.split("_")[0] in BOUNDED:
        assert all(np.all(np.abs(s) <= 1.0) for s in states)
    else:  # LSTM: |c(t)| <= |c(t-1)| + 1, so at most the number of steps
        assert np.all(np.abs(states[1]) <= STEPS)
    record("numerical extremes", f"{STEPS} steps x {len(SCALES)} scales: finite")


@pytest.mark.slow
@pytest.mark.parametrize("key", OTHER_CELLS)
def test_other_cells_stay_finite_with_large_weights(key):
    outputs = run(key, 100.0)
    for row, scale in enumerate(SCALES):
        for o in outputs:
            assert np.all(np.isfinite(o[row])), (key, scale)
    record("numerical extremes", f"{STEPS} steps x {len(SCALES)} scales: finite")
