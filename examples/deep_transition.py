"""Deep RNNs: stacking vs a deep transition (with and without a skip).

Task: a stream of random bits; at each step the target is the parity of the
last three bits (x(t) XOR x(t-1) XOR x(t-2)), a function a single tanh layer
per step represents poorly. Compared, with about the same number of weights:
a shallow Elman RNN, two stacked Elman layers, a ``DeepTransitionCell`` with a
hidden layer between h(t-1) and h(t), the same with the skip connection
h(t-1) W_s, and one with a deep output MLP too. Prints test accuracy.

    python examples/deep_transition.py                 # < 2 min on a CPU
    python examples/deep_transition.py --epochs 1 --n 64
"""

import argparse

import keras
import numpy as np

import keras_seqmodels as ks


def parity_data(n, steps, rng):
    bits = rng.integers(0, 2, (n, steps))
    padded = np.pad(bits, ((0, 0), (2, 0)))
    y = padded[:, 2:] ^ padded[:, 1:-1] ^ padded[:, :-2]
    return bits[..., None].astype("float32"), y[..., None].astype("float32")


def models(units):
    def rnn(cell):
        return [ks.layers.Recurrent(cell, return_sequences=True)]

    return {
        "shallow_elman": lambda: rnn(ks.cells.ElmanCell(units)),
        "stacked_elman_x2": lambda: rnn(ks.cells.ElmanCell(units)) + rnn(ks.cells.ElmanCell(units)),
        "deep_transition": lambda: rnn(
            ks.cells.DeepTransitionCell(units, transition_layers=[units])
        ),
        "deep_transition_skip": lambda: rnn(
            ks.cells.DeepTransitionCell(units, transition_layers=[units], skip=True)
        ),
        "deep_transition_output": lambda: rnn(
            ks.cells.DeepTransitionCell(
                units, transition_layers=[units], skip=True, output_layers=[units, units]
            )
        ),
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1000)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--units", type=int, default=16)
    parser.add_argument("--epochs", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    x, y = parity_data(args.n, args.steps, rng)
    x_test, y_test = parity_data(500, args.steps, rng)
    results = {}
    print("3-bit running parity, per-step test accuracy (chance 0.5)")
    for name, layers in models(args.units).items():
        keras.utils.set_random_seed(args.seed)
        model = keras.Sequential(
            [keras.Input((args.steps, 1))]
            + layers()
            + [keras.layers.Dense(1, activation="sigmoid")]
        )
        model.compile(keras.optimizers.Adam(1e-2), "binary_crossentropy", metrics=["accuracy"])
        model.fit(x, y, batch_size=32, epochs=args.epochs, verbose=0)
        acc = float(model.evaluate(x_test, y_test, verbose=0)[1])
        results[name] = dict(accuracy=acc, weights=model.count_params())
        print(f"  {name:24s} accuracy {acc:.3f}  ({model.count_params()} weights)", flush=True)
    return results


if __name__ == "__main__":
    main()
