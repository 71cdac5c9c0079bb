"""No NaN from finite inputs at extreme but legal values, for every cell.

10,000-step sequences whose rows are scaled by 1, 1e6, 1e15 and a last scale
near float32's limit, through cells with their default weights and with every
weight multiplied by 100 (saturated gates, recurrent spectral radius about
100). Outputs and states must be finite, and bounded where the equations
bound them. Runs through ``Model.predict`` (compiled loop) on either backend.

"Legal" is set by the equations, not by the input alone: every cell starts
from the pre-activation ``W x + b``, and that sum must be a float32 number.
With default weights (``|W| < 1``) a row scaled by 1e37 keeps
``sum_i |W_ij x_i|`` below float32's largest value (3.4e38), so 1e37 is
tested. With weights times 100 (``|W|`` up to ~100, 3 inputs of up to ~4.5
standard deviations) the same row gives products of ~1e40: ``W x`` is then
not representable, and whether a kernel returns ``inf`` (fused multiply-add
keeps the exact product: ``inf - 1e39 = inf``) or ``NaN`` (two products
rounded to ``+inf`` and ``-inf`` first) depends on the CPU and the BLAS, not
on the cell. Those weights are therefore tested up to 1e35, the largest power
of ten for which ``W x`` stays finite; ``test_scales_keep_the_input_product_finite``
checks that bound on the weights the tests actually use.
"""

import keras
import numpy as np
import pytest
from fuzz_record import record
from test_fuzz_recurrent import OTHER_CELLS, REFERENCE_CELLS, make_cell

STEPS = 10_000
# The largest scale per weight multiplier for which ``W x`` is a float32
# number (module docstring).
SCALES = {1.0: (1.0, 1e6, 1e15, 1e37), 100.0: (1.0, 1e6, 1e15, 1e35)}
# Cells whose every output and state is a convex mix of tanh values.
BOUNDED = {"ElmanCell", "GRUCell", "GatedCell"}


def long_inputs(scales):
    x = np.random.default_rng(0).standard_normal((1, STEPS, 3))
    return np.concatenate([x * s for s in scales]).astype("float32")


def build(key, weight_scale):
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
    return model, layer


def run(key, weight_scale):
    model, _ = build(key, weight_scale)
    x = long_inputs(SCALES[weight_scale])
    return [np.asarray(o) for o in model.predict(x, verbose=0)]


@pytest.mark.parametrize("weight_scale", sorted(SCALES))
@pytest.mark.parametrize("key", ["LSTMCell", "ElmanCell", "GRUCell"])
def test_scales_keep_the_input_product_finite(key, weight_scale):
    # The premise of the tests below: sum_i |W_ij x_i| of the input kernel
    # (float64) stays below float32's largest value at every tested scale.
    _, layer = build(key, weight_scale)
    kernel = np.abs(layer.cell.kernel.numpy().astype("float64"))
    x = np.abs(long_inputs(SCALES[weight_scale]).astype("float64"))
    largest = (x @ kernel).max()
    assert largest < np.finfo("float32").max, (key, weight_scale, largest)


@pytest.mark.slow
@pytest.mark.parametrize("weight_scale", [1.0, 100.0])
@pytest.mark.parametrize("key", list(REFERENCE_CELLS))
def test_reference_cells_stay_finite(key, weight_scale):
    out, *states = run(key, weight_scale)
    for row, scale in enumerate(SCALES[weight_scale]):
        assert np.all(np.isfinite(out[row])), (key, scale)
        assert all(np.all(np.isfinite(s[row])) for s in states), (key, scale)
    assert np.all(np.abs(out) <= 1.0)  # h = o * tanh(c) or a tanh mix
    if key.split("_")[0] in BOUNDED:
        assert all(np.all(np.abs(s) <= 1.0) for s in states)
    else:  # LSTM: |c(t)| <= |c(t-1)| + 1, so at most the number of steps
        assert np.all(np.abs(states[1]) <= STEPS)
    record("numerical extremes", f"{STEPS} steps x 4 scales: finite")


@pytest.mark.slow
@pytest.mark.parametrize("key", OTHER_CELLS)
def test_other_cells_stay_finite_with_large_weights(key):
    outputs = run(key, 100.0)
    for row, scale in enumerate(SCALES[100.0]):
        for o in outputs:
            assert np.all(np.isfinite(o[row])), (key, scale)
    record("numerical extremes", f"{STEPS} steps x 4 scales: finite")
