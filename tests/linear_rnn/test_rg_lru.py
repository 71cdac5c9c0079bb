"""RGLRU: parallel form, step form and the float64 reference of Griffin's equations."""

import keras
import numpy as np
import pytest
import references as R
import scan_layer_checks as C
from keras import ops

from keras_seqmodels.linear_rnn import RGLRU
from keras_seqmodels.linear_rnn.rg_lru import a_param_initializer, bounded_grad_sqrt
from keras_seqmodels.testing.layer_test import compute_gradients, run_layer_test

UNITS = 3


def make(**kw):
    return RGLRU(kw.pop("units", UNITS), **kw)


def reference(w, c=8.0):
    return R.rglru_step(
        {
            "W_a": w["gate_a_kernel"],
            "b_a": w["gate_a_bias"],
            "W_x": w["gate_x_kernel"],
            "b_x": w["gate_x_bias"],
            "a_param": w["a_param"],
        },
        c=c,
    )


SPEC = C.Spec(make=make, features=UNITS, reference=reference, to_ref=list, from_ref=list)


@pytest.mark.parametrize("length", [1, 7, 64])
def test_parallel_step_and_reference(length):
    C.check_parallel_step_reference(SPEC, length)


@pytest.mark.parametrize("length", [1000, 16_384])
def test_long_parallel_against_reference(length):
    C.check_long(SPEC, length)


def test_other_c_against_reference():
    spec = C.Spec(
        make=lambda **kw: RGLRU(UNITS, c=2.5, **kw),
        features=UNITS,
        reference=lambda w: reference(w, c=2.5),
        to_ref=list,
        from_ref=list,
    )
    C.check_parallel_step_reference(spec, 7)


@pytest.mark.slow
def test_long_sequence_gates_at_both_ends():
    # Recurrence gates r = sigmoid(+-30): a(t) = 1 - 1e-13 (state kept, input
    # scaled by ~5e-7) in one unit and a^c in the others; input gates at both ends.
    def extreme(layer):
        layer.gate_a_bias.assign(np.array([-30.0, 30.0, 0.0], "float32"))
        layer.gate_x_bias.assign(np.array([30.0, -30.0, 30.0], "float32"))
        layer.a_param.assign(np.array([-9.0, 5.0, -20.0], "float32"))

    # Tolerance 1e-3: in the third unit a(t) = exp(-8e-9) rounds to 1 in
    # float32 (spacing 6e-8 below 1), so over 16,384 steps the float32
    # recurrence forgets a relative 1e-4 less than the exact one.
    C.check_long_extreme(SPEC, extreme, rtol=1e-3)


def test_bounded_sqrt_gradient():
    x = np.array([0.0, 1e-12, 0.25, 1.0], "float32")
    np.testing.assert_array_equal(ops.convert_to_numpy(bounded_grad_sqrt(x)), np.sqrt(x))
    variable = keras.Variable(x)
    (grad,) = compute_gradients(lambda: ops.sum(bounded_grad_sqrt(variable)), [variable])
    np.testing.assert_allclose(grad, [1000.0, 1000.0, 1.0, 0.5], rtol=1e-6)


def test_initialisation_matches_the_anchor():
    layer = RGLRU(3)
    layer.build((None, None, 3))
    assert tuple(layer.a_param.shape) == (3,)
    a_param = ops.convert_to_numpy(a_param_initializer(0.9, 0.999)((20_000,)))
    a = np.exp(-np.logaddexp(0.0, a_param.astype(np.float64)))
    assert a.min() >= 0.9 - 1e-6 and a.max() <= 0.999 + 1e-6
    # a^2 uniform on [0.81, 0.998]: mean 0.904, variance 0.1176 / 12.
    assert abs(np.mean(a**2) - 0.904) < 0.002
    assert abs(np.var(a**2) - 0.188**2 / 12) < 2e-4


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
        make=lambda **kw: RGLRU(2, **kw), features=2, reference=reference, to_ref=list,
        from_ref=list,
    )  # fmt: skip
    C.check_gradients(spec)


def test_keras_round_trip():
    C.check_keras_round_trip(SPEC, c=4.0)


def test_layer_contract():
    run_layer_test(
        lambda: RGLRU(4, return_sequences=True), C.inputs(2, 5, 4), expected_output_shape=(2, 5, 4)
    )


@pytest.mark.parametrize(
    "kwargs, words",
    [
        ({"units": 0}, "`units` must be a positive integer"),
        ({"units": 2, "c": 0.0}, "`c` must be a finite number > 0"),
        ({"units": 2, "min_rad": 0.99, "max_rad": 0.9}, "0 < min_rad < max_rad < 1"),
        ({"units": 2, "max_rad": 1.0}, "0 < min_rad < max_rad < 1"),
    ],
)
def test_argument_errors(kwargs, words):
    with pytest.raises(ValueError, match="RGLRU") as err:
        RGLRU(**kwargs)
    assert words in str(err.value)


def test_width_error():
    with pytest.raises(ValueError, match="my_rglru.*must equal `units`=3.*HawkBlock"):
        RGLRU(3, name="my_rglru")(np.zeros((2, 4, 5), "float32"))


def test_input_errors():
    C.check_input_errors(SPEC, "my_rglru")
