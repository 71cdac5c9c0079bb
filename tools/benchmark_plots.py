"""The summary of BENCHMARKS.md, made from the results files: its table and its plot.

    python tools/benchmark_plots.py            # print the table, write the plot
    python tools/benchmark_plots.py --check    # exit 1 if BENCHMARKS.md or the plot differ

The table compares the package's recurrent layers with Keras's own layers and with
PyTorch's ``torch.nn`` on the same machine and in the same run, batch 32 x 100 steps,
128 -> 256 units: on CPU the fastest backend of each (TensorFlow or JAX for the Keras
ones, 1 or 2 threads for torch), on a GPU JAX-compiled layers and ``torch.nn`` on CUDA.
The plot (an SVG written by hand: no plotting package needed) shows each row as the
ratio to Keras's layer.
"""

import argparse
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RESULTS = os.path.join(ROOT, "benchmarks", "results")
CPU_FILE = "rnn_throughput_cpu_amd_run9_b32.json"
GPU_FILE = "rnn_throughput_gpu_h100_jit.json"
PLOT = os.path.join(ROOT, "benchmarks", "plots", "summary.svg")
DOC = os.path.join(ROOT, "BENCHMARKS.md")
BEGIN, END = "<!-- summary table: tools/benchmark_plots.py -->", "<!-- end of summary table -->"
CELLS = ("LSTM", "GRU", "Elman")
CONFIG = "b32_t100_128to256"


def _load(name):
    with open(os.path.join(RESULTS, name), encoding="utf-8") as f:
        return json.load(f)["results"]


def _best(results, cell, models, key, config=CONFIG):
    values = [
        r[key]
        for r in results
        if r["cell"] == cell and r["model"] in models and r["config"] == config
    ]
    return max(values) if values else None


def summary_rows():
    """``(where, cell, what, ours, keras, torch)`` in tokens per second."""
    rows = []
    cpu = _load(CPU_FILE)
    for key, what in (("train_tok_s", "training"), ("infer_tok_s", "inference")):
        for cell in CELLS:
            rows.append((
                "CPU, 2 cores", cell, what,
                _best(cpu, cell, ("ours",), key),
                _best(cpu, cell, ("keras",), key),
                _best(cpu, cell, ("torch_1t", "torch_2t"), key),
            ))  # fmt: skip
    gpu = _load(GPU_FILE)
    for key, what in (("train_tok_s", "training"), ("infer_tok_s", "inference")):
        for cell in ("LSTM", "GRU"):
            # The package's defaults on a GPU: cuDNN for LSTM training, else the
            # fused loop with the input product hoisted.
            ours = "ours" if (cell, key) == ("LSTM", "train_tok_s") else "ours_hoist"
            jit = CONFIG + "+jit"
            # torch.nn's inference times include the copy to host memory: not compared.
            torch = _best(gpu, cell, ("torch_cuda",), key) if key == "train_tok_s" else None
            rows.append((
                "GPU, H100", cell, what,
                _best(gpu, cell, (ours,), key, jit), _best(gpu, cell, ("keras",), key, jit), torch,
            ))  # fmt: skip
    return rows


def _k(value):
    return "–" if value is None else f"{value / 1000:,.1f}k"


def _ratio(a, b):
    return "–" if a is None or b is None else f"{a / b:.2f}"


def table(rows):
    lines = [
        "| machine | cell | | ours tok/s | Keras tok/s | PyTorch tok/s | ours ÷ Keras "
        "| ours ÷ PyTorch |",
        "|---|---|---|---:|---:|---:|---:|---:|",
    ]
    for where, cell, what, ours, keras, torch in rows:
        lines.append(
            f"| {where} | {cell} | {what} | {_k(ours)} | {_k(keras)} | {_k(torch)} "
            f"| **{_ratio(ours, keras)}** | {_ratio(ours, torch)} |"
        )
    return "\n".join(lines)


def svg(rows):
    """Horizontal bars, one group per row: ours and PyTorch as a multiple of Keras."""
    bar, gap, left, width = 11, 10, 210, 420
    top = 40
    scale = width / max(
        max(o / k, (t or 0) / k) for _, _, _, o, k, t in rows if o is not None and k is not None
    )
    height = top + len(rows) * (2 * bar + gap) + 40
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{left + width + 70}" '
        f'height="{height}" font-family="sans-serif" font-size="11">',
        f'<text x="{left}" y="16" font-size="13">tokens/s as a multiple of Keras\'s layer '
        "(batch 32 x 100, 128 → 256)</text>",
        f'<rect x="{left}" y="22" width="10" height="10" fill="#1f77b4"/>'
        f'<text x="{left + 14}" y="31">ours</text>',
        f'<rect x="{left + 60}" y="22" width="10" height="10" fill="#ff7f0e"/>'
        f'<text x="{left + 74}" y="31">PyTorch</text>',
    ]
    y = top
    for where, cell, what, ours, keras, torch in rows:
        out.append(f'<text x="{left - 6}" y="{y + bar + 4}" text-anchor="end">'
                   f"{where}, {cell}, {what}</text>")  # fmt: skip
        for value, color, dy in ((ours, "#1f77b4", 0), (torch, "#ff7f0e", bar)):
            if value is None or keras is None:
                continue
            ratio = value / keras
            out.append(f'<rect x="{left}" y="{y + dy}" width="{ratio * scale:.1f}" '
                       f'height="{bar - 1}" fill="{color}"/>')  # fmt: skip
            out.append(f'<text x="{left + ratio * scale + 3:.1f}" y="{y + dy + bar - 2}">'
                       f"{ratio:.2f}</text>")  # fmt: skip
        y += 2 * bar + gap
    out.append(f'<line x1="{left + scale:.1f}" y1="{top - 4}" x2="{left + scale:.1f}" '
               f'y2="{y}" stroke="black" stroke-dasharray="3,3"/>')  # fmt: skip
    out.append(f'<text x="{left + scale:.1f}" y="{y + 14}" text-anchor="middle">'
               "Keras = 1</text>")  # fmt: skip
    out.append("</svg>")
    return "\n".join(out) + "\n"


def documented_table():
    with open(DOC, encoding="utf-8") as f:
        text = f.read()
    start, end = text.index(BEGIN) + len(BEGIN), text.index(END)
    return text[start:end].strip()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="compare, write nothing")
    args = parser.parse_args(argv)
    rows = summary_rows()
    if args.check:
        with open(PLOT, encoding="utf-8") as f:
            same_plot = f.read() == svg(rows)
        same_table = documented_table() == table(rows)
        if not (same_plot and same_table):
            message = ("BENCHMARKS.md's summary or benchmarks/plots/summary.svg differ "
                       "from the results files: run python tools/benchmark_plots.py")  # fmt: skip
            print(message, file=sys.stderr)
            return 1
        return 0
    os.makedirs(os.path.dirname(PLOT), exist_ok=True)
    with open(PLOT, "w", encoding="utf-8") as f:
        f.write(svg(rows))
    print(table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
