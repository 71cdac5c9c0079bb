"""Hand-derived back-propagation through time for the Elman network.

Deep Learning (Goodfellow et al.), eqs. 10.8-10.28: a(t) = b + W h(t-1) + U x(t),
h(t) = tanh(a(t)), o(t) = c + V h(t), ŷ(t) = softmax(o(t)),
L = -Σ_t log ŷ(t)[y(t)]. The gradients below are derived by hand from those
equations and must equal what autodiff gives through ``Recurrent(ElmanCell)``.
"""

import keras
import numpy as np
from keras import ops

import keras_seqmodels as ks
from keras_seqmodels.testing import compute_gradients

F64 = keras.backend.backend() == "tensorflow"
DTYPE = "float64" if F64 else "float32"


def bptt(x, y, U, W, b, V, c):
    """Forward pass and hand-derived gradients, batch summed. x: (B, T, D)."""
    batch, time, _ = x.shape
    units = W.shape[0]
    h = np.zeros((batch, time + 1, units))  # h[:, 0] = h(0) = 0
    yhat = np.zeros((batch, time, V.shape[0]))
    for t in range(time):
        h[:, t + 1] = np.tanh(b + h[:, t] @ W.T + x[:, t] @ U.T)
        o = c + h[:, t + 1] @ V.T
        e = np.exp(o - o.max(-1, keepdims=True))
        yhat[:, t] = e / e.sum(-1, keepdims=True)
    onehot = np.eye(V.shape[0])[y]
    loss = -np.sum(np.log(np.take_along_axis(yhat, y[..., None], -1)))
    grad_o = yhat - onehot  # eq. 10.18
    grads = {k: np.zeros_like(v) for k, v in dict(U=U, W=W, b=b, V=V, c=c).items()}
    grad_h_next = np.zeros((batch, units))
    for t in reversed(range(time)):
        # eq. 10.20/10.21: through o(t) and through h(t+1).
        grad_h = grad_o[:, t] @ V + grad_h_next
        grad_a = (1 - h[:, t + 1] ** 2) * grad_h
        grads["c"] += grad_o[:, t].sum(0)
        grads["V"] += grad_o[:, t].T @ h[:, t + 1]
        grads["b"] += grad_a.sum(0)
        grads["W"] += grad_a.T @ h[:, t]
        grads["U"] += grad_a.T @ x[:, t]
        grad_h_next = grad_a @ W
    return loss, grads


def test_elman_bptt_equals_autodiff():
    rng = np.random.default_rng(0)
    batch, time, dim, units, classes = 3, 7, 4, 5, 6
    x = rng.standard_normal((batch, time, dim)).astype(DTYPE)
    y = rng.integers(0, classes, (batch, time))
    rnn = ks.layers.Recurrent(
        ks.cells.ElmanCell(units, dtype=DTYPE), return_sequences=True, dtype=DTYPE
    )
    head = keras.layers.Dense(classes, dtype=DTYPE)
    rnn.build(x.shape)
    head.build((batch, time, units))
    U = rng.uniform(-0.5, 0.5, (units, dim))
    W = rng.uniform(-0.5, 0.5, (units, units))
    b = rng.uniform(-0.5, 0.5, units)
    V = rng.uniform(-0.5, 0.5, (classes, units))
    c = rng.uniform(-0.5, 0.5, classes)
    # The layers store the transposed matrices (x @ kernel).
    rnn.cell.kernel.assign(U.T.astype(DTYPE))
    rnn.cell.recurrent_kernel.assign(W.T.astype(DTYPE))
    rnn.cell.bias.assign(b.astype(DTYPE))
    head.kernel.assign(V.T.astype(DTYPE))
    head.bias.assign(c.astype(DTYPE))

    def loss_fn():
        logits = head(rnn(x))
        log_probs = ops.log_softmax(logits, axis=-1)
        picked = ops.take_along_axis(log_probs, ops.expand_dims(y, -1), axis=-1)
        return -ops.sum(picked)

    variables = [
        rnn.cell.kernel,
        rnn.cell.recurrent_kernel,
        rnn.cell.bias,
        head.kernel,
        head.bias,
    ]
    autodiff = compute_gradients(loss_fn, variables)
    loss, hand = bptt(x.astype("float64"), y, U, W, b, V, c)
    np.testing.assert_allclose(float(ops.convert_to_numpy(loss_fn())), loss, rtol=1e-6)
    tol = 1e-5 if F64 else 2e-4
    expected = [hand["U"].T, hand["W"].T, hand["b"], hand["V"].T, hand["c"]]
    for got, want in zip(autodiff, expected):
        np.testing.assert_allclose(got, want, atol=tol, rtol=0)
