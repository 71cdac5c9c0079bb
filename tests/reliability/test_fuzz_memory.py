"""Property suite for the memory layers: NTM and MemoryNetwork (MemN2N).

NTM: random batches (0-3 rows, 0-5 steps, right padding with a mask, rows
of length 0 included), widths and controllers. Valid cases must be finite
and, row by row, equal to the NumPy reference (``tests/memory/
reference_memory.py``) run on that sequence alone without its padding:
outputs at the real steps and the final memory and weightings. Invalid
cases (wrong rank, integer inputs, a mask of the wrong shape, another width
after build) must raise an error naming the NTM and the argument.

MemoryNetwork: random stories (0-3 examples, 1 to ``memory_size`` slots,
right-padded sentences, empty slots) and queries; valid cases equal the
paper's equations in NumPy run on each example alone. Invalid cases (wrong
rank of ``stories`` or ``queries``, more slots than ``memory_size``) must
raise an error naming the layer and the argument.
"""

import os
import sys

import numpy as np
import pytest
from fuzz_record import ATOL, DTYPE, fuzz_settings, randomize, record
from hypothesis import given
from hypothesis import strategies as st
from keras import ops

import keras_seqmodels as ks

sys.path.insert(
    0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "memory")
)
import reference_memory as ref  # noqa: E402


def by_name(layer):
    return {v.path.split("/")[-1]: ops.convert_to_numpy(v).astype("float64") for v in layer.weights}


NTM_FAULTS = ("rank", "dtype", "mask", "width")


@st.composite
def ntm_cases(draw):
    return dict(
        fault=draw(st.sampled_from((None,) * 4 + NTM_FAULTS)),
        lengths=draw(st.lists(st.integers(0, 5), min_size=0, max_size=3)),
        pad=draw(st.integers(0, 2)),
        features=draw(st.integers(1, 3)),
        shift_range=draw(st.integers(1, 2)),
        extra_slots=draw(st.integers(0, 2)),
        width=draw(st.integers(1, 3)),
        heads=draw(st.sampled_from([(1, 1), (2, 1), (1, 2)])),
        controller=draw(st.sampled_from(["lstm", "feedforward"])),
        seed=draw(st.integers(0, 2**16)),
    )


def test_ntm_padded_batches_equal_the_reference_per_sequence():
    @fuzz_settings(12)
    @given(case=ntm_cases())
    def check(case):
        rng = np.random.default_rng(case["seed"])
        reads, writes = case["heads"]
        units = 4
        case["slots"] = 2 * case["shift_range"] + 1 + case["extra_slots"]
        layer = ks.memory.NTM(
            units,
            memory_size=case["slots"],
            memory_width=case["width"],
            read_heads=reads,
            write_heads=writes,
            shift_range=case["shift_range"],
            controller=case["controller"],
            return_sequences=True,
            return_state=True,
            dtype=DTYPE,
            name="fuzzed_ntm",
        )
        lengths = case["lengths"]
        batch, time = len(lengths), max(lengths + [0]) + case["pad"]
        x = rng.standard_normal((batch, time, case["features"])).astype(DTYPE)
        mask = np.arange(time)[None, :] < np.array(lengths, int).reshape(-1, 1)
        layer.build((None, None, case["features"]))
        randomize(layer, case["seed"])
        fault = case["fault"]
        if fault is not None:
            if fault == "rank":
                args, kwargs, arg = (x[0] if batch else x[..., 0],), {}, "`sequences`"
            elif fault == "dtype":
                args, kwargs, arg = ((x > 0).astype("int32"),), {}, "`sequences`"
            elif fault == "mask":
                args, kwargs, arg = (x,), {"mask": np.ones((batch, time + 1), bool)}, "`mask`"
            else:
                wide = rng.standard_normal((batch, time, case["features"] + 1)).astype(DTYPE)
                args, kwargs, arg = (wide,), {}, "`sequences`"
            with pytest.raises((ValueError, TypeError)) as info:
                layer(*args, **kwargs)
            message = str(info.value)
            assert "fuzzed_ntm" in message and arg in message, message
            record("fuzz/ntm", "clear error")
            return
        x[~mask] = 1e3  # padding content must not matter
        out, *states = layer(x, mask=mask)
        out = ops.convert_to_numpy(out)
        memory, read_w, write_w = (ops.convert_to_numpy(s) for s in states[-4:-1])
        assert np.all(np.isfinite(out)) and np.all(np.isfinite(memory))
        w = by_name(layer)
        for i, n in enumerate(lengths):
            if n == 0:  # nothing read: the learned initial memory
                init = np.broadcast_to(w["initial_memory"], memory[i].shape)
                np.testing.assert_allclose(memory[i], init, atol=ATOL)
                continue
            ref_out, ref_states = ref.ntm_forward(
                x[i : i + 1, :n].astype("float64"),
                w,
                case["slots"],
                case["width"],
                reads,
                writes,
                case["shift_range"],
                units,
                case["controller"],
            )
            np.testing.assert_allclose(out[i, :n], ref_out[0], atol=ATOL)
            np.testing.assert_allclose(memory[i], ref_states["memory"][0], atol=ATOL)
            np.testing.assert_allclose(read_w[i], ref_states["read_w"][0], atol=ATOL)
            np.testing.assert_allclose(write_w[i], ref_states["write_w"][0], atol=ATOL)
        record("fuzz/ntm", "matches reference")

    check()


MEMN2N_FAULTS = ("stories_rank", "queries_rank", "too_many_slots")


@st.composite
def memn2n_cases(draw):
    return dict(
        fault=draw(st.sampled_from((None,) * 3 + MEMN2N_FAULTS)),
        batch=draw(st.integers(0, 3)),
        slots=draw(st.integers(1, 4)),
        words=draw(st.integers(1, 4)),
        query_words=draw(st.integers(1, 3)),
        hops=draw(st.integers(1, 3)),
        seed=draw(st.integers(0, 2**16)),
    )


def test_memory_network_equals_the_equations_per_example():
    vocab, dim, memory_size = 9, 4, 4

    @fuzz_settings(12)
    @given(case=memn2n_cases())
    def check(case):
        rng = np.random.default_rng(case["seed"])
        b, s, w = case["batch"], case["slots"], case["words"]
        stories = rng.integers(1, vocab, (b, s, w))
        sentence_lengths = rng.integers(0, w + 1, (b, s))  # 0: an empty slot
        stories = np.where(np.arange(w) < sentence_lengths[..., None], stories, 0).astype("int32")
        queries = rng.integers(1, vocab, (b, case["query_words"]))
        query_lengths = rng.integers(1, case["query_words"] + 1, (b, 1))
        queries = np.where(np.arange(case["query_words"]) < query_lengths, queries, 0)
        queries = queries.astype("int32")
        layer = ks.memory.MemoryNetwork(
            vocab, dim, memory_size, hops=case["hops"], dtype=DTYPE, name="fuzzed_memn2n"
        )
        layer.build([(None, None, w), (None, case["query_words"])])
        randomize(layer, case["seed"], scale=0.5)
        fault = case["fault"]
        if fault is not None:
            if fault == "stories_rank":
                args, arg = [stories[..., 0], queries], "`stories`"
            elif fault == "queries_rank":
                args, arg = [stories, queries[..., None]], "`queries`"
            else:
                more = np.ones((b, memory_size + 1, w), "int32")
                args, arg = [more, queries], "`stories`"
            with pytest.raises((ValueError, TypeError)) as info:
                layer(args)
            message = str(info.value)
            assert "fuzzed_memn2n" in message and arg in message, message
            record("fuzz/memory_network", "clear error")
            return
        logits = ops.convert_to_numpy(layer([stories, queries]))
        assert logits.shape == (b, vocab) and np.all(np.isfinite(logits))
        emb = ops.convert_to_numpy(layer.embeddings).astype("float64")
        temporal = ops.convert_to_numpy(layer.temporal_embeddings).astype("float64")
        for i in range(b):
            if not stories[i].any():
                continue  # no memories at all: the reference divides by zero
            expected, _ = ref.memn2n_forward(
                stories[i : i + 1], queries[i : i + 1], emb, temporal, case["hops"]
            )
            np.testing.assert_allclose(logits[i], expected[0], atol=ATOL * 10)
        record("fuzz/memory_network", "matches reference")

    check()
