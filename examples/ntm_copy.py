"""Train a small Neural Turing Machine on the copy task and plot its heads.

    python examples/ntm_copy.py [--steps 300] [--max-length 5] [--plot ntm.png]

A sequence of random 8-bit vectors, a delimiter, then the network must
repeat the vectors. With the defaults (lengths 1-5, 300 Adam steps, about a
minute on a laptop CPU) the bit errors fall well below chance (half of the
bits); the zoo recipe (`seqmodels train ntm-copy`) trains the full task. The plot shows
the write and read weightings over time: a trained NTM writes to
consecutive slots, then reads them back in the same order.
"""

import argparse

import numpy as np


def plot(model, x, path):
    """The write and read weightings over ``x`` (one sequence) as a PNG."""
    from keras_seqmodels.utils.plotting import ntm_weightings, plot_ntm_weightings

    reads, writes = ntm_weightings(model, x[0])
    plot_ntm_weightings(reads, writes, path)


def main(argv=None):
    import keras

    from keras_seqmodels.zoo.models.ntm_copy import data, recipe
    from keras_seqmodels.zoo.models.ntm_copy.config import CONFIG

    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--max-length", type=int, default=5)
    parser.add_argument("--memory-size", type=int, default=16)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--plot", default=None, help="PNG of the weightings")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    keras.utils.set_random_seed(args.seed)
    rng = np.random.default_rng(args.seed)
    model = recipe.build_model(dict(CONFIG, network="ntm", memory_size=args.memory_size))
    model.compile(
        optimizer=keras.optimizers.Adam(3e-3, global_clipnorm=10.0),
        loss=keras.losses.BinaryCrossentropy(from_logits=True),
    )
    for step in range(args.steps):
        length = int(rng.integers(1, args.max_length + 1))
        x, y, w = data.copy_batch(rng, args.batch_size, length)
        loss = model.train_on_batch(x, y, sample_weight=w)
        if (step + 1) % 100 == 0:
            print(f"step {step + 1}: loss {float(loss):.4f}", flush=True)
    errors = data.bit_errors(model, args.max_length, 64)
    print(
        f"bit errors per sequence at length {args.max_length}: {errors:.3f} "
        f"(chance: {4 * args.max_length})"
    )
    if args.plot:
        x, _, _ = data.copy_batch(np.random.default_rng(1), 1, args.max_length)
        plot(model, x, args.plot)
        print(f"wrote {args.plot}")
    return errors


if __name__ == "__main__":
    main()
