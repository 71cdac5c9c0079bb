"""Property suite for CRF, FourDirectional2D and the seq2seq EncoderDecoder.

- ``CRF``: random potentials (0-3 rows, 0-4 steps, 1-3 tags, right padding
  with a mask, empty rows included). Valid cases: log-likelihood, Viterbi
  path and its score equal exhaustive enumeration of every tag sequence of
  each row alone (``tests/tagging/test_crf.py``'s ``brute_force``); padding
  tags are 0. Invalid: wrong rank, last dimension other than ``num_tags``,
  integer potentials, a mask of another shape.
- ``FourDirectional2D``: random images (0-2, sides 1-5, 1-3 channels), patch
  sizes, ReNet or plain arrangement, GRU or LSTM cells. Valid cases: finite,
  the documented output shape, each image of the batch equal to the image
  run alone. Invalid: wrong rank, integer pixels, another channel count
  after build.
- ``EncoderDecoder``: random models (LSTM/GRU, attention multiplicative,
  additive or none, 1-2 layers, uni/bidirectional) and padded source
  batches. Valid cases: teacher-forced logits, greedy decoding and beam
  search of the batch equal those of each sentence alone without padding.
  Invalid: source of another rank, float ids, ``beam_size`` 0,
  a negative ``max_length``.

Invalid cases must raise ``ValueError``/``TypeError`` naming the layer (or
function) and the argument.
"""

import os
import sys

import keras
import numpy as np
import pytest
from fuzz_record import ATOL, DTYPE, fuzz_settings, randomize, record
from hypothesis import given
from hypothesis import strategies as st
from keras import ops

import keras_seqmodels as ks
from keras_seqmodels.seq2seq import EncoderDecoder

sys.path.insert(
    0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tagging")
)
from test_crf import brute_force  # noqa: E402


def _np(x):
    return ops.convert_to_numpy(x)


def expect_clear_error(call, names):
    with pytest.raises((ValueError, TypeError)) as info:
        call()
    message = str(info.value)
    for name in names:
        assert name in message, message


CRF_FAULTS = ("rank", "tags_width", "dtype", "mask")


@st.composite
def crf_cases(draw):
    return dict(
        fault=draw(st.sampled_from((None,) * 4 + CRF_FAULTS)),
        lengths=draw(st.lists(st.integers(0, 4), min_size=0, max_size=3)),
        pad=draw(st.integers(0, 2)),
        tags=draw(st.integers(1, 3)),
        seed=draw(st.integers(0, 2**16)),
    )


def test_crf_equals_enumeration_per_row():
    @fuzz_settings(12)
    @given(case=crf_cases())
    def check(case):
        rng = np.random.default_rng(case["seed"])
        k, lengths = case["tags"], case["lengths"]
        b, t = len(lengths), max(lengths + [0]) + case["pad"]
        crf = ks.tagging.CRF(k, dtype=DTYPE, name="fuzzed_crf")
        crf.build((None, None, k))
        for v in crf.weights:
            v.assign(rng.normal(0, 1, v.shape).astype(DTYPE))
        x = rng.normal(0, 1.5, (b, t, k)).astype(DTYPE)
        mask = np.arange(t)[None, :] < np.array(lengths, int).reshape(-1, 1)
        fault = case["fault"]
        if fault is not None:
            calls = {
                "rank": (lambda: crf(x[..., 0]), "`potentials`"),
                "tags_width": (lambda: crf(np.concatenate([x, x], -1)), "`potentials`"),
                "dtype": (lambda: crf((x > 0).astype("int32")), "`potentials`"),
                "mask": (lambda: crf(x, mask=np.ones((b, t + 1), bool)), "`mask`"),
            }
            call, arg = calls[fault]
            expect_clear_error(call, ["fuzzed_crf", arg])
            record("fuzz/crf", "clear error")
            return
        tags = rng.integers(0, k, (b, t))
        ll = _np(crf.log_likelihood(x, tags, mask))
        decoded, best = (_np(v) for v in crf.decode(x, mask))
        assert np.all(np.isfinite(ll)) and np.all(np.isfinite(best))
        a, s, e = (_np(w).astype("float64") for w in crf._params())
        for i, (log_z, path, best_score) in enumerate(
            brute_force(x.astype("float64"), mask, a, s, e)
        ):
            n = lengths[i]
            y = tags[i, :n]
            gold = 0.0
            if n:
                gold = s[y[0]] + e[y[-1]] + x[i, np.arange(n), y].sum() + a[y[:-1], y[1:]].sum()
            np.testing.assert_allclose(ll[i], gold - log_z, atol=ATOL * 10)
            assert decoded[i, :n].tolist() == path and not decoded[i, n:].any()
            np.testing.assert_allclose(best[i], best_score, atol=ATOL * 10)
        record("fuzz/crf", "matches enumeration")

    check()


FOUR_FAULTS = ("rank", "dtype", "channels")


@st.composite
def image_cases(draw):
    return dict(
        fault=draw(st.sampled_from((None,) * 3 + FOUR_FAULTS)),
        batch=draw(st.integers(0, 2)),
        height=draw(st.integers(1, 5)),
        width=draw(st.integers(1, 5)),
        channels=draw(st.integers(1, 3)),
        patch=(draw(st.integers(1, 3)), draw(st.integers(1, 3))),
        arrangement=draw(st.sampled_from(["renet", "plain"])),
        cell=draw(st.sampled_from(["GRUCell", "LSTMCell"])),
        seed=draw(st.integers(0, 2**16)),
    )


def test_four_directional_2d_batch_equals_each_image_alone():
    @fuzz_settings(10)
    @given(case=image_cases())
    def check(case):
        rng = np.random.default_rng(case["seed"])
        b, h, w, c = case["batch"], case["height"], case["width"], case["channels"]
        layer = ks.layers.FourDirectional2D(
            getattr(ks.cells, case["cell"])(2, dtype=DTYPE),
            arrangement=case["arrangement"],
            patch_size=case["patch"],
            dtype=DTYPE,
            name="fuzzed_2d",
        )
        layer.build((None, h, w, c))
        randomize(layer, case["seed"])
        x = rng.standard_normal((b, h, w, c)).astype(DTYPE)
        fault = case["fault"]
        if fault is not None:
            bad = {
                "rank": x[..., 0],
                "dtype": (x > 0).astype("int32"),
                "channels": np.concatenate([x, x[..., :1]], -1),
            }[fault]
            expect_clear_error(lambda: layer(bad), ["fuzzed_2d"])
            record("fuzz/four_directional_2d", "clear error")
            return
        out = _np(layer(x))
        ph, pw = case["patch"]
        assert out.shape[:3] == (b, -(-h // ph), -(-w // pw)), out.shape
        assert np.all(np.isfinite(out))
        for i in range(b):
            np.testing.assert_allclose(out[i], _np(layer(x[i : i + 1]))[0], atol=ATOL)
        record("fuzz/four_directional_2d", "equals each image alone")

    check()


S2S_FAULTS = ("source_rank", "float_ids", "beam_size", "max_length")
START, END, VOCAB = 2, 3, 9


@st.composite
def s2s_cases(draw):
    return dict(
        fault=draw(st.sampled_from((None,) * 8 + S2S_FAULTS)),
        lengths=draw(st.lists(st.integers(1, 5), min_size=1, max_size=3)),
        pad=draw(st.integers(0, 2)),
        cell=draw(st.sampled_from(["lstm", "gru"])),
        attention=draw(st.sampled_from(["multiplicative", "additive", "none"])),
        layers=draw(st.integers(1, 2)),
        bidirectional=draw(st.booleans()),
        beam=draw(st.integers(1, 3)),
        seed=draw(st.integers(0, 2**16)),
    )


def test_encoder_decoder_batch_equals_each_sentence_alone():
    @fuzz_settings(5)
    @given(case=s2s_cases())
    def check(case):
        rng = np.random.default_rng(case["seed"])
        keras.utils.set_random_seed(case["seed"])
        model = EncoderDecoder(
            VOCAB,
            VOCAB,
            4,
            4,
            5,
            start_id=START,
            end_id=END,
            cell_type=case["cell"],
            attention=case["attention"],
            encoder_layers=case["layers"],
            bidirectional=case["bidirectional"],
            name="fuzzed_seq2seq",
        )
        lengths = case["lengths"]
        b, t = len(lengths), max(lengths) + case["pad"]
        source = rng.integers(4, VOCAB, (b, t))
        source[np.arange(t)[None, :] >= np.array(lengths)[:, None]] = 0
        source = source.astype("int32")
        target = rng.integers(4, VOCAB, (b, 4)).astype("int32")
        target[:, 0] = START
        model((source, target))  # build
        randomize(model, case["seed"], scale=0.8)
        fault = case["fault"]
        if fault is not None:
            calls = {
                "source_rank": (lambda: model.greedy(source[0], max_length=4), "source"),
                "float_ids": (lambda: model((source.astype("float32"), target)), "source"),
                "beam_size": (lambda: model.beam(source, beam_size=0, max_length=4), "beam_size"),
                "max_length": (lambda: model.greedy(source, max_length=-1), "max_length"),
            }
            call, arg = calls[fault]
            expect_clear_error(call, [arg])
            record("fuzz/encoder_decoder", "clear error")
            return
        logits = _np(model((source, target)))
        greedy, greedy_len = (_np(v) for v in model.greedy(source, max_length=6))
        beam, scores, _ = (_np(v) for v in model.beam(source, beam_size=case["beam"], max_length=6))
        assert np.all(np.isfinite(logits)) and np.all(np.isfinite(scores))
        for i, n in enumerate(lengths):
            one = source[i : i + 1, :n]
            np.testing.assert_allclose(
                logits[i], _np(model((one, target[i : i + 1])))[0], atol=1e-5
            )
            g, g_len = (_np(v) for v in model.greedy(one, max_length=6))
            assert greedy[i].tolist() == g[0].tolist() and greedy_len[i] == g_len[0]
            bm, sc, _ = (_np(v) for v in model.beam(one, beam_size=case["beam"], max_length=6))
            assert beam[i, 0].tolist() == bm[0, 0].tolist()
            np.testing.assert_allclose(scores[i], sc[0], atol=1e-4)
        record("fuzz/encoder_decoder", "equals each sentence alone")

    check()
