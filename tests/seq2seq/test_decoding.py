"""Greedy, sampling and beam search against exhaustive search (any backend)."""

import itertools

import keras
import numpy as np
import pytest
from keras import ops

from keras_seqmodels.seq2seq import beam_search, greedy_decode, sample_decode

V, D, EOS, START = 5, 6, 1, 2


def toy_rnn(seed=0, eos_bias=0.0):
    """A small fixed recurrent scorer whose state matters: h' = tanh(E[y] + h W)."""
    rng = np.random.default_rng(seed)
    emb = rng.normal(size=(V, D)).astype("float32")
    w = (rng.normal(size=(D, D)) * 0.8).astype("float32")
    u = (rng.normal(size=(D, V)) * 1.5).astype("float32")
    bias = np.zeros(V, "float32")
    bias[0] = -1e4  # the padding id is never produced
    bias[EOS] = eos_bias

    def step(tokens, state, memory):
        h = ops.tanh(ops.take(emb, tokens, axis=0) + ops.matmul(state[0], w) + memory[0])
        return ops.matmul(h, u) + bias, [h]

    def numpy_logp(prefix, m):
        h = np.zeros(D, "float64")
        tok, out = START, 0.0
        for y in prefix:
            h = np.tanh(emb[tok] + h @ w + m)
            z = h @ u + bias
            z = z - z.max()
            out += z[y] - np.log(np.exp(z).sum())
            tok = y
        return out

    return step, numpy_logp


def _memory(batch, seed=1):
    return [np.random.default_rng(seed).normal(size=(batch, D)).astype("float32") * 0.5]


def _state(batch):
    return [np.zeros((batch, D), "float32")]


def exhaustive(numpy_logp, m, max_length, alpha):
    """Every output of at most max_length tokens: EOS-terminated or cut."""
    best = []
    for n in range(1, max_length + 1):
        for body in itertools.product(range(2, V), repeat=n - 1):
            for last in range(1, V):
                seq = list(body) + [last]
                if last != EOS and n < max_length:
                    continue
                lp = ((5.0 + n) / 6.0) ** alpha
                best.append((numpy_logp(seq, m) / lp, seq))
    best.sort(key=lambda x: -x[0])
    return best


def _np(x):
    return ops.convert_to_numpy(x)


@pytest.mark.parametrize("alpha", [0.0, 0.6])
def test_beam_search_equals_exhaustive_search(alpha):
    step, numpy_logp = toy_rnn()
    batch, max_length = 2, 3
    memory = _memory(batch)
    # 4 candidates per step from 3 steps: a beam of 64 keeps every prefix,
    # so the search is exhaustive and must find the exact optimum.
    tokens, scores, lengths = beam_search(
        step, _state(batch), memory, batch, START, EOS, max_length,
        beam_size=64, alpha=alpha,
    )
    tokens, scores, lengths = _np(tokens), _np(scores), _np(lengths)
    for b in range(batch):
        ref = exhaustive(numpy_logp, memory[0][b].astype("float64"), max_length, alpha)
        n = lengths[b, 0]
        assert tokens[b, 0, :n].tolist() == ref[0][1]
        np.testing.assert_allclose(scores[b, 0], ref[0][0], rtol=1e-4, atol=1e-4)
        # The first hypotheses, in order, are the exhaustive ranking's.
        for k in range(5):
            np.testing.assert_allclose(scores[b, k], ref[k][0], rtol=1e-4, atol=1e-4)


def test_beam_hypotheses_in_score_order_and_padded_after_eos():
    step, _ = toy_rnn(seed=3)
    batch = 3
    tokens, scores, lengths = beam_search(
        step, _state(batch), _memory(batch, 4), batch, START, EOS, 6, beam_size=4
    )
    tokens, scores, lengths = _np(tokens), _np(scores), _np(lengths)
    assert np.all(np.diff(scores, axis=1) <= 1e-6)
    for b, k in itertools.product(range(batch), range(4)):
        n = lengths[b, k]
        row = tokens[b, k]
        assert np.all(row[n:] == 0)
        assert np.all(row[: n - 1] != EOS)
        if n < 6:
            assert row[n - 1] == EOS


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_beam_one_equals_greedy(seed):
    step, _ = toy_rnn(seed=seed)
    batch = 4
    memory = _memory(batch, seed + 10)
    g_tokens, g_lengths = greedy_decode(step, _state(batch), memory, batch, START, EOS, 7)
    b_tokens, _, b_lengths = beam_search(
        step, _state(batch), memory, batch, START, EOS, 7, beam_size=1
    )
    np.testing.assert_array_equal(_np(g_tokens), _np(b_tokens)[:, 0])
    np.testing.assert_array_equal(_np(g_lengths), _np(b_lengths)[:, 0])


def test_greedy_matches_numpy_argmax_and_stops_at_eos():
    step, numpy_logp = toy_rnn(seed=5, eos_bias=1.0)
    batch = 3
    memory = _memory(batch, 7)
    tokens, lengths = greedy_decode(step, _state(batch), memory, batch, START, EOS, 8)
    tokens, lengths = _np(tokens), _np(lengths)
    for b in range(batch):
        m = memory[0][b].astype("float64")
        prefix = []
        while len(prefix) < 8 and (not prefix or prefix[-1] != EOS):
            cand = [numpy_logp(prefix + [v], m) for v in range(V)]
            prefix.append(int(np.argmax(cand)))
        assert tokens[b, : len(prefix)].tolist() == prefix
        assert lengths[b] == len(prefix)
        assert np.all(tokens[b, len(prefix) :] == 0)


def test_decoding_stops_at_eos_for_every_sentence():
    # EOS is by far the likeliest token: every hypothesis is one token long.
    step, _ = toy_rnn(seed=2, eos_bias=50.0)
    tokens, lengths = greedy_decode(step, _state(2), _memory(2), 2, START, EOS, 9)
    assert _np(lengths).tolist() == [1, 1]
    assert _np(tokens).tolist() == [[EOS] + [0] * 8] * 2
    tokens, _, lengths = beam_search(step, _state(2), _memory(2), 2, START, EOS, 9,
                                     beam_size=3)
    assert _np(lengths)[:, 0].tolist() == [1, 1]
    assert _np(tokens)[:, 0, 0].tolist() == [EOS, EOS]


def test_sampling_top_k_one_is_greedy_and_sampling_follows_distribution():
    step, _ = toy_rnn(seed=4)
    batch = 3
    memory = _memory(batch, 2)
    g, _ = greedy_decode(step, _state(batch), memory, batch, START, EOS, 5)
    s, _ = sample_decode(step, _state(batch), memory, batch, START, EOS, 5,
                         temperature=0.7, top_k=1, seed=3)
    np.testing.assert_array_equal(_np(g), _np(s))
    # First-token frequencies over many samples match softmax(logits / T).
    n = 4000
    logits, _ = step(np.full((1,), START, "int32"), _state(1), _memory(1, 9))
    z = _np(logits)[0] / 2.0
    p = np.exp(z - z.max())
    p /= p.sum()
    s, _ = sample_decode(step, _state(n), [np.repeat(_memory(1, 9)[0], n, 0)], n,
                         START, EOS, 1, temperature=2.0, seed=11)
    freq = np.bincount(_np(s)[:, 0], minlength=V) / n
    np.testing.assert_allclose(freq, p, atol=0.03)
    # top_k=2 never draws outside the two likeliest tokens.
    s, _ = sample_decode(step, _state(n), [np.repeat(_memory(1, 9)[0], n, 0)], n,
                         START, EOS, 1, temperature=5.0, top_k=2, seed=12)
    assert set(np.unique(_np(s)[:, 0])) <= set(np.argsort(-z)[:2].tolist())


def test_bad_arguments_raise_clear_errors():
    step, _ = toy_rnn()
    with pytest.raises(ValueError, match="beam_size"):
        beam_search(step, _state(1), _memory(1), 1, START, EOS, 3, beam_size=0)
    with pytest.raises(ValueError, match="temperature"):
        sample_decode(step, _state(1), _memory(1), 1, START, EOS, 3, temperature=0.0)


@pytest.mark.tf_only
def test_beam_search_traces_to_stock_ops_only():
    if keras.backend.backend() != "tensorflow":
        pytest.skip("graph inspection needs TensorFlow")
    import tensorflow as tf

    step, _ = toy_rnn()

    @tf.function(input_signature=[tf.TensorSpec([None, D], tf.float32)])
    def search(m):
        n = tf.shape(m)[0]
        return beam_search(step, [tf.zeros([n, D])], [m], n, START, EOS, 5, beam_size=3)

    graph = search.get_concrete_function().graph.as_graph_def()
    ops_used = {node.op for node in graph.node}
    for f in graph.library.function:
        ops_used |= {node.op for node in f.node_def}
    registered = set(tf.raw_ops.__dict__)
    assert "While" in ops_used or "StatelessWhile" in ops_used
    assert not any("GatherTree" in op for op in ops_used)
    unknown = {op for op in ops_used if op not in registered}
    assert not unknown, unknown
