"""Training and inference throughput of the linear recurrences
(``keras_seqmodels.linear_rnn``) against the package's LSTM / GRU, Keras's,
and PyTorch's ``nn.LSTM`` / ``nn.GRU``, at long lengths.

The matrix: backends (TensorFlow, JAX, PyTorch; one process each) x lengths
(batch 8, 128 -> 256 by default) x the layers of ``LAYERS`` (a table: a new
layer is one entry) and ``TORCH_LAYERS``. Each Keras layer runs in a
one-layer model with ``return_sequences=True``; training = one
``train_on_batch`` (forward, backward, SGD on a mean squared error),
inference = one ``predict_on_batch``. Also timed: ``projection``, the
``Dense`` input product of ``MinGRU`` alone (``2 * units`` wide, same
training step), so the table gives "MinGRU time / its projection's time",
the physical floor of a layer whose recurrence is elementwise. The torch
worker times ``torch.nn.LSTM`` and ``torch.nn.GRU`` (``--torch-threads``, 2 by
default; 1 is faster when other processes share the cores).

Each model is built, compiled and warmed up (one training and one inference
step) on its own, then timed ``--repeats`` times; the median is kept, with
the 1-minute load average read just before and just after its timings. A
model whose warm-up training step takes longer than ``--step-budget-s``
seconds (compilation included) gets a second step; if that one too takes
longer, the model is not timed further: its row keeps that step in
``train_ms_all`` and ``skipped`` says why. The worker rewrites its JSON after
every row, so a run cut short keeps what it measured. With ``--interleave``
the models of a length are all built and warmed up first, then timed in
turns (every model once, then again), so a load that changes during the run
falls on all of them alike; the load average is then read before and after
the whole group.

    python benchmarks/linear_rnn_throughput.py --lengths 256,1024,4096,16384 \
        --out benchmarks/results/linear_rnn_throughput_cpu.json

Ratios printed: each model's training and inference time against the
package's fused LSTM of the same backend (``ks_lstm``) and against the
fastest classic recurrent peer of the run at that length (the package's,
Keras's and torch's LSTM / GRU, any backend), and the growth of each model's
training time with the length. On a GPU (whatever JAX sees; the package's
LSTM and Keras's take cuDNN there):

    KERAS_BACKEND=jax python benchmarks/linear_rnn_throughput.py --backends jax \
        --lengths 4096 --out gpu.json

``--layers`` limits the layers (names of ``LAYERS`` and ``TORCH_LAYERS``);
``--worker BACKEND`` runs one backend in this process; ``--repeats`` the
timed repeats. From results files already written:

    python benchmarks/linear_rnn_throughput.py --table a.json b.json
    python benchmarks/linear_rnn_throughput.py --pivot a.json b.json
    python benchmarks/linear_rnn_throughput.py --plot out.svg a.json b.json

``--plot`` draws the time of a training and of an inference step against
the length, log-log, one line per layer, one panel per backend and mode,
torch's layers (the CPU peer) drawn in every panel (an SVG written by hand:
no plotting package needed).
"""

import argparse
import gc
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import time


def _ks():
    import keras_seqmodels as ks

    return ks


def _rg_lru(units):
    # The RG-LRU is elementwise (input width = units): a Dense input
    # projection first, as in the Hawk block.
    import keras

    return keras.Sequential(
        [keras.layers.Dense(units), _ks().linear_rnn.RGLRU(units, return_sequences=True)],
        name="rg_lru",
    )


# name -> (units -> a Keras layer with return_sequences=True). LIN layers
# added to the package go here. The classic recurrent peers first, the
# largest scan (selective_ssm) last.
LAYERS = {
    "ks_lstm": lambda u: _ks().layers.LSTM(u, return_sequences=True),
    "ks_gru": lambda u: _ks().layers.GRU(u, return_sequences=True),
    "keras_lstm": lambda u: __import__("keras").layers.LSTM(u, return_sequences=True),
    "keras_gru": lambda u: __import__("keras").layers.GRU(u, return_sequences=True),
    "projection": lambda u: __import__("keras").layers.Dense(2 * u),
    "min_gru": lambda u: _ks().linear_rnn.MinGRU(u, return_sequences=True),
    "min_lstm": lambda u: _ks().linear_rnn.MinLSTM(u, return_sequences=True),
    "lru": lambda u: _ks().linear_rnn.LRU(u, return_sequences=True),
    "rg_lru": _rg_lru,
    "hawk_block": lambda u: _ks().linear_rnn.HawkBlock(u, return_sequences=True),
    # Output width = input width (features), state (features, 16): its scan
    # holds batch x length x features x 16 floats per tensor (1 GiB at 8 x
    # 16,384 x 128).
    "selective_ssm": lambda u: _ks().linear_rnn.SelectiveSSM(16, return_sequences=True),
}
TORCH_LAYERS = ("torch_lstm", "torch_gru")
BASELINE = "ks_lstm"
# The classic (step-by-step) recurrent layers every scan layer is compared with.
PEERS = ("ks_lstm", "ks_gru", "keras_lstm", "keras_gru") + TORCH_LAYERS
BACKENDS = ["tensorflow", "jax", "torch"]


def keras_runner(name, batch, length, features, units):
    import keras

    layer = LAYERS[name](units)
    inputs = keras.Input((length, features), batch_size=batch)
    model = keras.Model(inputs, layer(inputs))
    model.compile(optimizer=keras.optimizers.SGD(1e-3), loss="mse")
    return (
        lambda x, y: model.train_on_batch(x, y),
        lambda x: keras.ops.convert_to_numpy(model.predict_on_batch(x)),
        model.output_shape[-1],
    )


def torch_runner(name, batch, length, features, units):
    import torch

    cls = {"torch_lstm": torch.nn.LSTM, "torch_gru": torch.nn.GRU}[name]
    rnn = cls(features, units, batch_first=True)
    opt = torch.optim.SGD(rnn.parameters(), lr=1e-3)

    def train(x, y):
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(rnn(x)[0], y)
        loss.backward()
        opt.step()

    def infer(x):
        with torch.no_grad():
            return rnn(x)[0]

    return train, infer, units


def _free(backend):
    if backend != "torch":
        import keras

        keras.backend.clear_session()
    gc.collect()


def run_worker(backend, lengths, names, batch, features, units, repeats, budget_s=60.0,
               out=None, torch_threads=2, interleave=False):  # fmt: skip
    import numpy as np

    threads = None
    if backend == "torch":
        import torch

        torch.set_num_threads(torch_threads)
        threads = torch_threads
        names = [n for n in names if n in TORCH_LAYERS]
        make, to = torch_runner, torch.from_numpy
    else:
        import keras

        if keras.backend.backend() != backend:
            raise SystemExit(
                f"linear_rnn_throughput: Keras runs {keras.backend.backend()}, "
                f"not {backend} (set KERAS_BACKEND before importing Keras)."
            )
        names = [n for n in names if n in LAYERS]
        make, to = keras_runner, (lambda a: a)
    rows = []
    rng = np.random.default_rng(0)
    groups = [names] if interleave else [[n] for n in names]
    for length in lengths:
        x = to(rng.standard_normal((batch, length, features)).astype("float32"))
        for group in groups:
            load_before = os.getloadavg()[0]
            runs = {}
            for name in group:  # build, compile, warm up
                train, infer, width = make(name, batch, length, features, units)
                y = to(rng.standard_normal((batch, length, width)).astype("float32"))
                start = time.perf_counter()
                train(x, y)
                first = time.perf_counter() - start
                run = runs[name] = dict(train=train, infer=infer, y=y, first=first, tr=[],
                                        inf=[], skipped=None)  # fmt: skip
                if first > budget_s:  # compilation included: time one more step
                    start = time.perf_counter()
                    train(x, y)
                    second = time.perf_counter() - start
                    if second > budget_s:
                        run["skipped"] = (f"one training step (after compilation) took "
                                          f"{second:.0f} s > {budget_s:.0f} s: not timed "
                                          "further")  # fmt: skip
                        run["tr"] = [second]
                if not run["skipped"]:
                    infer(x)
            timed = [run for run in runs.values() if not run["skipped"]]
            for _ in range(repeats):  # in turns: every model of the group once
                for run in timed:
                    start = time.perf_counter()
                    run["train"](x, run["y"])
                    run["tr"].append(time.perf_counter() - start)
                    start = time.perf_counter()
                    run["infer"](x)
                    run["inf"].append(time.perf_counter() - start)
            load_after = os.getloadavg()[0]
            for name, run in runs.items():
                tr, inf, skipped = run["tr"], run["inf"], run["skipped"]
                row = dict(backend=backend, length=length, batch=batch, features=features,
                           units=units, model=name, torch_threads=threads,
                           train_ms=None if skipped else 1e3 * statistics.median(tr),
                           infer_ms=None if skipped else 1e3 * statistics.median(inf),
                           train_ms_all=[1e3 * t for t in tr],
                           infer_ms_all=[1e3 * t for t in inf],
                           first_train_ms=1e3 * run["first"], skipped=skipped,
                           interleaved=interleave,
                           load_avg_1min=[load_before, load_after])  # fmt: skip
                rows.append(row)
                if skipped:
                    print(f"{backend:10s} T={length:6d} {name:13s} skipped: {skipped}", flush=True)
                else:
                    print(f"{backend:10s} T={length:6d} {name:13s} train {row['train_ms']:9.1f} "
                          f"ms infer {row['infer_ms']:9.1f} ms  load {load_before:.1f} -> "
                          f"{load_after:.1f}", flush=True)  # fmt: skip
            if out:
                _write(out, rows)
            runs.clear()
            _free(backend)
    return rows


def _fmt_ms(v):
    return "skipped" if v is None else (f"{v:,.0f}" if v >= 100 else f"{v:.1f}")


def _ratio(a, b):
    return "" if a is None or b is None else f"{a / b:.1f}x"


def table(rows):
    """Markdown: times, ratios to ``ks_lstm`` of the same backend and to the
    fastest classic peer of the run at that length, growth with the length."""
    base = {(r["backend"], r["length"]): r for r in rows if r["model"] == BASELINE}
    fastest = {}
    for r in rows:
        if r["model"] in PEERS:
            for key in ("train_ms", "infer_ms"):
                if r[key] is not None:
                    best = fastest.setdefault((r["length"], key), r)
                    if best[key] is None or r[key] < best[key]:
                        fastest[(r["length"], key)] = r
    first = {}
    for r in sorted(rows, key=lambda r: r["length"]):
        if r["train_ms"] is not None:
            first.setdefault((r["backend"], r["model"]), r)
    lines = [
        "| backend | length | model | train ms | infer ms | train speed-up vs ks_lstm "
        "| infer speed-up vs ks_lstm | train speed-up vs fastest peer | infer speed-up vs "
        "fastest peer | train ms / ms at shortest length (length ratio) | load before-after |",
        "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    order = {n: i for i, n in enumerate(list(LAYERS) + list(TORCH_LAYERS))}
    for r in sorted(rows, key=lambda r: (r["backend"], r["length"], order.get(r["model"], 99))):
        b = base.get((r["backend"], r["length"])) or {}
        cells = []
        for key in ("train_ms", "infer_ms"):
            cells.append(_ratio(b.get(key), r[key]))
        for key in ("train_ms", "infer_ms"):
            f = fastest.get((r["length"], key))
            cells.append(f"{_ratio(f[key], r[key])} ({f['model']}, {f['backend']})"
                         if f and r[key] is not None else "")  # fmt: skip
        f = first.get((r["backend"], r["model"]))
        growth = ""
        if f and r["train_ms"] is not None:
            growth = f"{r['train_ms'] / f['train_ms']:.1f} ({r['length'] / f['length']:.0f})"
        load = "-".join(f"{v:.1f}" for v in r.get("load_avg_1min", []))
        times = f"{_fmt_ms(r['train_ms'])} | {_fmt_ms(r['infer_ms'])}"
        if r["skipped"]:
            one = r.get("train_ms_all") or [r.get("first_train_ms", 0.0)]
            times = f"skipped: one step {one[0] / 1e3:.0f} s | skipped"
        lines.append(f"| {r['backend']} | {r['length']} | {r['model']} | {times} "
                     f"| {' | '.join(cells)} | {growth} | {load} |")  # fmt: skip
    return "\n".join(lines)


def pivot(rows):
    """Markdown for the docs: per backend, one line per model, one column per
    length: ``train / inference ms`` and the training speed-ups against
    ``ks_lstm`` and against the fastest classic peer of the run (any backend,
    torch included) at that length."""
    lengths = sorted({r["length"] for r in rows})
    at = {(r["backend"], r["length"], r["model"]): r for r in rows}
    fastest = {}
    for r in rows:
        for key in ("train_ms", "infer_ms"):
            if r["model"] in PEERS and r[key] is not None:
                if (r["length"], key) not in fastest or r[key] < fastest[(r["length"], key)][key]:
                    fastest[(r["length"], key)] = r
    out = []
    for backend in [b for b in BACKENDS if any(r["backend"] == b for r in rows)]:
        names = [n for n in list(LAYERS) + list(TORCH_LAYERS) if (backend, lengths[-1], n) in at
                 or any((backend, t, n) in at for t in lengths)]  # fmt: skip
        head = " | ".join(f"{t:,}" for t in lengths)
        out += [f"{backend}: ms per step, training / inference (speed-up of training, inference "
                f"vs the package's LSTM; vs the fastest peer)", "",
                f"| model | {head} |", "|---|" + "---:|" * len(lengths)]  # fmt: skip
        for name in names:
            cells = []
            for t in lengths:
                r = at.get((backend, t, name))
                if r is None:
                    cells.append("")
                    continue
                if r["skipped"]:
                    one = r.get("train_ms_all") or [r.get("first_train_ms", 0.0)]
                    cells.append(f"> {one[0] / 1e3:.0f} s per step: skipped")
                    continue
                cell = f"{_fmt_ms(r['train_ms'])} / {_fmt_ms(r['infer_ms'])}"
                b = at.get((backend, t, BASELINE))
                if backend != "torch" and name != BASELINE and b and b["train_ms"]:
                    cell += (f" ({_ratio(b['train_ms'], r['train_ms'])}, "
                             f"{_ratio(b['infer_ms'], r['infer_ms'])}")  # fmt: skip
                    ft, fi = fastest.get((t, "train_ms")), fastest.get((t, "infer_ms"))
                    if name not in PEERS and ft and fi:
                        cell += (f"; {_ratio(ft['train_ms'], r['train_ms'])}, "
                                 f"{_ratio(fi['infer_ms'], r['infer_ms'])}")  # fmt: skip
                    cell += ")"
                cells.append(cell)
            out.append(f"| {name} | " + " | ".join(cells) + " |")
        out.append("")
    peers = ", ".join(f"{t:,}: {fastest[(t, 'train_ms')]['model']} "
                      f"({fastest[(t, 'train_ms')]['backend']}) / "
                      f"{fastest[(t, 'infer_ms')]['model']} ({fastest[(t, 'infer_ms')]['backend']})"
                      for t in lengths if (t, "train_ms") in fastest)  # fmt: skip
    out.append(f"Fastest peer (training / inference) per length: {peers}.")
    return "\n".join(out)


COLORS = {
    "min_gru": "#d62728", "min_lstm": "#ff7f0e", "lru": "#2ca02c", "rg_lru": "#17becf",
    "hawk_block": "#9467bd", "selective_ssm": "#8c564b", "projection": "#000000",
    "ks_lstm": "#1f77b4", "ks_gru": "#7fb2e5", "keras_lstm": "#7f7f7f", "keras_gru": "#bcbd22",
    "torch_lstm": "#e377c2", "torch_gru": "#f7b6d2",
}  # fmt: skip


def plot_svg(rows, title=""):
    """An SVG: step time against length, log-log, one panel per (backend,
    mode), one line per layer; torch's rows (dashed) in every panel."""
    backends = [b for b in ("tensorflow", "jax") if any(r["backend"] == b for r in rows)]
    torch_rows = [r for r in rows if r["backend"] == "torch"]
    if not backends:  # torch alone
        backends = ["torch"] if torch_rows else []
    modes = (("train_ms", "training step"), ("infer_ms", "inference step"))
    measured = [r[k] for r in rows for k, _ in modes if r[k]]
    lengths = sorted({r["length"] for r in rows})
    if not measured or not lengths:
        raise SystemExit("linear_rnn_throughput: --plot found no timed rows")
    y0 = 10 ** math.floor(math.log10(min(measured)))
    y1 = 10 ** math.ceil(math.log10(max(measured)))
    x0, x1 = math.log2(lengths[0]), math.log2(lengths[-1])
    pw, ph, ml, mt, gap = 340, 260, 70, 50, 40
    width = ml + len(modes) * (pw + gap) + 150
    height = mt + len(backends) * (ph + gap + 20) + 20
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           'font-family="sans-serif" font-size="11">',
           f'<rect width="{width}" height="{height}" fill="white"/>',
           f'<text x="{ml}" y="20" font-size="13">{title}</text>']  # fmt: skip
    names = [n for n in list(LAYERS) + list(TORCH_LAYERS) if any(r["model"] == n for r in rows)]
    for bi, backend in enumerate(backends):
        for mi, (key, label) in enumerate(modes):
            left, top = ml + mi * (pw + gap), mt + bi * (ph + gap + 20)

            def px(length, left=left):
                return left + (math.log2(length) - x0) / max(x1 - x0, 1e-9) * pw

            def py(ms, top=top):
                return top + ph - (math.log10(ms) - math.log10(y0)) / (
                    math.log10(y1) - math.log10(y0)) * ph  # fmt: skip

            out.append(f'<rect x="{left}" y="{top}" width="{pw}" height="{ph}" fill="none" '
                       'stroke="#444"/>')  # fmt: skip
            out.append(f'<text x="{left}" y="{top - 6}" font-size="12">{backend}: {label} '
                       '(ms, log)</text>')  # fmt: skip
            for e in range(int(math.log10(y0)), int(math.log10(y1)) + 1):
                y = py(10.0**e)
                out.append(f'<line x1="{left}" x2="{left + pw}" y1="{y:.1f}" y2="{y:.1f}" '
                           'stroke="#ddd"/>')  # fmt: skip
                out.append(f'<text x="{left - 4}" y="{y + 4:.1f}" text-anchor="end">'
                           f'{10.0**e:g}</text>')  # fmt: skip
            for length in lengths:
                x = px(length)
                out.append(f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{top}" y2="{top + ph}" '
                           'stroke="#eee"/>')  # fmt: skip
                out.append(f'<text x="{x:.1f}" y="{top + ph + 14}" text-anchor="middle">'
                           f'{length:,}</text>')  # fmt: skip
            # Linear growth, for reference: through the first point of ks_lstm.
            ref = sorted((r for r in rows if r["backend"] == backend and r["model"] == BASELINE
                          and r[key]), key=lambda r: r["length"])  # fmt: skip
            if ref:
                r0 = ref[0]
                pts = [(length, r0[key] * length / r0["length"]) for length in lengths]
                pts = [(a, b) for a, b in pts if y0 <= b <= y1]
                if len(pts) > 1:
                    line = " ".join(f"{px(a):.1f},{py(b):.1f}" for a, b in pts)
                    out.append(f'<polyline points="{line}" fill="none" stroke="#999" '
                               'stroke-dasharray="1,3"/>')  # fmt: skip
            for name in names:
                own = torch_rows if name in TORCH_LAYERS else rows
                pts = sorted((r["length"], r[key]) for r in own if r["model"] == name
                             and r["backend"] in (backend, "torch") and r[key])  # fmt: skip
                if not pts:
                    continue
                color = COLORS.get(name, "#333")
                dash = ' stroke-dasharray="5,3"' if name in TORCH_LAYERS else ""
                heavy = 2.5 if name in ("min_gru", "ks_lstm") else 1.5
                line = " ".join(f"{px(a):.1f},{py(b):.1f}" for a, b in pts)
                out.append(f'<polyline points="{line}" fill="none" stroke="{color}" '
                           f'stroke-width="{heavy}"{dash}/>')  # fmt: skip
                for a, b in pts:
                    out.append(f'<circle cx="{px(a):.1f}" cy="{py(b):.1f}" r="2.5" '
                               f'fill="{color}"/>')  # fmt: skip
    lx = ml + len(modes) * (pw + gap)
    for i, name in enumerate(names + ["linear growth"]):
        y = mt + 10 + 16 * i
        color = COLORS.get(name, "#999")
        dash = ' stroke-dasharray="5,3"' if name in TORCH_LAYERS else (
            ' stroke-dasharray="1,3"' if name == "linear growth" else "")  # fmt: skip
        out.append(f'<line x1="{lx}" x2="{lx + 22}" y1="{y}" y2="{y}" stroke="{color}" '
                   f'stroke-width="2"{dash}/>')  # fmt: skip
        out.append(f'<text x="{lx + 28}" y="{y + 4}">{name}</text>')
    out.append(f'<text x="{ml}" y="{height - 6}">length (steps, log)</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def meta():
    info = dict(machine=platform.machine(), cpus=os.cpu_count(), python=platform.python_version(),
                date=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                command=" ".join(sys.argv))  # fmt: skip
    try:
        import jax

        info["jax_devices"] = [str(d) for d in jax.devices()]
    except ImportError:
        pass
    return info


def _write(path, rows):
    with open(path, "w") as f:
        json.dump(dict(meta=meta(), rows=rows), f, indent=1)


def _read(paths):
    """The rows of results files; a timed row of a later file replaces the
    row of the same backend, length and model (a rerun of a skipped one)."""
    rows = {}
    for path in paths:
        with open(path) as f:
            for r in json.load(f)["rows"]:
                r.setdefault("skipped", None)  # files written before rows could be skipped
                key = (r["backend"], r["length"], r["model"])
                if key not in rows or r["train_ms"] is not None:
                    rows[key] = r
    return list(rows.values())


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--worker", choices=BACKENDS)
    parser.add_argument("--backends", default=",".join(BACKENDS))
    parser.add_argument("--lengths", default="256,1024,4096,16384")
    parser.add_argument("--layers", default=",".join(list(LAYERS) + list(TORCH_LAYERS)))
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--features", type=int, default=128)
    parser.add_argument("--units", type=int, default=256)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--step-budget-s", type=float, default=60.0)
    parser.add_argument("--torch-threads", type=int, default=2)
    parser.add_argument("--interleave", action="store_true",
                        help="build the models of a length, then time them in turns")  # fmt: skip
    parser.add_argument("--out", default="benchmarks/results/linear_rnn_throughput_cpu.json")
    parser.add_argument("--table", nargs="+", metavar="JSON", help="print the table of these files")
    parser.add_argument("--pivot", nargs="+", metavar="JSON",
                        help="print a table per backend, a column per length")  # fmt: skip
    parser.add_argument("--plot", nargs="+", metavar=("SVG", "JSON"),
                        help="write SVG from the results files that follow it")  # fmt: skip
    args = parser.parse_args()
    if args.table:
        print(table(_read(args.table)))
        return
    if args.pivot:
        print(pivot(_read(args.pivot)))
        return
    if args.plot:
        if len(args.plot) < 2 or not args.plot[0].endswith(".svg"):
            raise SystemExit("linear_rnn_throughput: --plot takes OUT.svg then results files")
        svg = plot_svg(_read(args.plot[1:]), "Linear recurrences vs LSTM / GRU: time of one step, "
                       "batch 8, 128 -> 256")  # fmt: skip
        with open(args.plot[0], "w") as f:
            f.write(svg)
        print(f"wrote {args.plot[0]}")
        return
    lengths = [int(v) for v in args.lengths.split(",")]
    names = [n for n in args.layers.split(",") if n]
    unknown = [n for n in names if n not in LAYERS and n not in TORCH_LAYERS]
    if unknown:
        raise SystemExit(
            f"linear_rnn_throughput: --layers must be among {list(LAYERS) + list(TORCH_LAYERS)}; "
            f"received {unknown}"
        )
    if args.worker:
        rows = run_worker(args.worker, lengths, names, args.batch, args.features, args.units,
                          args.repeats, args.step_budget_s, args.out,
                          args.torch_threads, args.interleave)  # fmt: skip
        _write(args.out, rows)
        return
    rows = []
    for backend in args.backends.split(","):
        part = f"{args.out}.{backend}.part"
        env = dict(os.environ, KERAS_BACKEND=backend)
        cmd = [sys.executable, __file__, "--worker", backend, "--out", part,
               "--lengths", args.lengths, "--layers", args.layers, "--batch", str(args.batch),
               "--features", str(args.features), "--units", str(args.units),
               "--repeats", str(args.repeats), "--step-budget-s", str(args.step_budget_s),
               "--torch-threads", str(args.torch_threads)]  # fmt: skip
        cmd += ["--interleave"] if args.interleave else []
        failed = subprocess.run(cmd, env=env).returncode != 0
        if failed:
            print(f"linear_rnn_throughput: the {backend} worker failed", file=sys.stderr)
        if os.path.exists(part):  # rows measured before a failure are kept
            rows += _read([part])
            os.remove(part)
    _write(args.out, rows)
    print(table(rows))


if __name__ == "__main__":
    main()
