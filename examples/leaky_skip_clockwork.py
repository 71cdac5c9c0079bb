"""Leaky units, skip connections through time and the clockwork RNN on a long recall.

Task: read a sequence of T random values and output, at the end, the value
seen at the first step (sequence -> single output). The gradient must travel
back T steps. An Elman RNN forgets beyond a few tens of steps; leaky units
with slow time constants (α = 1 - 1/τ), a recurrent connection of delay d
(paths d times shorter) and clockwork modules that update every 1, 2, 4, ...
steps keep the information longer. Prints the test MSE of each (predicting
the mean gives 1/12 ≈ 0.083).

    python examples/leaky_skip_clockwork.py            # < 2 min on a CPU
    python examples/leaky_skip_clockwork.py --epochs 1 --n 64 --steps 10
"""

import argparse

import keras
import numpy as np

import keras_seqmodels as ks


def recall_data(n, steps, rng):
    x = rng.uniform(0, 1, (n, steps, 1)).astype("float32")
    return x, x[:, 0].copy()


def cells(units, steps):
    return {
        "elman": lambda: ks.cells.ElmanCell(units),
        "leaky_multiscale": lambda: ks.cells.LeakyCell(
            units, alpha_mode="multiscale", timescales=[1, 4, 16, 64]
        ),
        "leaky_learned": lambda: ks.cells.LeakyCell(
            units, alpha_mode="learned", alpha_range=(0.5, 0.99)
        ),
        "skip_delay_10": lambda: ks.cells.DelayedCell(units, delay=10),
        "clockwork": lambda: ks.cells.ClockworkCell(units, periods=[1, 2, 4, 8, 16, 32, 64, 128]),
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--units", type=int, default=16)
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    x, y = recall_data(args.n, args.steps, rng)
    x_test, y_test = recall_data(500, args.steps, rng)
    results = {}
    print(f"recall the first of {args.steps} values: test MSE (mean predictor 0.083)")
    for name, make in cells(args.units, args.steps).items():
        keras.utils.set_random_seed(args.seed)
        model = keras.Sequential(
            [keras.Input((args.steps, 1)), ks.layers.Recurrent(make()), keras.layers.Dense(1)]
        )
        model.compile(keras.optimizers.Adam(1e-2, global_clipnorm=1.0), "mse")
        model.fit(x, y, batch_size=50, epochs=args.epochs, verbose=0)
        results[name] = float(model.evaluate(x_test, y_test, verbose=0))
        print(f"  {name:18s} MSE {results[name]:.4f}", flush=True)
    return results


if __name__ == "__main__":
    main()
