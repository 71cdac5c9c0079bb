"""Echo state network predicting the Mackey-Glass series 84 steps ahead.

Jaeger & Haas's set-up (Science 2004): a reservoir of 1000 tanh units
(``EchoStateCell``), 1% connectivity, uniform weights rescaled to spectral
radius 0.8, a constant input of 0.2 and the output fed back into the
reservoir (``feedback_size=1``, feedback weights uniform on [-1, 1]). The
series (τ = 17, our own RK4 integrator below, one sample per time unit) is
squashed, d = tanh(x - 1). The reservoir is driven for 3000 steps with the
true signal fed back (teacher forcing, ``teacher_forcing_inputs``, with small
uniform noise on the fed-back value), the first 1000 states are dropped and
the readout on [h(t), 0.2] is fitted by linear regression (``fit_readout``,
SVD solver, λ = 0). Each test trial restarts the network from zero, drives
it teacher-forced with 1000 steps of a new stretch of the series, then lets
it run free on its own output (``EchoStateGenerator``) for 84 steps.
NRMSE84 = sqrt(mean over trials of (x̂(84) - x(84))²) / σ(x), in the
original coordinates. Every network (reservoir and series) is independent;
``--split validation`` uses other seeds, for choosing ``--noise``.

    python examples/esn_mackey_glass.py --networks 2 --trials 20   # a few minutes
    python examples/esn_mackey_glass.py --networks 10 --trials 50 \
        --plot docs/images/esn_mackey_glass.png --json runs/esn.json   # docs/designs.md

Run it on TensorFlow (the default backend): XLA's CPU tanh in float64 is
accurate only to about 1e-7, which the closed loop amplifies on JAX.
"""

import argparse
import json
import os
import time

import keras
import numpy as np

import keras_seqmodels as ks


def mackey_glass(
    n,
    tau=17.0,
    beta=0.2,
    gamma=0.1,
    power=10,
    dt=0.1,
    sample_every=10,
    transient=1000,
    seed=0,
    noise=0.01,
):
    """Mackey-Glass series sampled every ``dt * sample_every`` time units.

    dx/dt = β x(t-τ) / (1 + x(t-τ)^n) - γ x(t), integrated with 4th-order
    Runge-Kutta at step dt. The delayed term at the half steps is the mean of
    the two neighbouring history points (τ is a multiple of dt). The first
    ``transient`` samples are dropped. The initial history is 1.2 plus
    Gaussian noise of standard deviation ``noise``.
    """
    delay = int(round(tau / dt))
    steps = (n + transient) * sample_every
    rng = np.random.default_rng(seed)
    x = np.empty(steps + delay + 1)
    x[: delay + 1] = 1.2 + noise * rng.standard_normal(delay + 1)

    def f(xt, xd):
        return beta * xd / (1.0 + xd**power) - gamma * xt

    for i in range(delay, delay + steps):
        xd0, xd1 = x[i - delay], x[i - delay + 1]
        xdh = 0.5 * (xd0 + xd1)
        k1 = f(x[i], xd0)
        k2 = f(x[i] + 0.5 * dt * k1, xdh)
        k3 = f(x[i] + 0.5 * dt * k2, xdh)
        k4 = f(x[i] + dt * k3, xd1)
        x[i + 1] = x[i] + dt * (k1 + 2 * k2 + 2 * k3 + k4) / 6.0
    series = x[delay + 1 :][::sample_every]
    return series[transient : transient + n]


def trial_network(args, index):
    """Build, train and test one independent network; returns its errors."""
    offset = 0 if args.split == "test" else 100_000
    seed = args.seed + offset + index
    span = args.warmup + args.horizon
    series = mackey_glass(args.train + args.trials * span, seed=seed)
    d = np.tanh(series - 1.0)
    cell = ks.cells.EchoStateCell(
        args.units,
        spectral_radius=args.spectral_radius,
        sparsity=1.0 - args.connectivity,
        distribution="uniform",
        input_scaling=args.input_scaling,
        feedback_size=1,
        feedback_scaling=args.feedback_scaling,
        seed=seed,
        dtype="float64",
    )
    # Compiled once through predict: an eager time loop is ~15x slower.
    sequence = keras.Input((None, 2), dtype="float64")
    states, h = ks.layers.Recurrent(
        cell, return_sequences=True, return_state=True, dtype="float64"
    )(sequence)
    runner = keras.Model(sequence, [states, h])

    def drive(targets, noise=0.0):
        inputs = ks.cells.teacher_forcing_inputs(
            targets, np.full(targets.shape, args.input_value), noise=noise, seed=seed
        )
        return runner.predict(inputs, batch_size=len(inputs), verbose=0)

    # Teacher-forced harvest; the readout maps [h(t), 0.2] to d(t).
    train = d[None, : args.train, None]
    states, _ = drive(train, noise=args.noise)
    features = np.concatenate([states, np.full(train.shape, args.input_value)], -1)
    kernel, bias = ks.cells.fit_readout(
        features, train, ridge=args.ridge, washout=args.washout, solver=args.solver
    )
    fitted = features[0, args.washout :] @ kernel + bias
    train_nrmse = float(np.sqrt(np.mean((fitted - train[0, args.washout :]) ** 2)) / d.std())

    # Test trials: new stretches of the series after the training part.
    windows = d[args.train :].reshape(args.trials, span)
    truth = series[args.train :].reshape(args.trials, span)[:, args.warmup :]
    _, h = drive(windows[:, : args.warmup, None])
    generator = ks.cells.EchoStateGenerator(cell, dtype="float64")
    generator.build((None, 1))
    generator.set_readout(kernel, bias)
    future = keras.Input((None, 1), dtype="float64")
    h0 = keras.Input((args.units,), dtype="float64")
    y0 = keras.Input((1,), dtype="float64")
    y = ks.layers.Recurrent(generator, return_sequences=True, dtype="float64")(
        future, initial_state=[h0, y0]
    )
    loop = keras.Model([future, h0, y0], y)
    y = loop.predict(
        [
            np.full((args.trials, args.horizon, 1), args.input_value),
            h,
            windows[:, args.warmup - 1, None],
        ],
        batch_size=args.trials,
        verbose=0,
    )
    y = np.clip(y[..., 0], -1 + 1e-15, 1 - 1e-15)
    errors = (np.arctanh(y) + 1.0 - truth) / series.std()
    return errors, train_nrmse, windows, y


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--units", type=int, default=1000)
    parser.add_argument("--connectivity", type=float, default=0.01)
    parser.add_argument("--spectral-radius", type=float, default=0.8)
    parser.add_argument("--input-value", type=float, default=0.2, help="constant input")
    parser.add_argument("--input-scaling", type=float, default=1.0)
    parser.add_argument("--feedback-scaling", type=float, default=1.0)
    parser.add_argument("--noise", type=float, default=1e-7, help="on the fed-back value")
    parser.add_argument("--ridge", type=float, default=0.0)
    parser.add_argument("--solver", default="svd", choices=["svd", "normal"])
    parser.add_argument("--train", type=int, default=3000)
    parser.add_argument("--washout", type=int, default=1000)
    parser.add_argument("--warmup", type=int, default=1000, help="teacher-forced steps")
    parser.add_argument("--horizon", type=int, default=84)
    parser.add_argument("--trials", type=int, default=50, help="test stretches per network")
    parser.add_argument("--networks", type=int, default=10, help="independent networks")
    parser.add_argument("--first-network", type=int, default=0, help="to split a run")
    parser.add_argument("--split", default="test", choices=["test", "validation"])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--plot", default="runs/esn_mackey_glass.png")
    parser.add_argument("--json", default=None)
    parser.add_argument("--merge", nargs="+", help="combine the JSONs of split runs")
    args = parser.parse_args(argv)

    if args.merge:
        parts = []
        for path in args.merge:
            with open(path) as f:
                parts.append(json.load(f))
        result = dict(
            per_network=sum((p["per_network"] for p in parts), []),
            train_one_step_nrmse=sum((p["train_one_step_nrmse"] for p in parts), []),
            errors_at_horizon=sum((p["errors_at_horizon"] for p in parts), []),
            squared_error_sum=np.sum([p["squared_error_sum"] for p in parts], 0).tolist(),
            example=parts[0]["example"],
        )
        args = argparse.Namespace(**{**parts[0]["args"], "plot": args.plot, "json": args.json})
        args.networks = len(result["per_network"])
        return report(args, result, 0.0)

    start = time.time()
    per_network, all_errors, train_errors = [], [], []
    for index in range(args.first_network, args.first_network + args.networks):
        errors, train_nrmse, windows, y = trial_network(args, index)
        if not all_errors:
            example = dict(window=windows[0].tolist(), prediction=y[0].tolist())
        all_errors.append(errors)
        train_errors.append(train_nrmse)
        per_network.append(float(np.sqrt(np.mean(errors[:, -1] ** 2))))
        print(
            f"network {index}: NRMSE{args.horizon} {per_network[-1]:.2e} "
            f"(train one-step NRMSE {train_nrmse:.1e}, {time.time() - start:.0f} s)",
            flush=True,
        )
        errors = np.concatenate(all_errors)
        result = dict(
            per_network=per_network,
            train_one_step_nrmse=train_errors,
            errors_at_horizon=errors[:, -1].tolist(),
            squared_error_sum=np.sum(errors**2, 0).tolist(),
            example=example,
        )
        if args.json:  # after every network: a killed run keeps what it finished
            _save(args.json, dict(args=vars(args), **result))
    return report(args, result, start)


def _save(path, content):
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path + ".tmp", "w") as f:
        json.dump(content, f, indent=1)
    os.replace(path + ".tmp", path)


def report(args, result, start):
    values = np.array(result["per_network"])
    at_horizon = np.array(result["errors_at_horizon"])
    pooled = float(np.sqrt(np.mean(at_horizon**2)))
    summary = dict(
        networks=len(values),
        trials=len(at_horizon),
        mean=float(values.mean()),
        median=float(np.median(values)),
        min=float(values.min()),
        max=float(values.max()),
        pooled=pooled,
        log10_mean=float(np.mean(np.log10(values))),
    )
    elapsed = f"; {time.time() - start:.0f} s" if start else ""
    print(
        f"{args.split}: NRMSE{args.horizon} over {len(values)} networks x {args.trials} "
        f"trials: mean {summary['mean']:.2e}, median {summary['median']:.2e}, "
        f"range {summary['min']:.2e}-{summary['max']:.2e}, pooled {pooled:.2e} "
        f"(mean log10 {summary['log10_mean']:.2f}){elapsed}"
    )
    if args.json:
        _save(args.json, dict(args=vars(args), summary=summary, **result))
    if args.plot:
        rms = np.sqrt(np.array(result["squared_error_sum"]) / len(at_horizon))
        plot(args, result["example"], rms)
    return pooled


def plot(args, example, rms):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    window, y = np.array(example["window"]), np.array(example["prediction"])
    os.makedirs(os.path.dirname(args.plot) or ".", exist_ok=True)
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(8, 5))
    steps = np.arange(-args.warmup + 1, args.horizon + 1)
    top.plot(steps, np.arctanh(window) + 1.0, "k-", label="Mackey-Glass (τ=17)")
    ahead = np.arange(1, args.horizon + 1)
    top.plot(ahead, np.arctanh(y) + 1.0, "r--", label="ESN, free run")
    top.set_xlim(-150, args.horizon + 1)
    top.axvline(0.5, color="grey", lw=0.5)
    top.legend(loc="lower left")
    bottom.semilogy(ahead, rms, label="this ESN (all trials)")
    bottom.axhline(6.3e-5, color="grey", ls=":", label="Jaeger & Haas 2004 at 84 steps")
    bottom.set_xlabel("steps ahead (free run)")
    bottom.set_ylabel("NRMSE")
    bottom.legend(loc="lower right")
    fig.tight_layout()
    fig.savefig(args.plot, dpi=100)
    print(f"wrote {args.plot}")


if __name__ == "__main__":
    main()
