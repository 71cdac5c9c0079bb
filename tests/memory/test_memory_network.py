"""MemoryNetwork (MemN2N) against the paper's equations in NumPy."""

import keras
import numpy as np
import pytest
import reference_memory as ref
from keras import ops

import keras_seqmodels as ks
from keras_seqmodels.memory.memory_network import position_encoding
from keras_seqmodels.testing import compute_gradients, run_layer_test

F64 = keras.backend.backend() == "tensorflow"
DTYPE = "float64" if F64 else "float32"
ATOL = 1e-9 if F64 else 1e-4
V, D, S, HOPS = 12, 6, 5, 3


def make(**kw):
    return ks.memory.MemoryNetwork(V, D, S, hops=HOPS, return_attention=True, dtype=DTYPE, **kw)


def inputs(seed=0, slots=S):
    rng = np.random.default_rng(seed)
    stories = rng.integers(1, V, (3, slots, 4))
    lengths = rng.integers(0, 5, (3, slots))  # words per sentence, 0 = empty slot
    stories = np.where(np.arange(4)[None, None, :] < lengths[..., None], stories, 0)
    stories[:, 0, 0] = np.maximum(stories[:, 0, 0], 1)  # at least one memory
    queries = rng.integers(1, V, (3, 3))
    queries[:, 2] = 0
    return stories.astype("int32"), queries.astype("int32")


def randomize(layer, seed=1):
    rng = np.random.default_rng(seed)
    for v in layer.trainable_weights:
        v.assign(rng.normal(0, 0.5, v.shape).astype(v.dtype))


def test_forward_matches_numpy():
    stories, queries = inputs()
    layer = make()
    layer([stories, queries])
    randomize(layer)
    logits, attention = layer([stories, queries])
    emb = ops.convert_to_numpy(layer.embeddings)
    temporal = ops.convert_to_numpy(layer.temporal_embeddings)
    ref_logits, ref_att = ref.memn2n_forward(stories, queries, emb, temporal, HOPS)
    np.testing.assert_allclose(ops.convert_to_numpy(logits), ref_logits, atol=ATOL)
    np.testing.assert_allclose(ops.convert_to_numpy(attention), ref_att, atol=ATOL)
    att = ops.convert_to_numpy(attention)
    np.testing.assert_allclose(att.sum(-1), 1.0, atol=1e-6)
    empty = ~(stories != 0).any(-1)
    assert np.all(att[np.broadcast_to(empty[:, None], att.shape)] == 0)


def test_linear_start_removes_the_hop_softmax():
    stories, queries = inputs(2)
    layer = make(linear_start=True)
    layer([stories, queries])
    randomize(layer, 3)
    emb = ops.convert_to_numpy(layer.embeddings)
    temporal = ops.convert_to_numpy(layer.temporal_embeddings)
    logits, _ = layer([stories, queries])
    expected, _ = ref.memn2n_forward(stories, queries, emb, temporal, HOPS, softmax_on=False)
    np.testing.assert_allclose(ops.convert_to_numpy(logits), expected, atol=ATOL)
    layer.enable_softmax()
    logits, _ = layer([stories, queries])
    expected, _ = ref.memn2n_forward(stories, queries, emb, temporal, HOPS)
    np.testing.assert_allclose(ops.convert_to_numpy(logits), expected, atol=ATOL)


def test_position_encoding_formula_by_hand():
    # J = 2 words, d = 2: l_kj = (1 - j/2) - (k/2)(1 - j).
    # j = 1: 0.5 - (k/2) 0 = 0.5; j = 2: 0 - (k/2)(-1) = k/2; padding: 0.
    got = ops.convert_to_numpy(position_encoding(np.array([[1, 1, 0]]), 2))
    expected = [[[0.5, 0.5], [0.5, 1.0], [0.0, 0.0]]]
    np.testing.assert_allclose(got, expected, atol=1e-6)


def test_code_position_encoding_formula_by_hand():
    # The authors' code (build_model.m), J = 3 fixed, d = 2:
    # l_kj = 1 + 4 (k - 3/2)(j - 2) / 6; k = 1: 1 - (j - 2)/3, k = 2: 1 + (j - 2)/3.
    got = ops.convert_to_numpy(position_encoding(np.array([[1, 1, 0]]), 2, length=3))
    expected = [[[4 / 3, 2 / 3], [1.0, 1.0], [0.0, 0.0]]]
    np.testing.assert_allclose(got, expected, atol=1e-6)
    # Unlike the paper's form, the weights do not depend on the sentence's length.
    longer = ops.convert_to_numpy(position_encoding(np.array([[1, 1, 1]]), 2, length=3))
    np.testing.assert_allclose(longer[0, :2], got[0, :2], atol=1e-6)


@pytest.mark.parametrize("softmax_on", [True, False])
def test_code_form_matches_numpy(softmax_on):
    # J = 4 words + the time word; temporal embeddings weighted as word J and
    # left out of empty slots, which are attended with score 0.
    stories, queries = inputs(11)
    layer = make(position_form="code", mask_empty_slots=False, linear_start=not softmax_on)
    layer([stories, queries])
    randomize(layer, 12)
    emb = ops.convert_to_numpy(layer.embeddings)
    temporal = ops.convert_to_numpy(layer.temporal_embeddings)
    logits, attention = layer([stories, queries])
    expected, att = ref.memn2n_forward(
        stories, queries, emb, temporal, HOPS, softmax_on=softmax_on, code_form=True
    )
    # Without the softmax the values grow large: float32 needs a relative tolerance.
    rtol = 1e-9 if F64 else 1e-5
    np.testing.assert_allclose(ops.convert_to_numpy(logits), expected, atol=ATOL, rtol=rtol)
    np.testing.assert_allclose(ops.convert_to_numpy(attention), att, atol=ATOL, rtol=rtol)
    if softmax_on:  # empty slots take a share: the used ones sum to less than 1
        used = (stories != 0).any(-1)
        share = (ops.convert_to_numpy(attention) * used[:, None]).sum(-1)
        assert np.all(share[~used.all(-1)] < 1.0)


def test_code_form_time_weight_by_hand():
    # One one-word memory, one-word question, d = 2, hops = 1, J = 1 + 1:
    # l_k1 = 1 - (k - 3/2)/2 = (1.25, 0.75), l_k2 = (0.75, 1.25) (time word).
    layer = ks.memory.MemoryNetwork(
        3, 2, 1, hops=1, position_form="code", return_attention=True, dtype=DTYPE
    )
    stories, queries = np.array([[[1]]], "int32"), np.array([[2]], "int32")
    layer([stories, queries])
    layer.embeddings.assign(np.ones((2, 3, 2)) * np.array([[[1.0]], [[2.0]]]))
    layer.temporal_embeddings.assign(np.ones((2, 1, 2)))
    logits, attention = layer([stories, queries])
    u = np.array([1.25, 0.75])  # question: l_1 ⊙ E_0[2]
    c = 2.0 * np.array([1.25, 0.75]) + np.array([0.75, 1.25])
    np.testing.assert_allclose(ops.convert_to_numpy(attention), [[[1.0]]], atol=1e-6)
    expected = [[(u + c) @ [2.0, 2.0]] * 3]  # every answer row of E_1 is (2, 2)
    np.testing.assert_allclose(ops.convert_to_numpy(logits), expected, atol=1e-5)


def test_attended_empty_slots_count_absent_slots():
    stories, queries = inputs(13)
    stories[:, 3:] = 0
    layer = make(position_form="code", mask_empty_slots=False)
    layer([stories, queries])
    randomize(layer, 14)
    full, att_full = layer([stories, queries])
    cut, att_cut = layer([stories[:, :3], queries])
    np.testing.assert_allclose(ops.convert_to_numpy(cut), ops.convert_to_numpy(full), atol=ATOL)
    expected, _ = ref.memn2n_forward(
        stories[:, :3], queries, ops.convert_to_numpy(layer.embeddings),
        ops.convert_to_numpy(layer.temporal_embeddings), HOPS, code_form=True, memory_size=S,
    )  # fmt: skip
    np.testing.assert_allclose(ops.convert_to_numpy(cut), expected, atol=ATOL)


def test_new_options_round_trip_and_old_configs_load():
    layer = ks.memory.MemoryNetwork(V, D, S, position_form="code", mask_empty_slots=False)
    config = layer.get_config()
    assert config["position_form"] == "code" and config["mask_empty_slots"] is False
    clone = ks.memory.MemoryNetwork.from_config(config)
    assert clone.position_form == "code" and not clone.mask_empty_slots
    old = {k: v for k, v in config.items() if k not in ("position_form", "mask_empty_slots")}
    legacy = ks.memory.MemoryNetwork.from_config(old)  # a config saved before the options
    assert legacy.position_form == "paper" and legacy.mask_empty_slots
    with pytest.raises(ValueError, match="position_form"):
        ks.memory.MemoryNetwork(V, D, S, position_form="matlab")
    layer = ks.memory.MemoryNetwork(V, D, S, position_form="code")
    with pytest.raises(ValueError, match="static sentence length"):
        layer.build([(None, S, None), (None, 3)])


def test_fewer_slots_equal_empty_slots():
    stories, queries = inputs(4)
    stories[:, 3:] = 0
    layer = make()
    layer([stories, queries])
    randomize(layer, 5)
    full, _ = layer([stories, queries])
    cut, _ = layer([stories[:, :3], queries])
    np.testing.assert_allclose(ops.convert_to_numpy(cut), ops.convert_to_numpy(full), atol=ATOL)


def test_gradients_match_finite_differences():
    stories, queries = inputs(6)
    layer = make()
    layer([stories, queries])
    randomize(layer, 7)
    proj = np.random.default_rng(8).standard_normal((3, V))
    emb = ops.convert_to_numpy(layer.embeddings).astype("float64")
    temporal = ops.convert_to_numpy(layer.temporal_embeddings).astype("float64")

    def loss():
        return ops.sum(layer([stories, queries])[0] * ops.convert_to_tensor(proj.astype(DTYPE)))

    g_emb, g_temp = compute_gradients(loss, [layer.embeddings, layer.temporal_embeddings])
    rng = np.random.default_rng(9)
    eps = 1e-6
    for grad, which in ((g_emb, 0), (g_temp, 1)):
        used = np.unique(np.concatenate([stories.ravel(), queries.ravel()]))
        for _ in range(6):
            idx = (
                rng.integers(HOPS + 1),
                rng.choice(used[used > 0]) if which == 0 else rng.integers(S),
                rng.integers(D),
            )
            vals = []
            for sign in (1, -1):
                e, t = emb.copy(), temporal.copy()
                (e if which == 0 else t)[idx] += sign * eps
                vals.append((ref.memn2n_forward(stories, queries, e, t, HOPS)[0] * proj).sum())
            numeric = (vals[0] - vals[1]) / (2 * eps)
            np.testing.assert_allclose(
                grad[idx], numeric, atol=1e-6 if F64 else 1e-3, rtol=1e-5 if F64 else 1e-3
            )


def test_validation():
    with pytest.raises(ValueError, match="hops"):
        ks.memory.MemoryNetwork(10, 4, 5, hops=0)
    layer = ks.memory.MemoryNetwork(10, 4, 5)
    with pytest.raises(ValueError, match="at most memory_size"):
        layer([np.ones((1, 6, 3), "int32"), np.ones((1, 2), "int32")])


def test_float_ids_raise_naming_layer_argument_and_form():
    stories, queries = inputs()
    layer = ks.memory.MemoryNetwork(V, D, S, name="memn2n")
    layer([stories, queries])
    with pytest.raises(
        ValueError,
        match=r"memn2n: `stories` must be an integer tensor \(batch, memory_size, "
        rf"sentence_length\) of token ids in \[0, vocab_size={V}\)\. Received dtype=float32",
    ):
        layer([stories.astype("float32"), queries])
    with pytest.raises(ValueError, match=r"memn2n: `queries` must be an integer .*float32"):
        layer([stories, queries.astype("float32")])


def test_out_of_range_ids_raise_when_values_are_known():
    stories, queries = inputs()
    layer = ks.memory.MemoryNetwork(V, D, S, name="memn2n")
    layer([stories, queries])
    too_big = stories.copy()
    too_big[1, 0, 0] = V
    with pytest.raises(
        ValueError,
        match=rf"memn2n: `stories` .*\[0, vocab_size={V}\)\. "
        rf"Received an id of {V}",
    ):
        layer([too_big, queries])
    negative = queries.copy()
    negative[2, 1] = -3
    with pytest.raises(ValueError, match=r"memn2n: `queries` .*Received an id of -3"):
        layer([stories, negative])
    # The largest id is fine.
    queries[0, 0] = V - 1
    assert tuple(layer([stories, queries]).shape) == (3, V)


def test_id_checks_do_not_break_tracing():
    stories, queries = inputs(3)
    layer = ks.memory.MemoryNetwork(V, D, S)
    eager = ops.convert_to_numpy(layer([stories, queries]))
    backend = keras.backend.backend()
    if backend == "jax":
        import jax

        traced = jax.jit(lambda s, q: layer([s, q]))(stories, queries)
    elif backend == "tensorflow":
        import tensorflow as tf

        traced = tf.function(lambda s, q: layer([s, q]))(stories, queries)
    else:
        traced = layer([stories, queries])
    np.testing.assert_allclose(ops.convert_to_numpy(traced), eager, atol=1e-5)
    s_in = keras.Input((None, stories.shape[-1]), dtype="int32")
    q_in = keras.Input((queries.shape[-1],), dtype="int32")
    model = keras.Model([s_in, q_in], layer([s_in, q_in]))
    np.testing.assert_allclose(model.predict([stories, queries], verbose=0), eager, atol=1e-5)


def test_layer_contract():
    stories, queries = inputs(10)
    run_layer_test(
        lambda: ks.memory.MemoryNetwork(V, D, S, hops=2),
        [stories, queries],
        expected_output_shape=(3, V),
    )
