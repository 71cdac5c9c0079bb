"""Pure addressing, read and write functions of differentiable memories.

The NTM cell and the memory network call these, and the tests check each one
directly against NumPy, as Sonnet does for the DNC's addressing. Shapes use
``N`` memory slots of width ``M`` and ``H`` heads; every function is
batched over a leading axis. All are safe at zero vectors: norms carry an
``epsilon`` inside the square root and powers are taken of ``w + epsilon``,
so neither values nor gradients become NaN.
"""

from keras import ops
from keras.backend import standardize_dtype

EPSILON = 1e-6


def masked_softmax(scores, mask=None, axis=-1):
    """Numerically stable softmax that gives masked positions zero weight.

    Args:
        scores: logits.
        mask: optional boolean of the same shape (True = allowed). A row with
            no allowed position returns zeros.
    """
    if mask is None:
        return ops.softmax(scores, axis=axis)
    mask = ops.cast(mask, scores.dtype)
    # `initial`: an empty batch is legal (ops.max refuses empty tensors).
    top = ops.max(
        scores * mask + (mask - 1.0) * 1e4, axis=axis, keepdims=True, initial=float("-inf")
    )
    shifted = scores - top
    # Clip so exp never overflows on masked-out (possibly huge) scores.
    exps = ops.exp(ops.minimum(shifted, 0.0)) * mask
    return exps / ops.maximum(ops.sum(exps, axis=axis, keepdims=True), 1e-30)


def cosine_similarity(memory, keys, epsilon=EPSILON):
    """K(k, M(i)) = k·M(i) / (sqrt(|k|² + ε) sqrt(|M(i)|² + ε)).

    Args:
        memory: ``(batch, N, M)``.
        keys: ``(batch, H, M)``.

    Returns:
        ``(batch, H, N)``; zero where a key or a slot is zero.
    """
    dots = ops.einsum("bhm,bnm->bhn", keys, memory)
    key_norm = ops.sqrt(ops.sum(ops.square(keys), axis=-1) + epsilon)
    mem_norm = ops.sqrt(ops.sum(ops.square(memory), axis=-1) + epsilon)
    return dots / (key_norm[:, :, None] * mem_norm[:, None, :])


def content_address(memory, keys, strengths, epsilon=EPSILON):
    """Content weighting w_c(i) = softmax_i(β K(k, M(i))).

    Args:
        memory: ``(batch, N, M)``.
        keys: ``(batch, H, M)``.
        strengths: β ≥ 0, ``(batch, H)``.

    Returns:
        ``(batch, H, N)``, each row summing to 1 (stable softmax).
    """
    similarity = cosine_similarity(memory, keys, epsilon)
    return ops.softmax(strengths[:, :, None] * similarity, axis=-1)


def interpolate(content_weights, previous_weights, gates):
    """Interpolation w_g = g w_c + (1 - g) w_{t-1}; ``gates`` ``(batch, H)``."""
    g = gates[:, :, None]
    return g * content_weights + (1.0 - g) * previous_weights


def shift(weights, shift_weights):
    """Circular convolution w̃(i) = Σ_k s(k) w(i - k mod N).

    Args:
        weights: ``(batch, H, N)``.
        shift_weights: ``(batch, H, 2S + 1)``, the distribution over the
            offsets ``-S..S`` (2S + 1 ≤ N).

    Returns:
        ``(batch, H, N)``.
    """
    n = weights.shape[-1]
    width = shift_weights.shape[-1]
    radius = width // 2
    offsets = ops.arange(-radius, radius + 1)
    # index[i, k] = (i - offset_k) mod N: all shifted copies in one gather.
    index = ops.mod(ops.arange(n)[:, None] - offsets[None, :], n)
    shifted = ops.take(weights, index, axis=-1)
    return ops.sum(shifted * shift_weights[:, :, None, :], axis=-1)


def sharpen(weights, gammas, epsilon=EPSILON):
    """Sharpening w(i) = w̃(i)^γ / Σ_j w̃(j)^γ, with γ ≥ 1, ``(batch, H)``.

    The power is taken of ``w̃ + ε`` (as exp(γ log(w̃ + ε))), so zero weights
    give finite gradients with respect to γ.
    """
    powered = ops.exp(gammas[:, :, None] * ops.log(weights + epsilon))
    return powered / ops.sum(powered, axis=-1, keepdims=True)


HALF_DTYPES = ("float16", "bfloat16")


def address(memory, previous_weights, keys, strengths, gates, shift_weights, gammas):
    """The NTM's full addressing: content, interpolation, shift, sharpening.

    Under mixed precision (float16 or bfloat16 inputs) the addressing runs in
    float32 and the weights are cast back: ``log(w + ε)`` has the derivative
    ``1 / ε = 10⁶`` at a weight that underflowed to zero, beyond float16's
    range (65,504), which turned every gradient into NaN.
    """
    dtype = standardize_dtype(previous_weights.dtype)
    args = (memory, previous_weights, keys, strengths, gates, shift_weights, gammas)
    if dtype in HALF_DTYPES:
        args = tuple(ops.cast(a, "float32") for a in args)
    memory, previous_weights, keys, strengths, gates, shift_weights, gammas = args
    content = content_address(memory, keys, strengths)
    gated = interpolate(content, previous_weights, gates)
    weights = sharpen(shift(gated, shift_weights), gammas)
    return ops.cast(weights, dtype) if dtype in HALF_DTYPES else weights


def log_weights(weights, epsilon=EPSILON):
    """``log(w + ε)`` in at least float32 (see ``address`` for why)."""
    if standardize_dtype(weights.dtype) in HALF_DTYPES:
        weights = ops.cast(weights, "float32")
    return ops.log(weights + epsilon)


def read(memory, weights):
    """Reads r_h = Σ_i w_h(i) M(i): ``(batch, H, N)`` → ``(batch, H, M)``."""
    return ops.einsum("bhn,bnm->bhm", weights, memory)


def write(memory, weights, erase, add):
    """Erase then add, for all write heads at once.

    M'(i) = M(i) ⊙ Π_h (1 - w_h(i) e_h) + Σ_h w_h(i) a_h.

    Args:
        memory: ``(batch, N, M)``.
        weights: ``(batch, H, N)``.
        erase: ``(batch, H, M)`` in [0, 1].
        add: ``(batch, H, M)``.
    """
    keep = ops.prod(1.0 - weights[:, :, :, None] * erase[:, :, None, :], axis=1)
    return memory * keep + ops.einsum("bhn,bhm->bnm", weights, add)
