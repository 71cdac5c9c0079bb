"""Property suite for ``Bidirectional``: padded batches equal each sequence alone.

Random lengths (right padding, rows of length 0 included), widths and cells;
invalid cases (wrong rank, integer inputs) must raise a clear error that
names a layer and ``sequences``. Valid cases must be finite and, row by row,
equal to the wrapped layers run on that sequence alone without padding.
"""

import numpy as np
import pytest
from fuzz_record import fuzz_settings, record
from hypothesis import given
from hypothesis import strategies as st
from keras import ops
from test_fuzz_recurrent import REFERENCE_CELLS, make_cell

import keras_seqmodels as ks


@st.composite
def cases(draw):
    return dict(
        fault=draw(st.sampled_from([None, None, None, "rank", "dtype"])),
        lengths=draw(st.lists(st.integers(0, 5), min_size=0, max_size=3)),
        pad=draw(st.integers(0, 2)),
        features=draw(st.integers(1, 3)),
        merge_mode=draw(st.sampled_from(["concat", "sum"])),
        seed=draw(st.integers(0, 2**16)),
    )


@pytest.mark.parametrize("key", list(REFERENCE_CELLS))
def test_padded_batch_equals_each_sequence_alone(key):
    @fuzz_settings(10)
    @given(case=cases())
    def check(case):
        rng = np.random.default_rng(case["seed"])
        batch, time = len(case["lengths"]), max(case["lengths"] + [0]) + case["pad"]
        x = rng.standard_normal((batch, time, case["features"])).astype("float32")
        layer = ks.layers.Bidirectional(
            ks.layers.Recurrent(
                make_cell(key, 3, "float32"), return_sequences=True, name="fuzzed_rnn"
            ),
            merge_mode=case["merge_mode"],
            name="fuzzed_bidi",
        )
        if case["fault"] is not None:
            bad = x[0] if case["fault"] == "rank" else (x > 0).astype("int32")
            with pytest.raises((ValueError, TypeError)) as info:
                layer(bad)
            message = str(info.value)
            assert "fuzzed_" in message and "`sequences`" in message, message
            record("fuzz/bidirectional", "clear error")
            return
        mask = np.arange(time)[None, :] < np.array(case["lengths"], int)[:, None]
        x[~mask] = 1e3  # padding content must not matter
        out = ops.convert_to_numpy(layer(x, mask=mask))
        assert np.all(np.isfinite(out))
        for i, n in enumerate(case["lengths"]):
            alone = ops.convert_to_numpy(layer(x[i : i + 1, :n]))
            np.testing.assert_allclose(out[i, :n], alone[0], atol=2e-5, rtol=1e-5)
        record("fuzz/bidirectional", "matches each sequence alone")

    check()
