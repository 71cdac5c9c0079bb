"""Long-term dependencies: share of successful runs against the span.

The adding problem (Hochreiter & Schmidhuber 1997): each sequence of length T
holds random values in [0, 1] and two marker positions, one in each half; the
target is the sum of the two marked values, read after the whole sequence. A
run succeeds when its test mean squared error falls below ``--threshold``
(predicting the mean gives 1/6 ≈ 0.167). Plain (Elman) RNNs fail once the span
grows beyond a few tens of steps; gated cells keep succeeding.

    python examples/long_term_dependencies.py      # Elman and GRU, T = 10 and 50, ~2 min
    python examples/long_term_dependencies.py --spans 10,20,50,100,200 --runs 3 \
        --cells elman,gated,gru,lstm --png docs/images/long_term_dependencies.png \
        --json runs/ltd.json                       # the README's table, about an hour

Add a design by adding an entry to ``CELLS``.
"""

import argparse
import json
import os
import time

import keras
import numpy as np

import keras_seqmodels as ks

CELLS = {
    "elman": lambda units: ks.cells.ElmanCell(units),
    "gated": lambda units: ks.cells.GatedCell(units),
    "gru": lambda units: ks.cells.GRUCell(units),
    "lstm": lambda units: ks.cells.LSTMCell(units),
    # The chapter's other designs for long spans (issue 3).
    "leaky": lambda units: ks.cells.LeakyCell(
        units, alpha_mode="multiscale", timescales=[1, 4, 16, 64]
    ),
    "skip": lambda units: ks.cells.DelayedCell(units, delay=10),
    "clockwork": lambda units: ks.cells.ClockworkCell(
        units, periods=[1, 2, 4, 8, 16, 32, 64, 128]
    ),
    "esn_elman": lambda units: ks.cells.ElmanCell(
        units, recurrent_initializer=ks.initializers.SpectralRadius(1.2, seed=0)
    ),
}


def adding_problem(n, span, rng):
    """``n`` sequences of length ``span``: (values, markers) → sum of marked."""
    values = rng.uniform(0.0, 1.0, (n, span))
    markers = np.zeros((n, span))
    half = max(span // 2, 1)
    first = rng.integers(0, half, n)
    second = rng.integers(half, span, n) if span > 1 else first
    markers[np.arange(n), first] = 1.0
    markers[np.arange(n), second] = 1.0
    x = np.stack([values, markers], -1).astype("float32")
    y = (values * markers).sum(1, keepdims=True).astype("float32")
    return x, y


def run_once(cell_name, span, seed, args):
    keras.utils.set_random_seed(seed)
    rng = np.random.default_rng(seed)
    x, y = adding_problem(args.train_size, span, rng)
    x_test, y_test = adding_problem(1000, span, rng)
    model = keras.Sequential(
        [
            keras.Input((span, 2)),
            ks.layers.Recurrent(CELLS[cell_name](args.units)),
            keras.layers.Dense(1),
        ]
    )
    model.compile(optimizer=keras.optimizers.Adam(args.lr, global_clipnorm=1.0), loss="mse")
    model.fit(x, y, batch_size=args.batch_size, epochs=args.epochs, verbose=0)
    mse = float(model.evaluate(x_test, y_test, verbose=0))
    return mse


def plot(results, spans, cells, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    markers = "osD^vP*Xh"
    for k, cell in enumerate(cells):
        share = [
            np.mean([r["success"] for r in results if r["cell"] == cell and r["span"] == s])
            for s in spans
        ]
        # A small vertical offset keeps curves that coincide visible.
        offset = 0.012 * (k - (len(cells) - 1) / 2)
        ax.plot(
            spans, np.array(share) + offset, marker=markers[k % len(markers)],
            label=cell, alpha=0.85,
        )
    ax.set_xscale("log")
    ax.set_xticks(spans)
    ax.set_xticklabels([str(s) for s in spans])
    ax.set_ylim(-0.05, 1.05)
    ax.set_xlabel("span T (steps between the first marker and the answer)")
    ax.set_ylabel("share of runs that succeed")
    ax.set_title("Adding problem")
    ax.legend()
    fig.tight_layout()
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    fig.savefig(path, dpi=100)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    # The defaults are a two-minute taste (Elman and GRU at T = 10 and 50, one
    # run each); the README's table comes from the command in the docstring.
    parser.add_argument("--cells", default="elman,gru")
    parser.add_argument("--spans", default="10,50")
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--units", type=int, default=32)
    parser.add_argument("--train-size", type=int, default=10000)
    parser.add_argument("--epochs", type=int, default=6)
    parser.add_argument("--batch-size", type=int, default=50)
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--threshold", type=float, default=0.01)
    parser.add_argument("--png", default="long_term_dependencies.png")
    parser.add_argument("--json", default=None)
    args = parser.parse_args(argv)
    cells = args.cells.split(",")
    spans = [int(s) for s in args.spans.split(",")]
    results = []
    if args.json and os.path.exists(args.json):
        # Resume: keep the runs a killed invocation already finished.
        with open(args.json) as f:
            results = json.load(f)["results"]
    done = {(r["cell"], r["span"], r["run"]) for r in results}
    for span in spans:
        for cell in cells:
            for run in range(args.runs):
                if (cell, span, run) in done:
                    continue
                start = time.time()
                mse = run_once(cell, span, run, args)
                results.append(
                    dict(cell=cell, span=span, run=run, mse=mse, success=mse < args.threshold)
                )
                verdict = "success" if mse < args.threshold else "failure"
                if args.json:
                    _save(args, results)
                print(
                    f"span {span:4d} {cell:8s} run {run}: test MSE {mse:.4f} "
                    f"({verdict}, {time.time() - start:.0f}s)",
                    flush=True,
                )
    print(f"\nshare of runs that succeed (test MSE < {args.threshold:g})")
    print("| cell | " + " | ".join(f"T={s}" for s in spans) + " |")
    print("|---|" + "---:|" * len(spans))
    results = [r for r in results if r["cell"] in cells and r["span"] in spans]
    for cell in cells:
        shares = [
            np.mean([r["success"] for r in results if r["cell"] == cell and r["span"] == s])
            for s in spans
        ]
        print(f"| {cell} | " + " | ".join(f"{v:.2f}" for v in shares) + " |")
    plot(results, spans, cells, args.png)
    if args.json:
        _save(args, results)
    return results


def _save(args, results):
    os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
    tmp = args.json + ".tmp"
    with open(tmp, "w") as f:
        json.dump(dict(args=vars(args), results=results), f, indent=2)
    os.replace(tmp, args.json)


if __name__ == "__main__":
    main()
