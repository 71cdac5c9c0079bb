"""How an XLA-compiled time loop should read a precomputed input projection.

A recurrent loop that takes ``Z = X W + b`` for all steps before the loop
reads, at each step, the slice ``Z[t]`` of a ``(time, batch, k units)``
sequence and splits it into its ``k`` gate blocks. On a CPU, XLA compiles
that read (a dynamic slice, then column slices, fused into the step's
element-wise work) into code that ran several times slower than reading
``k`` separate ``(time, batch, units)`` sequences, so much slower that
projecting ``x(t)`` inside the loop won. This script times one GRU-like step
(reset after the recurrent product) over 100 steps, batch 32, 256 units, in
four forms, all compiled with XLA, in one process, in turns:

- ``in-loop``: ``x(t) W`` inside the loop (input width 128);
- ``one sequence``: ``Z`` precomputed, ``Z[t]`` split into gate columns;
- ``per gate``: one precomputed sequence per gate, concatenated in the step
  (XLA reads the slices of the concatenation from the parts: what
  ``keras_seqmodels.layers.fused_rnn`` does);
- ``no product``: the per-gate form without the recurrent product, the
  element-wise work and the reads alone.

    python benchmarks/xla_loop_reads.py             # TensorFlow
    KERAS_BACKEND=jax python benchmarks/xla_loop_reads.py
"""

import argparse
import os
import time

import numpy as np

BATCH, STEPS, FEATURES, UNITS = 32, 100, 128, 256


def tensorflow_loops(u_, w_):
    import tensorflow as tf

    def run(step):
        @tf.function(jit_compile=True, autograph=False)
        def loop(xs):
            def body(i, h, out):
                h = step(h, [x[i] for x in xs])
                return i + 1, h, out.write(i, h)

            out = tf.TensorArray(tf.float32, size=STEPS)
            h0 = tf.zeros((BATCH, UNITS))
            _, _, out = tf.while_loop(lambda i, *_: i < STEPS, body, (0, h0, out))
            return out.stack()

        return loop

    return run, tf.matmul, tf.concat, tf.sigmoid, tf.tanh, tf.constant


def jax_loops(u_, w_):
    import jax
    import jax.numpy as jnp

    def run(step):
        @jax.jit
        def loop(xs):
            def body(h, x_t):
                h = step(h, list(x_t))
                return h, h

            return jax.lax.scan(body, jnp.zeros((BATCH, UNITS)), tuple(xs))[1]

        return loop

    def concat(parts, axis):
        return jnp.concatenate(parts, axis=axis)

    return run, jnp.matmul, concat, jax.nn.sigmoid, jnp.tanh, jnp.asarray


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=30)
    args = parser.parse_args()
    backend = os.environ.get("KERAS_BACKEND", "tensorflow")
    rng = np.random.default_rng(0)
    n = UNITS
    u_np = (0.05 * rng.standard_normal((n, 3 * n))).astype("float32")
    w_np = (0.05 * rng.standard_normal((FEATURES, 3 * n))).astype("float32")
    x_np = rng.standard_normal((STEPS, BATCH, FEATURES)).astype("float32")
    z_np = x_np @ w_np
    loops = tensorflow_loops if backend == "tensorflow" else jax_loops
    run, matmul, concat, sigmoid, tanh, const = loops(u_np, w_np)
    u_, w_ = const(u_np), const(w_np)

    def gru(h, z, recurrent=True):
        hu = matmul(h, u_) if recurrent else concat([h, h, h], -1)
        zr = sigmoid(z[:, : 2 * n] + hu[:, : 2 * n])
        upd, r = zr[:, :n], zr[:, n:]
        cand = tanh(z[:, 2 * n :] + r * hu[:, 2 * n :])
        return upd * h + (1.0 - upd) * cand

    forms = {
        "in-loop": (lambda h, x: gru(h, matmul(x[0], w_)), [x_np]),
        "one sequence": (lambda h, x: gru(h, x[0]), [z_np]),
        "per gate": (
            lambda h, x: gru(h, concat(x, -1)),
            [z_np[..., g * n : (g + 1) * n] for g in range(3)],
        ),
        "no product": (
            lambda h, x: gru(h, concat(x, -1), recurrent=False),
            [z_np[..., g * n : (g + 1) * n] for g in range(3)],
        ),
    }
    compiled = {}
    for name, (step, arrays) in forms.items():
        fn, xs = run(step), [const(a) for a in arrays]
        np.asarray(fn(xs))  # compile
        compiled[name] = (fn, xs)
    times = {name: [] for name in compiled}
    for _ in range(args.repeats):
        for name, (fn, xs) in compiled.items():
            start = time.perf_counter()
            np.asarray(fn(xs))
            times[name].append(time.perf_counter() - start)
    print(f"{backend}: {STEPS} steps, batch {BATCH}, {UNITS} units, median ms per loop")
    for name, t in times.items():
        print(f"  {name:14s} {1e3 * np.median(t):7.2f}")


if __name__ == "__main__":
    main()
