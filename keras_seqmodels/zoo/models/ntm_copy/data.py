"""Copy-task sequences (Graves et al. 2014) and the bit-error metric.

A sequence of L random 8-bit vectors is followed by a delimiter flag on a
9th input channel; the network must then output the L vectors. The metric
is the number of wrong output bits per sequence (logits thresholded at 0).
"""

import numpy as np

BITS = 8
TEST_SEED, VALID_SEED = 20140, 1410


def copy_batch(rng, batch_size, length):
    """Inputs ``(batch, 2L + 1, 9)``, targets ``(batch, 2L + 1, 8)`` and
    sample weights ``(batch, 2L + 1)`` (1 on the L output steps)."""
    bits = rng.integers(0, 2, (batch_size, length, BITS)).astype("float32")
    steps = 2 * length + 1
    inputs = np.zeros((batch_size, steps, BITS + 1), "float32")
    inputs[:, :length, :BITS] = bits
    inputs[:, length, BITS] = 1.0
    targets = np.zeros((batch_size, steps, BITS), "float32")
    targets[:, length + 1 :] = bits
    weights = np.zeros((batch_size, steps), "float32")
    weights[:, length + 1 :] = 1.0
    return inputs, targets, weights


def bit_errors(model, length, count=256, seed=TEST_SEED, batch_size=64):
    """Mean number of wrong output bits per sequence at one length."""
    rng = np.random.default_rng(seed + length)
    errors = []
    for start in range(0, count, batch_size):
        x, y, w = copy_batch(rng, min(batch_size, count - start), length)
        errors.append(errors_per_sequence(model.predict_on_batch(x), y, w))
    return float(np.concatenate(errors).mean())


def padded_batch(rng, batch_size, max_length, steps, curriculum_length=None, mix=0.2):
    """Copy sequences of mixed lengths, all padded to ``steps`` time steps.

    Each sequence's length is uniform in ``1..curriculum_length`` (default
    ``max_length``), except a fraction ``mix`` uniform in ``1..max_length``
    (the "mixed" curriculum of Zaremba & Sutskever 2014). Padding comes
    after the recall phase, so a causal model's outputs on the weighted steps
    are those of the unpadded sequence; one shape means one XLA compile.
    Returns ``(inputs, targets, weights, lengths)``.
    """
    if steps < 2 * max_length + 1:
        raise ValueError(
            f"padded_batch: `steps` must be at least 2 * max_length + 1 = "
            f"{2 * max_length + 1}. Received: steps={steps}"
        )
    top = curriculum_length or max_length
    lengths = rng.integers(1, top + 1, batch_size)
    wide = rng.random(batch_size) < mix
    lengths = np.where(wide, rng.integers(1, max_length + 1, batch_size), lengths)
    bits = rng.integers(0, 2, (batch_size, max_length, BITS)).astype("float32")
    t = np.arange(steps)[None, :]
    n = lengths[:, None]
    inputs = np.zeros((batch_size, steps, BITS + 1), "float32")
    inputs[:, :max_length, :BITS] = bits * (t[:, :max_length] < n)[:, :, None]
    inputs[np.arange(batch_size), lengths, BITS] = 1.0
    recall = (t > n) & (t <= 2 * n)
    source = np.clip(t - n - 1, 0, max_length - 1)
    targets = np.take_along_axis(bits, source[:, :, None], axis=1) * recall[:, :, None]
    return inputs, targets.astype("float32"), recall.astype("float32"), lengths


def validation_set(max_length=20, per_length=32, long_length=40, long_count=64):
    """The fixed validation sequences (NumPy seed ``VALID_SEED``): lengths
    1..max_length (``per_length`` each) padded to 2 max_length + 1 steps, and
    ``long_count`` sequences of ``long_length``."""
    rng = np.random.default_rng(VALID_SEED)
    parts = [copy_batch(rng, per_length, n) for n in range(1, max_length + 1)]
    steps = 2 * max_length + 1
    x = np.zeros((len(parts) * per_length, steps, BITS + 1), "float32")
    y = np.zeros((len(parts) * per_length, steps, BITS), "float32")
    w = np.zeros((len(parts) * per_length, steps), "float32")
    for i, (xi, yi, wi) in enumerate(parts):
        rows = slice(i * per_length, (i + 1) * per_length)
        x[rows, : xi.shape[1]], y[rows, : xi.shape[1]], w[rows, : xi.shape[1]] = xi, yi, wi
    lengths = np.repeat(np.arange(1, max_length + 1), per_length)
    long = copy_batch(np.random.default_rng(VALID_SEED + long_length), long_count, long_length)
    return (x, y, w, lengths), long


def errors_per_sequence(logits, y, w):
    """Wrong bits of each sequence (logits thresholded at 0)."""
    wrong = (np.asarray(logits) > 0).astype("float32") != y
    return (wrong * w[:, :, None]).sum(axis=(1, 2))
