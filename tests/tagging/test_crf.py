import itertools

import keras
import numpy as np
import pytest
from keras import ops

import keras_seqmodels as ks
from keras_seqmodels.tagging.crf import crf_log_likelihood, crf_log_norm
from keras_seqmodels.testing import compute_gradients, run_layer_test

F64 = keras.backend.backend() == "tensorflow"
DTYPE = "float64" if F64 else "float32"
ATOL = 1e-9 if F64 else 2e-5


def brute_force(x, mask, A, s, e):
    """Enumerate every tag sequence: log Z, best path and its score per row."""
    out = []
    for b in range(x.shape[0]):
        length = int(mask[b].sum())
        if length == 0:
            out.append((0.0, [], 0.0))
            continue
        scores = {}
        for y in itertools.product(range(x.shape[2]), repeat=length):
            sc = s[y[0]] + e[y[-1]] + sum(x[b, t, y[t]] for t in range(length))
            sc += sum(A[y[t - 1], y[t]] for t in range(1, length))
            scores[y] = sc
        values = np.array(list(scores.values()))
        log_z = values.max() + np.log(np.exp(values - values.max()).sum())
        best = max(scores, key=scores.get)
        out.append((log_z, list(best), scores[best]))
    return out


def make_crf(num_tags=3, seed=0):
    crf = ks.tagging.CRF(num_tags, dtype=DTYPE)
    crf.build((None, None, num_tags))
    rng = np.random.default_rng(seed)
    for v in crf.weights:
        v.assign(rng.normal(0, 1, v.shape).astype(DTYPE))
    return crf


def data(seed=1):
    rng = np.random.default_rng(seed)
    x = rng.normal(0, 1.5, (4, 5, 3)).astype(DTYPE)
    mask = np.array([[1, 1, 1, 1, 1], [1, 1, 1, 0, 0], [1, 0, 0, 0, 0], [0, 0, 0, 0, 0]], bool)
    tags = rng.integers(0, 3, (4, 5))
    return x, mask, tags


def weights(crf):
    return [ops.convert_to_numpy(w).astype("float64") for w in crf._params()]


def test_log_likelihood_and_viterbi_match_enumeration():
    crf = make_crf()
    x, mask, tags = data()
    ref = brute_force(x.astype("float64"), mask, *weights(crf))
    ll = ops.convert_to_numpy(crf.log_likelihood(x, tags, mask))
    decoded, best = (ops.convert_to_numpy(t) for t in crf.decode(x, mask))
    for b, (log_z, path, best_score) in enumerate(ref):
        length = int(mask[b].sum())
        A, s, e = weights(crf)
        y = tags[b, :length]
        gold = 0.0
        if length:
            gold = s[y[0]] + e[y[-1]] + sum(x[b, t, y[t]] for t in range(length))
            gold += sum(A[y[t - 1], y[t]] for t in range(1, length))
        np.testing.assert_allclose(ll[b], gold - log_z, atol=ATOL * 10)
        assert decoded[b, :length].tolist() == path
        assert (decoded[b, length:] == 0).all()
        np.testing.assert_allclose(best[b], best_score, atol=ATOL * 10)


def test_call_decodes_and_padding_does_not_change_tags():
    crf = make_crf(seed=3)
    x, mask, _ = data(seed=4)
    together = ops.convert_to_numpy(crf(x, mask=mask))
    for b in range(3):
        length = int(mask[b].sum())
        alone = ops.convert_to_numpy(crf(x[b : b + 1, :length]))
        assert together[b, :length].tolist() == alone[0].tolist()


def test_gradients_match_finite_differences():
    crf = make_crf(seed=5)
    x, mask, tags = data(seed=6)

    def loss():
        return -ops.sum(crf_log_likelihood(x, tags, mask, *crf._params()))

    grads = compute_gradients(loss, crf.weights)
    params = weights(crf)

    def numpy_loss(p):
        total = 0.0
        for b, (log_z, _, _) in enumerate(brute_force(x.astype("float64"), mask, *p)):
            length = int(mask[b].sum())
            if not length:
                continue
            y = tags[b, :length]
            gold = p[1][y[0]] + p[2][y[-1]] + sum(x[b, t, y[t]] for t in range(length))
            gold += sum(p[0][y[t - 1], y[t]] for t in range(1, length))
            total -= gold - log_z
        return total

    eps = 1e-6
    for i, (grad, param) in enumerate(zip(grads, params)):
        numeric = np.zeros_like(param)
        for idx in np.ndindex(param.shape):
            plus = [q.copy() for q in params]
            minus = [q.copy() for q in params]
            plus[i][idx] += eps
            minus[i][idx] -= eps
            numeric[idx] = (numpy_loss(plus) - numpy_loss(minus)) / (2 * eps)
        np.testing.assert_allclose(grad, numeric, atol=1e-5 if F64 else 2e-3)


def test_log_norm_of_empty_rows_is_zero():
    crf = make_crf()
    x, mask, _ = data()
    log_z = ops.convert_to_numpy(crf_log_norm(x, mask, *crf._params()))
    assert log_z[3] == 0.0


def test_training_loss_is_negative_log_likelihood_and_fits():
    crf = make_crf(seed=7)
    x, mask, tags = data(seed=8)
    out = crf(x, tags=tags, mask=mask)
    assert tuple(out.shape) == (4, 5)
    expected = -np.mean(ops.convert_to_numpy(crf.log_likelihood(x, tags, mask)))
    np.testing.assert_allclose(ops.convert_to_numpy(crf.losses[-1]), expected, rtol=1e-5)
    # A model whose only loss is the CRF's trains with loss=None, and learns
    # to reproduce fixed targets.
    rng = np.random.default_rng(0)
    feats = rng.normal(size=(16, 6, 4)).astype("float32")
    target = np.argmax(feats[..., :3], axis=-1).astype("int32")
    inp = keras.Input((6, 4))
    gold = keras.Input((6,), dtype="int32")
    pot = keras.layers.Dense(3)(inp)
    layer = ks.tagging.CRF(3)
    model = keras.Model([inp, gold], layer(pot, tags=gold))
    model.compile(keras.optimizers.Adam(0.05), loss=None)
    hist = model.fit([feats, target], epochs=40, batch_size=16, verbose=0)
    assert hist.history["loss"][-1] < 0.5 * hist.history["loss"][0]
    pred = ops.convert_to_numpy(model.predict([feats, target], verbose=0))
    assert (pred == target).mean() > 0.9


def test_layer_contract():
    run_layer_test(
        lambda: ks.tagging.CRF(4, transitions_initializer="random_normal"),
        np.random.default_rng(0).normal(size=(2, 5, 4)).astype("float32"),
        expected_output_shape=(2, 5),
        run_fit=False,
        run_mixed_precision=False,
    )


def test_mixed_precision_runs_in_float32():
    crf = ks.tagging.CRF(3, dtype="mixed_float16")
    out = crf(np.random.default_rng(0).normal(size=(2, 4, 3)).astype("float16"))
    assert keras.backend.standardize_dtype(out.dtype) == "int32"


def test_validation_errors():
    with pytest.raises(ValueError, match="num_tags"):
        ks.tagging.CRF(0)
    with pytest.raises(ValueError, match="rank 3"):
        ks.tagging.CRF(3)(np.zeros((2, 3), "float32"))
    with pytest.raises(ValueError, match="num_tags=3"):
        ks.tagging.CRF(3)(np.zeros((2, 3, 4), "float32"))
    with pytest.raises(ValueError, match="floating-point"):
        ks.tagging.CRF(3)(np.zeros((2, 3, 3), "int32"))
