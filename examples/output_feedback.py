"""Output-to-hidden recurrence: teacher forcing vs closed loop vs scheduled sampling.

Task: generate a rotating 2-D vector y(t) = (sin(ωt + φ), cos(ωt + φ)) for a
frequency ω given as a fixed input x(t) = ω (the conditioning vector entering
every step through a learned matrix, i.e. a per-sequence bias). The model is
an ``OutputFeedbackCell`` with no hidden-to-hidden recurrence, so its only
memory is its previous output, and it starts from o(-1) = y(0). Three ways of
training the same model:

- teacher forcing (parallel: no time loop, no back-propagation through time);
- closed loop (BPTT through the fed-back outputs);
- scheduled sampling (teacher forcing moving to own outputs, inverse sigmoid).

Each is then evaluated closed loop (generation), which is what matters at
test time; the script prints the generation RMSE and the training time.

    python examples/output_feedback.py            # ~1 min on a CPU
    python examples/output_feedback.py --epochs 2 --n 64
"""

import argparse
import time

import keras
import numpy as np

import keras_seqmodels as ks


def rotations(n, steps, rng):
    """x: (n, steps, 1) frequencies; y: (n, steps + 1, 2), y[:, 0] = y(0)."""
    omega = rng.uniform(0.1, 0.5, (n, 1))
    phase = rng.uniform(0, 2 * np.pi, (n, 1))
    angle = omega * np.arange(steps + 1)[None] + phase
    y = np.stack([np.sin(angle), np.cos(angle)], -1).astype("float32")
    x = np.repeat(omega[:, None, :], steps, 1).astype("float32")
    return x, y


def build(mode, steps, units, seed):
    keras.utils.set_random_seed(seed)
    cell = ks.cells.OutputFeedbackCell(units, 2)
    layer = ks.layers.OutputFeedback(cell, scheduled_sampling=mode == "scheduled", seed=seed)
    x_in, y_in, y0_in = keras.Input((steps, 1)), keras.Input((steps, 2)), keras.Input((2,))
    if mode == "closed_loop":
        train_out = layer(x_in, initial_state=[y0_in])
    else:
        train_out = layer([x_in, y_in], initial_state=[y0_in])
    trainer = keras.Model([x_in, y_in, y0_in], train_out)
    generator = keras.Model([x_in, y0_in], layer(x_in, initial_state=[y0_in]))
    return trainer, generator


def train(mode, data, args):
    (x, y), (x_test, y_test) = data
    trainer, generator = build(mode, x.shape[1], args.units, args.seed)
    trainer.compile(keras.optimizers.Adam(args.lr, global_clipnorm=1.0), "mse")
    callbacks = []
    if mode == "scheduled":
        k = max(1.0, args.epochs / 6)
        callbacks = [ks.training.ScheduledSampling("inverse_sigmoid", k=k)]
    start = time.time()
    trainer.fit(
        [x, y[:, 1:], y[:, 0]],
        y[:, 1:],
        batch_size=args.batch_size,
        epochs=args.epochs,
        verbose=0,
        callbacks=callbacks,
    )
    seconds = time.time() - start
    generated = generator.predict([x_test, y_test[:, 0]], verbose=0)
    rmse = float(np.sqrt(np.mean((generated - y_test[:, 1:]) ** 2)))
    return rmse, seconds


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=512)
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--units", type=int, default=32)
    parser.add_argument("--epochs", type=int, default=40)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--lr", type=float, default=1e-2)
    parser.add_argument("--modes", default="teacher_forcing,closed_loop,scheduled")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    data = rotations(args.n, args.steps, rng), rotations(256, args.steps, rng)
    results = {}
    print(f"generation RMSE over {args.steps} closed-loop steps (predicting 0: 0.71)")
    for mode in args.modes.split(","):
        rmse, seconds = train(mode, data, args)
        results[mode] = dict(rmse=rmse, seconds=seconds)
        print(f"{mode:16s} RMSE {rmse:.4f}   training {seconds:.1f} s", flush=True)
    return results


if __name__ == "__main__":
    main()
