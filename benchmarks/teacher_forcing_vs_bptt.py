"""Training time of an output-recurrent model: teacher forcing vs BPTT.

The model is an ``OutputFeedbackCell`` with no hidden-to-hidden recurrence.
Trained by teacher forcing, its time steps are independent and
``OutputFeedback(parallel=True)`` computes them with two batched matrix
products (no time loop, no back-propagation through time). The baselines, in
the same run and interleaved: the same teacher-forced computation as a time
loop (``parallel=False``), and closed-loop training (the model's own output fed
back, so gradients go through time: BPTT). Prints seconds per epoch (wall
clock and process CPU time, the latter robust to other load on the machine)
and the ratios to the parallel version.

    python benchmarks/teacher_forcing_vs_bptt.py --steps 100 --repeats 3
"""

import argparse
import time

import keras
import numpy as np

import keras_seqmodels as ks


def make(mode, steps, features, units, out):
    keras.utils.set_random_seed(0)
    layer = ks.layers.OutputFeedback(
        ks.cells.OutputFeedbackCell(units, out), parallel=mode == "teacher_parallel"
    )
    x_in, y_in = keras.Input((steps, features)), keras.Input((steps, out))
    output = layer(x_in) if mode == "bptt_closed_loop" else layer([x_in, y_in])
    model = keras.Model([x_in, y_in], output)
    model.compile(keras.optimizers.Adam(1e-3), "mse")
    return model


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--batches", type=int, default=20, help="batches per epoch")
    parser.add_argument("--units", type=int, default=64)
    parser.add_argument("--features", type=int, default=8)
    parser.add_argument("--outputs", type=int, default=8)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(0)
    n = args.batch * args.batches
    x = rng.standard_normal((n, args.steps, args.features)).astype("float32")
    y = rng.standard_normal((n, args.steps, args.outputs)).astype("float32")
    modes = ["teacher_parallel", "teacher_loop", "bptt_closed_loop"]
    models = {m: make(m, args.steps, args.features, args.units, args.outputs) for m in modes}
    for m in modes:  # compile and warm up
        models[m].fit([x, y], y, batch_size=args.batch, epochs=1, verbose=0)
    wall = {m: [] for m in modes}
    cpu = {m: [] for m in modes}
    for _ in range(args.repeats):
        for m in modes:
            w0, c0 = time.perf_counter(), time.process_time()
            models[m].fit([x, y], y, batch_size=args.batch, epochs=1, verbose=0)
            wall[m].append(time.perf_counter() - w0)
            cpu[m].append(time.process_time() - c0)
    print(
        f"backend={keras.backend.backend()} steps={args.steps} batch={args.batch} "
        f"batches/epoch={args.batches} units={args.units} repeats={args.repeats}"
    )
    print("| training | wall s/epoch (median) | CPU s/epoch (median) | CPU ratio to parallel |")
    print("|---|---:|---:|---:|")
    base = np.median(cpu["teacher_parallel"])
    results = {}
    for m in modes:
        w, c = float(np.median(wall[m])), float(np.median(cpu[m]))
        results[m] = dict(wall=w, cpu=c, ratio=c / base)
        print(f"| {m} | {w:.3f} | {c:.3f} | {c / base:.1f}x |")
    return results


if __name__ == "__main__":
    main()
