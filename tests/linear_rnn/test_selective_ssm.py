"""SelectiveSSM: parallel form, step form and the float64 reference of Mamba's S6."""

import math

import numpy as np
import pytest
import references as R
import scan_layer_checks as C
from keras import ops

from keras_seqmodels.linear_rnn import SelectiveSSM
from keras_seqmodels.linear_rnn.selective_ssm import dt_bias_initializer
from keras_seqmodels.testing.layer_test import run_layer_test

FEATURES, STATE, RANK = 3, 2, 2


def make(**kw):
    kw.setdefault("state_size", STATE)
    kw.setdefault("dt_rank", RANK)
    return SelectiveSSM(**kw)


def reference(w):
    rank = w["dt_kernel"].shape[0]
    n = w["a_log"].shape[1]
    proj = w["x_proj_kernel"]
    return R.selective_ssm_step(
        {
            "W_xdt": proj[:, :rank],
            "W_B": proj[:, rank : rank + n],
            "W_C": proj[:, rank + n :],
            "W_dt": w["dt_kernel"],
            "b_dt": w["dt_bias"],
            "A_log": w["a_log"],
            "D": w["d_skip"],
        }
    )


SPEC = C.Spec(make=make, features=FEATURES, reference=reference, to_ref=list, from_ref=list)


def make_lively(**kw):
    # Mamba's initial Delta (1e-3 to 1e-1) barely moves the state in a few
    # steps; larger steps make the short checks sensitive to the recurrence.
    layer = make(**kw)
    if layer.stateful:  # built by its model, at a fixed batch size; weights copied in
        return layer
    layer.build((None, None, FEATURES))
    layer.dt_bias.assign(np.array([0.5, -1.0, 1.5], "float32"))
    return layer


SPEC_LIVELY = C.Spec(
    make=make_lively, features=FEATURES, reference=reference, to_ref=list, from_ref=list
)


@pytest.mark.parametrize("length", [1, 7, 64])
def test_parallel_step_and_reference(length):
    C.check_parallel_step_reference(SPEC_LIVELY, length)


@pytest.mark.parametrize("length", [1000, 16_384])
def test_long_parallel_against_reference(length):
    C.check_long(SPEC, length)


@pytest.mark.slow
def test_long_sequence_steps_at_both_ends():
    # Delta = softplus(+-25): 25 (a = exp(-25 k) ~ 0, the state is reset at
    # every step) and 1.4e-11 (a = 1 in float32, the state is kept).
    def extreme(layer):
        layer.dt_bias.assign(np.array([25.0, -25.0, 0.0], "float32"))

    C.check_long_extreme(SPEC, extreme)


def test_initialisation_matches_mamba():
    layer = SelectiveSSM(state_size=5)
    layer.build((None, None, 4000))
    w = C.weights_of(layer)
    rank = math.ceil(4000 / 16)
    assert w["x_proj_kernel"].shape == (4000, rank + 10)
    assert np.abs(w["x_proj_kernel"]).max() <= 1 / math.sqrt(4000)
    assert w["dt_kernel"].shape == (rank, 4000)
    assert np.abs(w["dt_kernel"]).max() <= rank**-0.5
    np.testing.assert_allclose(-np.exp(w["a_log"]), -np.tile(np.arange(1, 6), (4000, 1)), 1e-6)
    np.testing.assert_array_equal(w["d_skip"], 1.0)
    bias = ops.convert_to_numpy(dt_bias_initializer(1e-3, 0.1, 1e-4)((40_000,)))
    dt = np.logaddexp(0.0, bias.astype(np.float64))
    assert dt.min() >= 1e-3 * (1 - 1e-5) and dt.max() <= 0.1 * (1 + 1e-5)
    # log-uniform: log dt uniform on [log 1e-3, log 1e-1], mean log(1e-2)
    # (standard error 1.33 / sqrt(40,000) = 0.007; the bound is 7 of them).
    assert abs(np.log(dt).mean() - math.log(1e-2)) < 0.05


def test_masks():
    C.check_masks(SPEC_LIVELY)


def test_go_backwards():
    C.check_go_backwards(SPEC_LIVELY)


def test_initial_state_and_stateful():
    C.check_initial_state_and_stateful(SPEC_LIVELY)


def test_bidirectional():
    C.check_bidirectional(SPEC_LIVELY)


def test_gradients_against_finite_differences():
    spec = C.Spec(
        make=lambda **kw: SelectiveSSM(state_size=2, dt_rank=1, **kw),
        features=2,
        reference=reference,
        to_ref=list,
        from_ref=list,
    )
    C.check_gradients(spec)


def test_keras_round_trip():
    C.check_keras_round_trip(SPEC, dt_min=1e-2, dt_max=0.5)


def test_layer_contract():
    run_layer_test(
        lambda: SelectiveSSM(state_size=3, return_sequences=True),
        C.inputs(2, 5, 4),
        expected_output_shape=(2, 5, 4),
    )


@pytest.mark.parametrize(
    "kwargs, words",
    [
        ({"dt_rank": 100_000}, "`dt_rank` must be an integer in [1, 8,192]"),
        ({"state_size": 100_000}, "`state_size` must be an integer in [1, 8,192]"),
        ({"state_size": 0}, "`state_size` must be a positive integer"),
        ({"dt_rank": 0}, "`dt_rank` must be a positive integer"),
        ({"dt_rank": "full"}, "`dt_rank` must be a positive integer"),
        ({"dt_min": 0.0}, "`dt_min` must be a finite number > 0"),
        ({"dt_min": 0.2, "dt_max": 0.1}, "`dt_min` must be less than `dt_max`"),
        ({"dt_scale": -1.0}, "`dt_scale` must be a finite number > 0"),
    ],
)
def test_argument_errors(kwargs, words):
    with pytest.raises(ValueError, match="SelectiveSSM") as err:
        SelectiveSSM(**kwargs)
    assert words in str(err.value)


def test_input_errors():
    C.check_input_errors(SPEC, "my_ssm")
