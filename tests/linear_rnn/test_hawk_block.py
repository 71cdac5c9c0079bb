"""HawkBlock: parallel form, streaming with the convolution buffer, and the
float64 reference of Griffin's recurrent block."""

import numpy as np
import pytest
import references as R
import scan_layer_checks as C
from keras import ops

from keras_seqmodels.linear_rnn import HawkBlock
from keras_seqmodels.linear_rnn.hawk_block import causal_conv1d
from keras_seqmodels.testing.layer_test import run_layer_test

FEATURES, UNITS, LRU_UNITS = 3, 3, 4


def make(**kw):
    kw.setdefault("lru_units", LRU_UNITS)
    return HawkBlock(kw.pop("units", UNITS), **kw)


def reference(w):
    return R.hawk_block_step(
        {
            "W_y": w["linear_y_kernel"],
            "b_y": w["linear_y_bias"],
            "W_x": w["linear_x_kernel"],
            "b_x": w["linear_x_bias"],
            "conv_w": w["conv_kernel"],
            "conv_b": w["conv_bias"],
            "W_a": w["gate_a_kernel"],
            "b_a": w["gate_a_bias"],
            "W_i": w["gate_x_kernel"],
            "b_i": w["gate_x_bias"],
            "a_param": w["a_param"],
            "W_out": w["linear_out_kernel"],
            "b_out": w["linear_out_bias"],
        }
    )


# Layer states: [h, conv buffer]; the reference's: [conv buffer, h].
SPEC = C.Spec(
    make=make,
    features=FEATURES,
    reference=reference,
    to_ref=lambda s: [s[1], s[0]],
    from_ref=lambda r: [r[1], r[0]],
)


def randomise_conv(layer):
    # The anchor's convolution init (std 0.05) makes the taps small; larger
    # ones make the checks sensitive to which inputs each tap reads.
    rng = np.random.RandomState(12)
    layer.conv_kernel.assign(rng.randn(*layer.conv_kernel.shape).astype("float32"))
    layer.conv_bias.assign(rng.randn(*layer.conv_bias.shape).astype("float32"))


def make_random_conv(**kw):
    layer = make(**kw)
    if layer.stateful:  # built by its model, at a fixed batch size; weights copied in
        return layer
    layer.build((None, None, FEATURES))
    randomise_conv(layer)
    return layer


SPEC_CONV = C.Spec(
    make=make_random_conv,
    features=FEATURES,
    reference=reference,
    to_ref=SPEC.to_ref,
    from_ref=SPEC.from_ref,
)


@pytest.mark.parametrize("length", [1, 2, 7, 64])
def test_streaming_equals_parallel_and_reference(length):
    C.check_parallel_step_reference(SPEC_CONV, length)


@pytest.mark.parametrize("length", [1000, 16_384])
def test_long_parallel_against_reference(length):
    C.check_long(SPEC_CONV, length)


@pytest.mark.parametrize("width", [1, 2])
def test_other_conv_widths(width):
    spec = C.Spec(
        make=lambda **kw: make_random_conv(conv_width=width, **kw),
        features=FEATURES,
        reference=reference,
        to_ref=(lambda s: [s[1], s[0]]) if width > 1 else (lambda s: [np.zeros((2, 0, 4)), s[0]]),
        from_ref=(lambda r: [r[1], r[0]]) if width > 1 else (lambda r: [r[1]]),
    )
    C.check_parallel_step_reference(spec, 7)


def test_conv_with_holes_reads_the_last_real_inputs():
    rng = np.random.RandomState(13)
    x = rng.randn(2, 9, 3).astype("float32")
    buffer = rng.randn(2, 3, 3).astype("float32")
    kernel, bias = rng.randn(4, 3).astype("float32"), rng.randn(3).astype("float32")
    mask = rng.rand(2, 9) > 0.4
    y, new = causal_conv1d(x, buffer, kernel, bias, mask)
    step = R.causal_conv1d_step(kernel.astype(np.float64), bias.astype(np.float64))
    ref_y, (ref_buffer,) = R.run(step, x, [buffer.astype(np.float64)], mask=mask)
    C.close(np.where(mask[..., None], ops.convert_to_numpy(y), 0.0), ref_y)
    C.close(ops.convert_to_numpy(new), ref_buffer)


@pytest.mark.slow
def test_long_sequence_gates_at_both_ends():
    def extreme(layer):
        randomise_conv(layer)
        layer.gate_a_bias.assign(np.array([-30.0, 30.0, 0.0, 30.0], "float32"))
        layer.gate_x_bias.assign(np.array([30.0, -30.0, 30.0, 30.0], "float32"))
        layer.a_param.assign(np.array([-9.0, 5.0, -7.0, -9.0], "float32"))

    # Tolerance 1e-3, as for RGLRU: a(t) within 6e-8 of 1 rounds to 1 in
    # float32, and the state integrates 16,384 steps.
    C.check_long_extreme(SPEC, extreme, rtol=1e-3)


def test_masks():
    C.check_masks(SPEC_CONV)


def test_go_backwards():
    C.check_go_backwards(SPEC_CONV)


def test_initial_state_and_stateful():
    C.check_initial_state_and_stateful(SPEC_CONV)


def test_bidirectional():
    C.check_bidirectional(SPEC_CONV)


def test_gradients_against_finite_differences():
    spec = C.Spec(
        make=lambda **kw: HawkBlock(2, lru_units=2, conv_width=2, **kw),
        features=2,
        reference=reference,
        to_ref=SPEC.to_ref,
        from_ref=SPEC.from_ref,
    )
    C.check_gradients(spec)


def test_keras_round_trip():
    C.check_keras_round_trip(SPEC, conv_width=3, c=6.0)


def test_layer_contract():
    run_layer_test(
        lambda: HawkBlock(4, lru_units=6, return_sequences=True),
        C.inputs(2, 5, 3),
        expected_output_shape=(2, 5, 4),
    )


@pytest.mark.parametrize(
    "kwargs, words",
    [
        ({"units": 2, "lru_units": 100_000}, "`lru_units` must be an integer in [1, 8,192]"),
        ({"units": 0}, "`units` must be a positive integer"),
        ({"units": 2, "lru_units": 0}, "`lru_units` must be a positive integer"),
        ({"units": 2, "conv_width": 0}, "`conv_width` must be an integer in [1, 64]"),
        ({"units": 2, "conv_width": 2.5}, "`conv_width` must be an integer in [1, 64]"),
        ({"units": 2, "c": -1}, "`c` must be a finite number > 0"),
        ({"units": 2, "min_rad": 0.0}, "0 < min_rad < max_rad < 1"),
    ],
)
def test_argument_errors(kwargs, words):
    with pytest.raises(ValueError, match="HawkBlock") as err:
        HawkBlock(**kwargs)
    assert words in str(err.value)


def test_input_errors():
    C.check_input_errors(SPEC, "my_hawk")
