"""NumPy float64 references of the linear recurrences, one step at a time.

Each function is written from the paper's equations in the paper's notation
(the tests map the layers' weights onto these arguments), loops over time
explicitly and runs in float64, so it shares no code with the layers:

- ``lru_step``: Orvieto et al. 2023, "Resurrecting Recurrent Neural Networks
  for Long Sequences" (section 3 and appendix A).
- ``rglru_step`` / ``causal_conv1d`` / ``hawk_block``: De et al. 2024,
  "Griffin: Mixing Gated Linear Recurrences with Local Attention for
  Efficient Language Models" (section 2.4 and figure 2).
- ``selective_ssm_step``: Gu & Dao 2023, "Mamba: Linear-Time Sequence
  Modeling with Selective State Spaces" (algorithm 2, the S6 layer).

``run`` drives any of the steps over a batch with a mask: a masked step keeps
the state and outputs zeros, as the package's ``Recurrent`` does.
"""

import math

import numpy as np


def sigmoid(z):
    return 1.0 / (1.0 + np.exp(-z))


def softplus(z):
    return np.logaddexp(0.0, z)


def gelu_tanh(z):
    """GeLU, tanh approximation (``jax.nn.gelu``'s default, the anchor's)."""
    return 0.5 * z * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (z + 0.044715 * z**3)))


def run(step, x, states, mask=None, go_backwards=False):
    """Run ``step(x_t, states) -> (y_t, states)`` over ``x`` (batch, time, ...).

    Masked steps keep every state and output zeros. With ``go_backwards`` the
    steps run last to first and the outputs are returned in that (reversed)
    order, as Keras's RNN layers return them. Returns ``(outputs, states)``.
    """
    x = np.asarray(x, np.float64)
    batch, time = x.shape[:2]
    order = range(time - 1, -1, -1) if go_backwards else range(time)
    outputs = []
    for t in order:
        y, new = step(x[:, t], states)
        if mask is None:
            states = new
        else:
            keep = np.asarray(mask[:, t], bool)
            states = [
                np.where(keep.reshape((batch,) + (1,) * (n.ndim - 1)), n, s)
                for n, s in zip(new, states)
            ]
            y = np.where(keep.reshape((batch,) + (1,) * (y.ndim - 1)), y, 0.0)
        outputs.append(y)
    if not outputs:
        return np.zeros((batch, 0)), states
    return np.stack(outputs, axis=1), states


# --- LRU -------------------------------------------------------------------


def lru_lambda(nu_log, theta_log):
    """lambda_j = exp(-exp(nu_log_j) + i exp(theta_log_j)) (section 3.3)."""
    return np.exp(-np.exp(nu_log) + 1j * np.exp(theta_log))


def lru_ring_init(rng, n, r_min, r_max, max_phase):
    """The paper's initialisation: |lambda| uniform on the ring [r_min, r_max]
    (r^2 uniform, so uniform in area) and its phase uniform in [0, max_phase];
    gamma = sqrt(1 - |lambda|^2). Returns ``(nu_log, theta_log, gamma_log)``."""
    u1, u2 = rng.uniform(size=n), rng.uniform(size=n)
    nu_log = np.log(-0.5 * np.log(u1 * (r_max**2 - r_min**2) + r_min**2))
    theta_log = np.log(max_phase * u2)
    gamma_log = np.log(np.sqrt(1.0 - np.abs(lru_lambda(nu_log, theta_log)) ** 2))
    return nu_log, theta_log, gamma_log


def lru_step(p):
    """One LRU step, paper notation (appendix A):

    x_t = lambda * x_{t-1} + (gamma * B) u_t     (complex, diagonal lambda)
    y_t = Re(C x_t) + D u_t

    ``p``: ``nu_log``, ``theta_log``, ``gamma_log`` (N,); ``B`` complex
    (N, H_in); ``C`` complex (H_out, N); ``D`` either a vector (H,) (the
    paper's diagonal D, H_in = H_out) or a matrix (H_in, H_out).
    State: one complex array (batch, N).
    """
    lam = lru_lambda(p["nu_log"], p["theta_log"])
    b_norm = p["B"] * np.exp(p["gamma_log"])[:, None]

    def step(u, states):
        (x,) = states
        x = lam * x + u @ b_norm.T
        d = p["D"]
        skip = u * d if d.ndim == 1 else u @ d
        y = (x @ p["C"].T).real + skip
        return y, [x]

    return step


# --- RG-LRU and the Hawk block ---------------------------------------------


def rglru_step(p, c=8.0):
    """One RG-LRU step (Griffin, section 2.4):

    r_t = sigmoid(W_a x_t + b_a)              recurrence gate
    i_t = sigmoid(W_x x_t + b_x)              input gate
    a_t = a^(c r_t),  a = exp(-softplus(a_param))   (= sigmoid(-a_param))
    h_t = a_t h_{t-1} + sqrt(1 - a_t^2) (i_t x_t)

    ``p``: ``W_a``, ``W_x`` (D, D) acting as ``x @ W``, ``b_a``, ``b_x``,
    ``a_param`` (D,). The anchor's ``a_param`` sign convention is used:
    log a_t = -c r_t softplus(a_param). State: (batch, D).
    """

    def step(x, states):
        (h,) = states
        r = sigmoid(x @ p["W_a"] + p["b_a"])
        i = sigmoid(x @ p["W_x"] + p["b_x"])
        log_a = -c * r * softplus(p["a_param"])
        a = np.exp(log_a)
        # 1 - a^2 as -expm1(2 log a): exact in float64 also for a within 1e-16 of 1.
        h = a * h + np.sqrt(-np.expm1(2.0 * log_a)) * (i * x)
        return h, [h]

    return step


def causal_conv1d_step(w, b):
    """Short causal depthwise convolution, one step: y_t = sum_k w[k] x_{t-K+1+k} + b.

    ``w`` (K, D): ``w[K-1]`` multiplies the current input (the anchor's layout).
    State: the last K-1 inputs, oldest first, (batch, K-1, D).
    """

    def step(x, states):
        (buf,) = states
        window = np.concatenate([buf, x[:, None, :]], axis=1)  # (batch, K, D)
        y = np.einsum("bkd,kd->bd", window, w) + b
        return y, [window[:, 1:]]

    return step


def hawk_block_step(p, c=8.0):
    """Griffin's recurrent block (figure 2), one step:

    y_t = GeLU(x_t W_y + b_y)
    z_t = RG-LRU(Conv1D(x_t W_x + b_x))
    out_t = (z_t * y_t) W_out + b_out

    ``p``: ``W_y``, ``b_y``, ``W_x``, ``b_x``, ``conv_w`` (K, D), ``conv_b``,
    the RG-LRU's ``W_a``, ``b_a``, ``W_i``, ``b_i``, ``a_param``, and ``W_out``,
    ``b_out``. States: ``[conv buffer (batch, K-1, D), h (batch, D)]``.
    """
    conv = causal_conv1d_step(p["conv_w"], p["conv_b"])
    lru = rglru_step(
        {
            "W_a": p["W_a"],
            "b_a": p["b_a"],
            "W_x": p["W_i"],
            "b_x": p["b_i"],
            "a_param": p["a_param"],
        },
        c=c,
    )

    def step(x, states):
        buf, h = states
        y = gelu_tanh(x @ p["W_y"] + p["b_y"])
        z, (buf,) = conv(x @ p["W_x"] + p["b_x"], [buf])
        z, (h,) = lru(z, [h])
        return (z * y) @ p["W_out"] + p["b_out"], [buf, h]

    return step


# --- Selective SSM (Mamba's S6) --------------------------------------------


def selective_ssm_step(p):
    """One S6 step (Mamba, algorithm 2; ``selective_scan_ref`` of mamba_ssm):

    Delta_t = softplus(u_t W_xdt W_dt + b_dt)        (D,)
    B_t = u_t W_B,  C_t = u_t W_C                    (N,)
    A = -exp(A_log)                                  (D, N)
    h_t = exp(Delta_t A) * h_{t-1} + (Delta_t u_t)[:, None] * B_t[None, :]
    y_t = h_t C_t + D * u_t

    ``p``: ``W_xdt`` (D, R), ``W_B``, ``W_C`` (D, N), ``W_dt`` (R, D),
    ``b_dt`` (D,), ``A_log`` (D, N), ``D`` (D,). State: (batch, D, N).
    """
    a = -np.exp(p["A_log"])

    def step(u, states):
        (h,) = states
        delta = softplus(u @ p["W_xdt"] @ p["W_dt"] + p["b_dt"])  # (batch, D)
        b_t = u @ p["W_B"]  # (batch, N)
        c_t = u @ p["W_C"]
        h = np.exp(delta[:, :, None] * a) * h + (delta * u)[:, :, None] * b_t[:, None, :]
        y = np.einsum("bdn,bn->bd", h, c_t) + p["D"] * u
        return y, [h]

    return step
