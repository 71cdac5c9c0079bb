"""LRU: parallel form, step form and the float64 reference of the paper's equations."""

import math

import numpy as np
import pytest
import references as R
import scan_layer_checks as C

from keras_seqmodels.linear_rnn import LRU
from keras_seqmodels.testing.layer_test import run_layer_test

FEATURES, UNITS, STATE = 3, 3, 4


def make(**kw):
    kw.setdefault("state_units", STATE)
    return LRU(kw.pop("units", UNITS), **kw)


def reference(w):
    return R.lru_step(
        {
            "nu_log": w["nu_log"],
            "theta_log": w["theta_log"],
            "gamma_log": w["gamma_log"],
            "B": (w["b_real"] + 1j * w["b_imag"]).T,
            "C": (w["c_real"] + 1j * w["c_imag"]).T,
            "D": w["d"],
        }
    )


SPEC = C.Spec(
    make=make,
    features=FEATURES,
    reference=reference,
    to_ref=lambda s: [s[0] + 1j * s[1]],
    from_ref=lambda r: [r[0].real, r[0].imag],
)


@pytest.mark.parametrize("length", [1, 7, 64])
def test_parallel_step_and_reference(length):
    C.check_parallel_step_reference(SPEC, length)


@pytest.mark.parametrize("length", [1000, 16_384])
def test_long_parallel_against_reference(length):
    C.check_long(SPEC, length)


@pytest.mark.slow
def test_long_sequence_extreme_radii():
    # |lambda| at both ends: exp(-exp(-12)) = 1 - 6e-6 and exp(-exp(3)) = 2e-9.
    # Tolerance 1e-3: float32 holds |lambda| = 1 - 6e-6 to a relative 6e-8,
    # and the state sums ~1/(1 - |lambda|) steps of lambda^k, whose relative
    # error grows as k * 6e-8 (up to 1e-3 at 16,384 steps); the layer
    # computes the same recurrence, the rounding is float32's.
    def extreme(layer):
        nu = np.array([-12.0, 3.0, -12.0, 0.0], "float32")
        layer.nu_log.assign(nu)
        layer.gamma_log.assign(0.5 * np.log(-np.expm1(-2 * np.exp(nu.astype(np.float64)))))

    C.check_long_extreme(SPEC, extreme, rtol=1e-3)


def test_ring_initialisation():
    layer = LRU(4, state_units=4000, r_min=0.5, r_max=0.8, max_phase=1.0)
    layer.build((None, None, 2))
    w = C.weights_of(layer)
    modulus = np.exp(-np.exp(w["nu_log"]))
    phase = np.exp(w["theta_log"])
    assert modulus.min() >= 0.5 - 1e-6 and modulus.max() <= 0.8 + 1e-6
    # Uniform in area: |lambda|^2 uniform on [0.25, 0.64], mean 0.445.
    assert abs(np.mean(modulus**2) - 0.445) < 0.01
    assert phase.min() >= 0.0 and phase.max() <= 1.0 and abs(phase.mean() - 0.5) < 0.02
    np.testing.assert_allclose(np.exp(w["gamma_log"]), np.sqrt(1 - modulus**2), rtol=1e-5)
    assert w["b_real"].shape == (2, 4000) and abs(w["b_real"].std() - 0.5) < 0.02
    assert w["c_real"].shape == (4000, 4) and abs(w["c_real"].std() - 1 / math.sqrt(4000)) < 1e-3
    assert w["d"].shape == (2, 4)


def test_skip_is_diagonal_when_widths_match():
    layer = LRU(3, state_units=2)
    layer.build((None, None, 3))
    assert tuple(layer.d.shape) == (3,)
    other = LRU(5, state_units=2)
    other.build((None, None, 3))
    assert tuple(other.d.shape) == (3, 5)


def test_different_output_width_against_reference():
    spec = C.Spec(
        make=lambda **kw: LRU(5, state_units=2, **kw),
        features=3,
        reference=reference,
        to_ref=SPEC.to_ref,
        from_ref=SPEC.from_ref,
    )
    C.check_parallel_step_reference(spec, 7)


def test_masks():
    C.check_masks(SPEC)


def test_go_backwards():
    C.check_go_backwards(SPEC)


def test_initial_state_and_stateful():
    C.check_initial_state_and_stateful(SPEC)


def test_bidirectional():
    C.check_bidirectional(SPEC)


def test_gradients_against_finite_differences():
    spec = C.Spec(
        make=lambda **kw: LRU(2, state_units=2, **kw),
        features=2,
        reference=reference,
        to_ref=SPEC.to_ref,
        from_ref=SPEC.from_ref,
    )
    C.check_gradients(spec)


def test_keras_round_trip():
    C.check_keras_round_trip(SPEC)


def test_layer_contract():
    run_layer_test(
        lambda: LRU(4, state_units=3, return_sequences=True),
        C.inputs(2, 5, 3),
        expected_output_shape=(2, 5, 4),
    )


@pytest.mark.parametrize(
    "kwargs, words",
    [
        ({"units": 2, "state_units": 100_000}, "`state_units` must be an integer in [1, 8,192]"),
        ({"units": 0}, "`units` must be a positive integer"),
        ({"units": 2, "state_units": -1}, "`state_units` must be a positive integer"),
        ({"units": 2, "r_min": 0.9, "r_max": 0.5}, "0 <= r_min < r_max < 1"),
        ({"units": 2, "r_max": 1.0}, "0 <= r_min < r_max < 1"),
        ({"units": 2, "max_phase": 0.0}, "`max_phase` must be in (0, 2 pi]"),
        ({"units": 2, "r_min": float("nan")}, "`r_min` must be a finite number"),
    ],
)
def test_argument_errors(kwargs, words):
    with pytest.raises(ValueError, match="LRU") as err:
        LRU(**kwargs)
    assert words in str(err.value)


def test_input_errors():
    C.check_input_errors(SPEC, "my_lru")
