"""BENCHMARKS.md's tables made from the results files, and one plot per table.

    python tools/benchmark_plots.py            # rewrite the tables, write the plots
    python tools/benchmark_plots.py --check    # exit 1 if a table on the page differs

Each table below is read from the files in ``benchmarks/results/`` that its section
cites and written into BENCHMARKS.md (or the page ``DOC_OF`` names: docs/deploy.md,
docs/linear_recurrences.md)
between ``<!-- table NAME ... -->`` and ``<!-- end of table NAME -->``; its plot,
``benchmarks/plots/NAME.png``, is drawn from the same rows (``plot_data(NAME)``) and
shown under the table. Tables whose numbers no
results file holds (the scripts that made them print them) are not here.
"""

import argparse
import json
import os
import statistics
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RESULTS = os.path.join(ROOT, "benchmarks", "results")
PLOTS = os.path.join(ROOT, "benchmarks", "plots")
DOC = os.path.join(ROOT, "BENCHMARKS.md")
CPU_FILE = "rnn_throughput_cpu_amd_run9_b32.json"
GPU_FILE = "rnn_throughput_gpu_h100_jit.json"
CELLS = ("LSTM", "GRU", "Elman")
CONFIG = "b32_t100_128to256"
CONFIG_NAMES = {
    "b32_t100_128to256": "b32 x 100",
    "b128_t50_512to512": "b128 x 50",
    "b1_t1000_128to256": "b1 x 1000",
}
CELL_NAMES = {"GRU_reset_before": "GRU reset-before"}
BACKENDS = {"tensorflow": "TF", "jax": "JAX"}


def _file(name):
    with open(os.path.join(RESULTS, name), encoding="utf-8") as f:
        return json.load(f)


def _load(name):
    return _file(name)["results"]


def _find(results, cell, model, config, backend=None):
    for r in results:
        if (r["cell"], r["model"], r["config"]) == (cell, model, config) and (
            backend is None or r["backend"] == backend
        ):
            return r
    return None


def _best(results, cell, models, key, config=CONFIG):
    values = [
        r[key]
        for r in results
        if r["cell"] == cell and r["model"] in models and r["config"] == config
    ]
    return max(values) if values else None


def _k(value, digits=1):
    return "–" if value is None else f"{value / 1000:,.{digits}f}k"


def _ratio(a, b):
    return "–" if a is None or b is None else f"{a / b:.2f}"


def _table(header, rows):
    """Markdown from a header row (right-aligned but the text columns) and rows."""
    align = ["---" if h.startswith("<") else "---:" for h in header]
    lines = ["| " + " | ".join(h.lstrip("<") for h in header) + " |"]
    lines.append("|" + "|".join(align) + "|")
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


# Each table: rows(), text(rows) and data(rows) = [(row label, series, value, shown)],
# the numbers the plot draws and how the table shows each.


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
            # The package's defaults on a GPU: the fused loop with the input
            # product hoisted (JAX's cuDNN LSTM only when asked for).
            ours = "ours_hoist"
            jit = CONFIG + "+jit"
            # torch.nn's inference times include the copy to host memory: not compared.
            torch = _best(gpu, cell, ("torch_cuda",), key) if key == "train_tok_s" else None
            rows.append((
                "GPU, H100", cell, what,
                _best(gpu, cell, (ours,), key, jit), _best(gpu, cell, ("keras",), key, jit), torch,
            ))  # fmt: skip
    return rows


def _summary_text(rows):
    header = ["<machine", "<cell", "<", "ours tok/s", "Keras tok/s", "PyTorch tok/s"]
    header += ["ours ÷ Keras", "ours ÷ PyTorch"]
    body = [
        [where, cell, what, _k(o), _k(k), _k(t), f"**{_ratio(o, k)}**", _ratio(o, t)]
        for where, cell, what, o, k, t in rows
    ]
    return _table(header, body)


def _summary_data(rows):
    out = []
    for where, cell, what, o, k, t in rows:
        label = f"{where} | {cell} | {what}"
        out.append((label, "ours ÷ Keras", o / k, f"**{_ratio(o, k)}**"))
        if t is not None:
            out.append((label, "PyTorch ÷ Keras", t / k, _k(t)))
    return out


def _cpu_rows():
    """The CPU section: batch 32 and 128 from three processes per backend, batch 1
    from one."""
    rows = []
    sources = (
        ("rnn_throughput_cpu_amd_run9_b32.json", "b32_t100_128to256"),
        ("rnn_throughput_cpu_amd_run9_b128.json", "b128_t50_512to512"),
        ("rnn_throughput_cpu_amd_run9_b128_b1.json", "b1_t1000_128to256"),
    )
    for name, config in sources:
        results = _load(name)
        for cell in ("LSTM", "GRU", "GRU_reset_before", "Elman"):
            for backend in ("tensorflow", "jax"):
                get = {m: _find(results, cell, m, config, backend) for m in
                       ("ours", "ours_generic", "keras")}  # fmt: skip
                row = {"config": config, "cell": cell, "backend": backend}
                for key in ("train", "infer"):
                    row[key] = [get[m][f"{key}_tok_s"] for m in ("ours", "ours_generic", "keras")]
                    ratios = get["ours"].get(f"{key}_vs_keras")
                    row[key + "_ratio"] = (
                        (statistics.median(ratios), min(ratios), max(ratios))
                        if ratios
                        else (row[key][0] / row[key][2], None, None)
                    )
                rows.append(row)
    return rows


def _ratio_text(ratio):
    median, low, high = ratio
    text = f"**{median:.2f}**"
    return text if low is None else f"{text} ({low:.2f}-{high:.2f})"


def _cpu_label(row):
    return (
        f"{CONFIG_NAMES[row['config']]} | {CELL_NAMES.get(row['cell'], row['cell'])} "
        f"| {BACKENDS[row['backend']]}"
    )


def _cpu_text(rows):
    header = ["<config", "<cell", "<backend", "train tok/s ours / generic / Keras"]
    header += ["ours ÷ Keras", "infer tok/s ours / generic / Keras", "ours ÷ Keras"]
    body = []
    for row in rows:
        body.append([
            *_cpu_label(row).split(" | "),
            " / ".join(_k(v) for v in row["train"]), _ratio_text(row["train_ratio"]),
            " / ".join(_k(v) for v in row["infer"]), _ratio_text(row["infer_ratio"]),
        ])  # fmt: skip
    return _table(header, body)


def _cpu_data(rows):
    return [
        (_cpu_label(row), what, row[key][0], f"**{row[key][0]:.2f}**")
        for row in rows
        for key, what in (("train_ratio", "training"), ("infer_ratio", "inference"))
    ]


GPU_CONFIGS = (
    ("b32_t100_128to256", "b32 x 100"),
    ("b32_t100_128to256+mask", "b32 x 100 +mask"),
    ("b128_t50_512to512", "b128 x 50"),
    ("b128_t50_512to512+mask", "b128 x 50 +mask"),
)


def _gpu_rows():
    results = _load(GPU_FILE)
    rows = []
    for config, label in GPU_CONFIGS:
        for cell in ("LSTM", "GRU"):
            jit = config + "+jit"

            def get(model, key, cfg=jit, cell=cell):
                r = _find(results, cell, model, cfg)
                return None if r is None else r[key]

            row = {"label": f"{label} | {cell}", "cell": cell}
            row["train"] = [get(m, "train_tok_s") for m in ("ours", "ours_hoist", "keras")]
            row["train"].append(get("torch_cuda", "train_tok_s", config))
            row["infer"] = [
                get(m, "infer_tok_s")
                for m in ("ours", "ours_fused_infer", "ours_hoist", "ours_cudnn_infer", "keras")
            ]
            row["infer"].append(get("torch_cuda", "infer_tok_s", config))
            # The defaults now: the hoisted fused loop in training and inference
            # (JAX's cuDNN LSTM only when asked for, see layers/backend_rnn.py).
            row["now_train"] = row["train"][1]
            row["now_infer"] = row["infer"][2]
            rows.append(row)
    return rows


def _gpu_text(rows):
    header = ["<config", "<cell", "train tok/s ours (before)", "hoisted", "Keras", "torch.nn"]
    header += ["**now ÷ Keras**", "**now ÷ torch**", "infer tok/s ours (before)"]
    header += ["fused infer", "hoisted", "cuDNN", "Keras", "torch.nn", "**now ÷ Keras**"]
    body = []
    for row in rows:
        train, infer = row["train"], row["infer"]
        body.append([
            *row["label"].split(" | "),
            *(_k(v, 0) if v else "" for v in train),
            f"**{_ratio(row['now_train'], train[2])}**",
            f"**{_ratio(row['now_train'], train[3])}**",
            *(_k(v, 0) if v else "" for v in infer),
            f"**{_ratio(row['now_infer'], infer[4])}**",
        ])  # fmt: skip
    return _table(header, body)


def _gpu_data(rows):
    out = []
    for row in rows:
        train, infer = row["train"], row["infer"]
        for series, a, b in (
            ("training ÷ Keras", row["now_train"], train[2]),
            ("training ÷ torch.nn", row["now_train"], train[3]),
            ("inference ÷ Keras", row["now_infer"], infer[4]),
        ):
            out.append((row["label"], series, a / b, f"**{_ratio(a, b)}**"))
    return out


KERAS_CALL_COLUMNS = (
    ("jax", "LSTM"), ("jax", "GRU"), ("torch", "LSTM"), ("torch", "GRU"), ("torch", "Elman"),
)  # fmt: skip


def _keras_call_rows():
    results = _load("rnn_throughput_gpu_h100_keras_call.json")
    rows = []
    for config, label in GPU_CONFIGS:
        cells = []
        for backend, cell in KERAS_CALL_COLUMNS:
            ours = _find(results, cell, "ours", config, backend)
            keras = _find(results, cell, "keras", config, backend)
            cells.append(tuple(ours[k] / keras[k] for k in ("train_tok_s", "infer_tok_s")))
        rows.append((label, cells))
    return rows


def _keras_call_text(rows):
    header = ["<config"] + [f"{'JAX' if b == 'jax' else 'torch'} {c}" for b, c in
                            KERAS_CALL_COLUMNS]  # fmt: skip
    body = [[label] + [f"{t:.2f} / {i:.2f}" for t, i in cells] for label, cells in rows]
    return _table(header, body)


def _keras_call_data(rows):
    out = []
    for label, cells in rows:
        for (backend, cell), (train, infer) in zip(KERAS_CALL_COLUMNS, cells):
            name = f"{'JAX' if backend == 'jax' else 'torch'} {cell}"
            out.append((label, f"{name} training", train, f"{train:.2f} /"))
            out.append((label, f"{name} inference", infer, f"/ {infer:.2f}"))
    return out


def _drop_in_rows():
    results = _load("drop_in_throughput_cpu.json")
    rows = []
    for cell in ("LSTM", "GRU"):
        for backend in ("tensorflow", "jax"):
            get = {m: _find(results, cell, m, "b32_t50_64to128+drop-in", backend)
                   for m in ("ours", "ours_generic", "keras")}  # fmt: skip
            row = {"label": f"{cell} | {'TensorFlow' if backend == 'tensorflow' else 'JAX'}"}
            for key in ("train", "infer"):
                row[key] = [get[m][f"{key}_tok_s"] for m in ("ours", "ours_generic", "keras")]
                ratios = get["ours"][f"{key}_vs_keras"]
                row[key + "_ratio"] = (statistics.median(ratios), min(ratios), max(ratios))
            rows.append(row)
    return rows


def _drop_in_text(rows):
    header = ["<cell", "<backend", "train tok/s ours", "generic", "Keras", "train ours/Keras"]
    header += ["infer tok/s ours", "generic", "Keras", "infer ours/Keras"]
    body = []
    for row in rows:
        body.append([
            *row["label"].split(" | "),
            *(f"{v:.0f}" for v in row["train"]), _ratio_text(row["train_ratio"]),
            *(f"{v:.0f}" for v in row["infer"]), _ratio_text(row["infer_ratio"]),
        ])  # fmt: skip
    return _table(header, body)


def _drop_in_data(rows):
    out = []
    for row in rows:
        for key, what in (("train_ratio", "training"), ("infer_ratio", "inference")):
            median, low, high = row[key]
            out.append((row["label"], what, median, _ratio_text(row[key])))
            out.append((row["label"], what + " low", low, f"({low:.2f}-"))
            out.append((row["label"], what + " high", high, f"-{high:.2f})"))
    return out


def _bidirectional_rows():
    return _load("bidirectional_tf.json")


def _bidirectional_text(rows):
    header = ["<cell", "train ours / kw / kl (ms)", "train ratio vs kw / kl"]
    header += ["forward ours / kw / kl (ms)", "forward ratio vs kw / kl"]
    body = []
    for r in rows:
        line = [r["cell"]]
        for key in ("train", "forward"):
            line.append(" / ".join(f"{r[f'{m}_{key}_ms']:.1f}" for m in
                                   ("ours", "keras_wrapper", "keras_layer")))  # fmt: skip
            line.append(f"{r[f'ratio_{key}_ours_over_keras_wrapper']:.2f} / "
                        f"{r[f'ratio_{key}_ours_over_keras_layer']:.2f}")  # fmt: skip
        body.append(line)
    return _table(header, body)


def _bidirectional_data(rows):
    names = {"ours": "ours", "keras_wrapper": "kw", "keras_layer": "kl"}
    return [
        (r["cell"], f"{key} {names[m]}", r[f"{m}_{key}_ms"], f"{r[f'{m}_{key}_ms']:.1f}")
        for r in rows
        for key in ("train", "forward")
        for m in names
    ]


XLA_VARIANTS = ("greedy", "greedy+xla", "beam5", "beam5+xla")


def _xla_rows():
    data = _file("translation_xla_tf_cpu.json")
    rows = []
    for setting, label in (("per_sentence", "per sentence"), ("batched", "batched (64)")):
        values = [data["results"][setting][v]["median_ms_per_sentence"] for v in XLA_VARIANTS]
        rows.append((label, values))
    return rows


def _xla_text(rows):
    header = ["<setting", "greedy", "greedy + XLA", "beam 5", "beam 5 + XLA"]
    return _table(header, [[label] + [f"{v:.1f}" for v in values] for label, values in rows])


def _xla_data(rows):
    return [
        (label, variant, value, f"{value:.1f}")
        for label, values in rows
        for variant, value in zip(XLA_VARIANTS, values)
    ]


def _generate_rows():
    tf, jax = _file("generate_cost_tf_cpu.json"), _file("generate_cost_jax_cpu.json")
    calls = len(tf["seconds"]["baseline"])
    rows = [("TensorFlow", f"{calls}, median", tf["median_seconds"]["baseline"],
             tf["median_seconds"]["incremental"])]  # fmt: skip
    for i, label in enumerate(("1st call (compiles)", "2nd call")):
        rows.append(("JAX", label, jax["seconds"]["baseline"][i], jax["seconds"]["incremental"][i]))
    return rows


def _generate_text(rows):
    header = ["<backend", "<calls", "whole text each word (before)"]
    header += ["prompt once, states carried (now)", "speed-up"]
    body = [[b, c, f"{x:.2f} s", f"{y:.2f} s", f"{x / y:.1f}x"] for b, c, x, y in rows]
    return _table(header, body)


def _generate_data(rows):
    out = []
    for backend, calls, before, now in rows:
        out.append((f"{backend} | {calls}", "before", before, f"{before:.2f} s"))
        out.append((f"{backend} | {calls}", "now", now, f"{now:.2f} s"))
    return out


def _tree_rows():
    data = _file("tree_throughput_tf_cpu.json")
    return [
        (what, data[f"{key}_batched_trees_per_s"], data[f"{key}_node_by_node_trees_per_s"])
        for key, what in (("inference", "inference"), ("train", "training"))
    ]


def _tree_text(rows):
    header = ["<", "level by level, trees/s", "node by node, trees/s", "speed-up"]
    body = [[w, f"{b:.1f}", f"{n:.2f}", f"{b / n:,.0f}x"] for w, b, n in rows]
    return _table(header, body)


def _tree_data(rows):
    out = []
    for what, batched, nodes in rows:
        out.append((what, "level by level", batched, f"{batched:.1f}"))
        out.append((what, "node by node", nodes, f"{nodes:.2f}"))
    return out


DEPLOY_FILE = "deploy_latency_cpu.json"
PTB_FILES = ("deploy_ptb_lstm_small_cpu.json", "deploy_ptb_lstm_cpu.json")
# The rows of benchmarks/deploy_latency.py as the pages name them.
DEPLOY_NAMES = {
    "litert fused": "LiteRT fused (float32)",
    "litert keras LSTM loop": "LiteRT `keras.layers.LSTM` loop (anchor)",
    "tf.lite fused": "tf.lite fused (float32)",
    "tf.lite keras LSTM loop": "tf.lite `keras.layers.LSTM` loop",
    "litert fused stateful, reset":
        "LiteRT fused, `stateful=True`, `reset_all_variables` before each call",
    "litert fused stateful, no reset":
        "LiteRT fused, `stateful=True`, no reset (states carried over)",
    "litert fused dynamic batch": "LiteRT fused, dynamic batch",
    "litert fused float16": 'LiteRT fused, `quantize="float16"`',
    "litert fused float16 dynamic batch": 'LiteRT fused, `quantize="float16"`, dynamic batch',
    "litert fused dynamic": 'LiteRT fused, `quantize="dynamic"`',
    "litert fused int8": 'LiteRT fused, `quantize="int8"`',
    "savedmodel (python call)": "SavedModel (Python call)",
    "onnxruntime": "onnxruntime (`to_onnx`, native `LSTM` node)",
}  # fmt: skip


def _deploy():
    data = _file(DEPLOY_FILE)
    return {r["name"]: r for r in data["rows"]}, data


def _deploy_rows():
    rows, data = _deploy()
    anchor = rows[data["anchor"]]["latency_ms"]
    float_size = rows["litert fused"]["file_bytes"]
    return [
        {**r, "label": DEPLOY_NAMES[r["name"]], "x_anchor": anchor / r["latency_ms"],
         "x_float": r["file_bytes"] / float_size}
        for r in data["rows"]
    ]  # fmt: skip


def _deploy_text(rows):
    header = ["<format", "<ops (LiteRT main graph)", "latency ms", "sequences/s", "x anchor"]
    header += ["file KiB", "x float file", "max abs diff"]
    body = [
        [r["label"], ", ".join(r["ops"]) or "-", f"{r['latency_ms']:.2f}",
         f"{1000 / r['latency_ms']:.0f}", f"{r['x_anchor']:.2f}", f"{r['file_bytes'] / 1024:.0f}",
         f"{r['x_float']:.2f}", f"{r['max_abs_diff']:.1e}"]
        for r in rows
    ]  # fmt: skip
    return _table(header, body)


def _deploy_data(rows):
    return [(r["label"], "latency ms", r["latency_ms"], f"{r['latency_ms']:.2f}") for r in rows]


DEPLOY_SUMMARY = (
    ("onnxruntime", "ONNX Runtime, `to_onnx` (native `LSTM` node)"),
    ("litert fused dynamic", 'LiteRT fused LSTM, `quantize="dynamic"`'),
    ("litert fused", "LiteRT fused LSTM, float32"),
    ("savedmodel (python call)", "SavedModel, Python call"),
    ("litert keras LSTM loop", "LiteRT, `keras.layers.LSTM` as a `WHILE` loop"),
)


def _deploy_summary_rows():
    rows, data = _deploy()
    anchor = rows[data["anchor"]]["latency_ms"]
    return [(label, rows[n]["latency_ms"], anchor / rows[n]["latency_ms"])
            for n, label in DEPLOY_SUMMARY]  # fmt: skip


def _deploy_summary_text(rows):
    header = ["<deployment, batch 1", "latency ms", "x Keras's LSTM as a LiteRT loop"]
    return _table(header, [[label, f"{ms:.2f}", f"{x:.2f}"] for label, ms, x in rows])


def _deploy_summary_data(rows):
    return [(label, "latency ms", ms, f"{ms:.2f}") for label, ms, _ in rows]


DOCS_DEPLOY = (
    ("litert fused", "LiteRT fused, float32"),
    ("litert keras LSTM loop", "LiteRT `WHILE` loop of `keras.layers.LSTM`"),
    ("litert fused float16", 'LiteRT fused, `quantize="float16"`'),
    ("litert fused float16 dynamic batch",
     'LiteRT fused, `quantize="float16"`, dynamic batch (`batch_size=None`)'),
    ("litert fused dynamic", 'LiteRT fused, `quantize="dynamic"`'),
    ("litert fused int8", 'LiteRT fused, `quantize="int8"`'),
    ("savedmodel (python call)", "SavedModel, Python call"),
    ("onnxruntime", "ONNX Runtime, `to_onnx`"),
)  # fmt: skip


def _deploy_docs_rows():
    by_name = {r["name"]: r for r in _deploy_rows()}
    return [dict(by_name[n], label=label) for n, label in DOCS_DEPLOY]


def _deploy_docs_text(rows):
    header = ["<file", "latency ms", "x `keras.layers.LSTM` as a LiteRT `WHILE` loop", "size"]
    header += ["max abs diff from `model.predict`"]
    body = [
        [r["label"], f"{r['latency_ms']:.2f}", f"{r['x_anchor']:.2f}",
         f"{r['file_bytes'] / 1024:.0f} KiB ({r['x_float']:.2f}x)", f"{r['max_abs_diff']:.1e}"]
        for r in rows
    ]  # fmt: skip
    return _table(header, body)


FILL_NAMES = {
    "litert fused": ("`stateful=False` (default), batch 1", "FILL x 2 (constant shape)"),
    "litert fused dynamic batch": ("`stateful=False`, dynamic batch, run at batch 1",
                                   "SHAPE, SLICE, CONCATENATION, FILL x 2"),
    "litert fused stateful, reset": ("`stateful=True`, `reset_all_variables` before each call",
                                     "-"),
    "litert fused stateful, no reset": ("`stateful=True`, no reset", "-"),
}  # fmt: skip


def _fill_rows():
    return _file(DEPLOY_FILE)["fill_cost"]


def _fill_text(rows):
    header = ["<file", "<ops before the LSTM", "ms (median)"]
    header += ["time / `stateful=True` without reset, median (quartiles)"]
    body = []
    for r in rows:
        low, high = r["ratio_quartiles"]
        body.append([*FILL_NAMES[r["name"]], f"{r['median_ms']:.3f}",
                     f"{r['ratio_median']:.3f} ({low:.3f}-{high:.3f})"])  # fmt: skip
    return _table(header, body)


def _fill_data(rows):
    out = []
    for r in rows:
        label, (low, high) = FILL_NAMES[r["name"]][0], r["ratio_quartiles"]
        out.append((label, "time ÷ no reset", r["ratio_median"], f"{r['ratio_median']:.3f} ("))
        out.append((label, "time ÷ no reset low", low, f"({low:.3f}-"))
        out.append((label, "time ÷ no reset high", high, f"-{high:.3f})"))
    return out


OPTION_FILES = (
    ("fused", "fused float32"),
    ("loop", "Keras loop"),
    ("fused dynamic", "fused dynamic"),
)


def _options_rows():
    rows, data = _deploy()
    anchor = rows[data["anchor"]]["latency_ms"]
    return [dict(r, anchor=anchor) for r in data["interpreter_options"]]


def _options_label(r):
    return f"{r['runtime']} | {r['delegate'] or 'none'} | {r['threads']}"


def _options_text(rows):
    header = ["<interpreter", "<default delegate", "threads"]
    header += [name for _, name in OPTION_FILES] + ["fused / loop, same setting"]
    body = []
    for r in rows:
        ms = r["latency_ms"]
        cells = [f"{ms[f]:.2f} ({r['anchor'] / ms[f]:.2f}x)" for f, _ in OPTION_FILES]
        body.append([*_options_label(r).split(" | "), *cells,
                     f"{ms['loop'] / ms['fused']:.2f}x"])  # fmt: skip
    return _table(header, body)


def _options_data(rows):
    return [
        (_options_label(r), name, r["latency_ms"][f], f"{r['latency_ms'][f]:.2f} (")
        for r in rows
        for f, name in OPTION_FILES
    ]


PTB_NAMES = {
    "Keras (model.predict_on_batch)": "Keras (`predict_on_batch`)",
    "LiteRT float32": "LiteRT float32",
    "LiteRT dynamic": 'LiteRT `quantize="dynamic"`',
    "LiteRT int8": 'LiteRT `quantize="int8"`',
}


def _ptb_rows():
    rows = []
    for name in PTB_FILES:
        ptb = _file(name)["ptb"]
        reference = ptb["rows"][1]
        for r in ptb["rows"]:
            rows.append({**r, "model": ptb["model"], "reference": reference})
    return rows


def _ptb_label(r):
    return f"`{r['model']}`, {PTB_NAMES[r['name']]}"


def _ptb_text(rows):
    header = ["<model", "file KiB", "x float file", "test perplexity", "vs LiteRT float32"]
    body = []
    for r in rows:
        ref, size = r["reference"], r["file_bytes"]
        body.append([
            _ptb_label(r), "-" if size is None else f"{size / 1024:.0f}",
            "-" if size is None else f"{size / ref['file_bytes']:.2f}", f"{r['perplexity']:.2f}",
            f"{100 * (r['perplexity'] / ref['perplexity'] - 1):+.2f}%",
        ])  # fmt: skip
    return _table(header, body)


def _ptb_data(rows):
    return [(_ptb_label(r), r["model"], r["perplexity"], f"{r['perplexity']:.2f}") for r in rows]


def _ptb_docs_rows():
    models = {}
    for r in _ptb_rows():
        models.setdefault(r["model"], {})[r["name"]] = r
    return list(models.items())


def _ptb_docs_text(rows):
    header = ["<model", "float32", '`"dynamic"`', '`"int8"`']
    body = []
    for model, r in rows:
        ref = r["LiteRT float32"]
        cells = [f"{ref['perplexity']:.2f}, {ref['file_bytes'] / 1024:.0f} KiB"]
        for q in ("LiteRT dynamic", "LiteRT int8"):
            p = r[q]["perplexity"]
            cells.append(f"{p:.2f} ({100 * (p / ref['perplexity'] - 1):+.2f}%), "
                         f"{r[q]['file_bytes'] / ref['file_bytes']:.2f}x")  # fmt: skip
        keras = r["Keras (model.predict_on_batch)"]["perplexity"]
        body.append([f"`{model}` (Keras: {keras:.2f})", *cells])
    return _table(header, body)


def _ptb_docs_data(rows):
    out = []
    for model, r in rows:
        label = f"`{model}` (Keras: {r['Keras (model.predict_on_batch)']['perplexity']:.2f})"
        for q, series in (("LiteRT float32", "float32"), ("LiteRT dynamic", "dynamic"),
                          ("LiteRT int8", "int8")):  # fmt: skip
            p = r[q]["perplexity"]
            out.append((label, series, p, f"{p:.2f}"))
    return out


LITERT_RNN_FILE = "litert_rnn_latency_cpu.json"
LITERT_RNN_NAMES = {
    "keras GRU": "Keras, `Recurrent(GRUCell)` (reset-before)",
    "litert GRU loop": "GRU reset-before: LiteRT loop, float32",
    "litert GRU loop dynamic": 'GRU reset-before: LiteRT loop, `"dynamic"`',
    "keras GRU reset-after": "Keras, `GRUCell(reset_after=True)`",
    "litert GRU reset-after loop": "GRU reset-after: LiteRT loop, float32",
    "litert GRU reset-after loop dynamic": 'GRU reset-after: LiteRT loop, `"dynamic"`',
    "keras Elman": "Keras, `Recurrent(ElmanCell)`",
    "litert Elman fused": "Elman: LiteRT fused `UNIDIRECTIONAL_SEQUENCE_RNN`, float32",
    "litert Elman fused dynamic": 'Elman: LiteRT fused, `"dynamic"`',
    "litert Elman loop": "Elman: LiteRT loop (the fused op switched off), float32",
    "litert Elman loop dynamic": 'Elman: LiteRT loop, `"dynamic"`',
}


def _litert_rnn_rows():
    batches = _file(LITERT_RNN_FILE)["batches"]
    rows = []
    for i, r in enumerate(batches[0]["rows"]):
        per_batch = []
        for b in batches:
            same = b["rows"][i]
            keras = next(k for k in b["rows"] if k["name"] == f"keras {same['layer']}")
            per_batch.append((b["batch"], same["ms"], keras["ms"] / same["ms"],
                              same["max_abs_diff"]))  # fmt: skip
        rows.append({"label": LITERT_RNN_NAMES[r["name"]], "keras": r["name"].startswith("keras"),
                     "while": r["while_loop"], "batches": per_batch})  # fmt: skip
    return rows


def _litert_rnn_text(rows):
    batches = [b for b, *_ in rows[0]["batches"]]
    header = ["<file"] + [f"batch {b}: ms (Keras ÷ file)" for b in batches] + ["`WHILE`"]
    header += [f"max abs diff from `model.predict` (batch {' / '.join(map(str, batches))})"]
    body = []
    for r in rows:
        cells = [f"{ms:.2f}" if r["keras"] else f"{ms:.2f} ({x:.2f}x)"
                 for _, ms, x, _ in r["batches"]]  # fmt: skip
        diff = "-" if r["keras"] else " / ".join(f"{d:.1e}" for *_, d in r["batches"])
        loop = "-" if r["keras"] else ("yes" if r["while"] else "no")
        body.append([r["label"], *cells, loop, diff])
    return _table(header, body)


def _litert_rnn_data(rows):
    return [
        (r["label"], f"batch {b}", x, f"({x:.2f}x)")
        for r in rows
        if not r["keras"]
        for b, _, x, _ in r["batches"]
    ]


TREE_EAGER_FILES = (
    ("tree_eager_calls_jax_before.json", "before (loop traced and compiled at every eager call)"),
    ("tree_eager_calls_jax.json", "now (one `jax.jit` per layer, reused per input signature)"),
)


def _tree_eager_rows():
    return [(label, _file(name)) for name, label in TREE_EAGER_FILES]


def _tree_eager_text(rows):
    later = len(rows[0][1]["later_same_shape_ms"])
    header = ["<", "first call", f"later calls, same shape (median of {later})"]
    header += ["first call of a new shape"]
    body = []
    for label, r in rows:
        times = r["later_same_shape_ms"]
        body.append([label, f"{r['first_ms'] / 1000:.1f} s",
                     f"{r['later_median_ms']:,.0f} ms ({min(times):,.0f}-{max(times):,.0f})",
                     f"{r['new_shape_ms'] / 1000:.1f} s"])  # fmt: skip
    return _table(header, body)


def _tree_eager_data(rows):
    out = []
    for label, r in rows:
        out.append((label, "first call", r["first_ms"], f"{r['first_ms'] / 1000:.1f} s"))
        median = r["later_median_ms"]
        out.append((label, "later calls (median)", median, f"{median:,.0f} ms ("))
        out.append((label, "first call, new shape", r["new_shape_ms"],
                    f"{r['new_shape_ms'] / 1000:.1f} s"))  # fmt: skip
    return out


ROW_GROUP_FILES = (
    "row_groups_jax_lstm.json",
    "row_groups_jax_gru.json",
    "row_groups_jax_lstm_b128.json",
    "row_groups_jax_elman.json",
)
ROW_GROUP_COLUMNS = (
    ("keras", "Keras"),
    ("1 block(s), 1 chunk(s)", "1 block, 1 chunk"),
    ("1 block(s), 2 chunk(s)", "1 block, 2 chunks"),
    ("2 block(s), 1 chunk(s)", "2 blocks, 1 chunk"),
    ("2 block(s), 2 chunk(s)", "2 blocks, 2 chunks"),
)


def _row_groups_rows():
    rows = []
    for name in ROW_GROUP_FILES:
        r = _file(name)
        batch, steps, features, units = r["shape"].split(",")
        label = f"{r['cell']}, {batch} x {steps}, {features} → {units}"
        rows.append((label, r["median_ms"]))
    return rows


def _row_groups_text(rows):
    header = ["<cell, batch x length, input → units"] + [h for _, h in ROW_GROUP_COLUMNS]
    body = []
    for label, ms in rows:
        cells = [f"{ms[k]['train']:.1f} / {ms[k]['infer']:.1f}" if k in ms else ""
                 for k, _ in ROW_GROUP_COLUMNS]  # fmt: skip
        body.append([label, *cells])
    return _table(header, body)


def _row_groups_data(rows):
    return [
        (label, header, ms[k]["train"], f"{ms[k]['train']:.1f} /")
        for label, ms in rows
        for k, header in ROW_GROUP_COLUMNS
        if k in ms
    ]


PREDICT_FILE = "translation_predict_latency_cpu.json"


def _predict_rows():
    r = _file(PREDICT_FILE)
    rows = []
    for search, label in (("greedy", "greedy"), (f"beam{r['beam']}", f"beam {r['beam']}")):
        get = {v: (r["first_call_s"][f"{search} {v}"], r["later_calls_ms"][f"{search} {v}"],
                   r["later_median_ms"][f"{search} {v}"]) for v in ("before", "now")}  # fmt: skip
        rows.append((label, get))
    return rows


def _predict_text(rows):
    header = ["<search", "first call before", "first call now"]
    header += ["later calls before, median (min-max)", "later calls now, median (min-max)"]
    header += ["later calls"]
    body = []
    for label, get in rows:
        later = [f"{get[v][2]:,.0f} ms ({min(get[v][1]):,.0f}-{max(get[v][1]):,.0f})"
                 for v in ("before", "now")]  # fmt: skip
        body.append([label, f"{get['before'][0]:.1f} s", f"{get['now'][0]:.1f} s", *later,
                     f"{get['before'][2] / get['now'][2]:.1f}x faster"])  # fmt: skip
    return _table(header, body)


def _predict_data(rows):
    return [
        (label, f"later calls {v}, median", get[v][2], f"{get[v][2]:,.0f} ms (")
        for label, get in rows
        for v in ("before", "now")
    ]


LINEAR_CORE = (
    ("TensorFlow", "linear_rnn_throughput_cpu_core_tf.json"),
    ("JAX", "linear_rnn_throughput_cpu_core_jax.json"),
)
# Timed in turns at a high load: BENCHMARKS.md shows their length 4,096 only.
LINEAR_FLOOR = (
    ("TensorFlow", "linear_rnn_throughput_cpu_floor_tf.json"),
    ("JAX", "linear_rnn_throughput_cpu_floor_jax.json"),
)
LINEAR_TURNS = (
    ("TensorFlow", "linear_rnn_throughput_cpu_turns4096_tf.json"),
    ("JAX", "linear_rnn_throughput_cpu_turns4096_jax.json"),
)
LINEAR_NAMES = {
    "ks_lstm": "package LSTM",
    "ks_gru": "package GRU",
    "keras_lstm": "Keras LSTM",
    "keras_gru": "Keras GRU",
    "projection": "projection (MinGRU's input product)",
    "min_gru": "MinGRU",
    "min_lstm": "MinLSTM",
    "lru": "LRU",
    "rg_lru": "Dense + RGLRU",
    "hawk_block": "HawkBlock",
    "selective_ssm": "SelectiveSSM",
}


def _linear_file(name):
    return _file(name)["rows"]


def _load_range(rows):
    loads = [x for r in rows for x in r["load_avg_1min"]]
    low, high = f"{min(loads):.1f}", f"{max(loads):.1f}"
    return low if low == high else f"{low}-{high}"


def _linear_mingru_rows(floor_lengths=(4096,), bold_length=4096):
    """MinGRU against the package's LSTM: every length of the quiet runs, then
    ``floor_lengths`` of the runs timed in turns at a high load (every length
    if None); the speed-ups at ``bold_length`` of the quiet runs in bold."""
    rows = []
    runs = ((LINEAR_CORE, None, bold_length), (LINEAR_FLOOR, floor_lengths, None))
    for files, lengths, bold in runs:
        for backend, name in files:
            results = _linear_file(name)
            for length in sorted({r["length"] for r in results}):
                if lengths is not None and length not in lengths:
                    continue
                at = {r["model"]: r for r in results if r["length"] == length}
                rows.append({
                    "backend": backend, "length": length, "bold": length == bold,
                    "load": _load_range([at[m] for m in ("min_gru", "ks_lstm", "projection")]),
                    "ours": at["min_gru"], "lstm": at["ks_lstm"], "product": at["projection"],
                })  # fmt: skip
    return rows


def _ms_pair(r):
    return f"{r['train_ms']:,.0f} / {r['infer_ms']:,.0f}"


def _linear_mingru_label(r):
    return f"{r['backend']} | {r['length']:,} | {r['load']}"


def _linear_mingru_text(rows, lstm="package LSTM", product="MinGRU ÷ its input product"):
    header = ["<backend", "length", "<load", "MinGRU train / infer ms",
              f"{lstm} train / infer ms", "MinGRU speed-up, train / infer", product]  # fmt: skip
    body = []
    for r in rows:
        speed = " / ".join(f"{r['lstm'][k] / r['ours'][k]:.1f}x" for k in ("train_ms", "infer_ms"))
        speed = f"**{speed}**" if r["bold"] else speed
        body.append([_linear_mingru_label(r), _ms_pair(r["ours"]), _ms_pair(r["lstm"]), speed,
                     f"{r['ours']['train_ms'] / r['product']['train_ms']:.1f}"])  # fmt: skip
    return _table(header, body)


def _linear_mingru_data(rows):
    return [
        (_linear_mingru_label(r), what, x, f"{x:.1f}x")
        for r in rows
        for what, key in (("training", "train_ms"), ("inference", "infer_ms"))
        for x in [r["lstm"][key] / r["ours"][key]]
    ]


def _linear_mingru_docs_rows():
    return _linear_mingru_rows(floor_lengths=None, bold_length=None)


def _linear_mingru_docs_text(rows):
    return _linear_mingru_text(rows, "LSTM (package)", "MinGRU ÷ its input product (train)")


def _linear_turns_rows():
    """Every model at 4,096 steps, timed in turns, per backend."""
    per_backend = {backend: _linear_file(name) for backend, name in LINEAR_TURNS}
    first = per_backend[LINEAR_TURNS[0][0]]
    rows = []
    for model in [r["model"] for r in first]:
        at = {b: next(r for r in rs if r["model"] == model) for b, rs in per_backend.items()}
        lstm = {b: next(r for r in rs if r["model"] == "ks_lstm") for b, rs in per_backend.items()}
        rows.append({"label": LINEAR_NAMES[model], "peer": model == "ks_lstm",
                     "at": at, "lstm": lstm})  # fmt: skip
    return rows


def _linear_speedup(r, backend):
    return tuple(r["lstm"][backend][k] / r["at"][backend][k] for k in ("train_ms", "infer_ms"))


def _linear_turns_text(rows):
    header = ["<model (length 4,096, timed in turns)"]
    for backend, _ in LINEAR_TURNS:
        header += [f"{backend} train / infer ms", "speed-up vs package LSTM"]
    body = []
    for r in rows:
        cells = [r["label"]]
        for backend, _ in LINEAR_TURNS:
            speed = " / ".join(f"{x:.1f}x" for x in _linear_speedup(r, backend))
            cells += [_ms_pair(r["at"][backend]), "" if r["peer"] else speed]
        body.append(cells)
    return _table(header, body)


def _linear_turns_data(rows):
    return [
        (r["label"], f"{backend} {what}", x, f"{x:.1f}x")
        for r in rows
        if not r["peer"]
        for backend, _ in LINEAR_TURNS
        for what, x in zip(("training", "inference"), _linear_speedup(r, backend))
    ]


LINEAR_EXPORT_FILE = "linear_rnn_export_latency_cpu.json"
LINEAR_EXPORT_ROWS = (
    ("litert", "LiteRT"),
    ("onnxruntime", "ONNX Runtime"),
    ("keras_predict_on_batch", "Keras `predict_on_batch`"),
)


def _linear_export_rows():
    """Each runtime at each length (the LiteRT file at every length, the others
    at the longest): median ms per layer, at batch 1."""
    data = _file(LINEAR_EXPORT_FILE)["rows"]
    layers = list(dict.fromkeys(r["layer"] for r in data))
    lengths = sorted({r["length"] for r in data if r["kind"] == "sequence"})
    ms = {(r["runtime"], r["length"], r["layer"]): r["median_ms"] for r in data
          if r["kind"] == "sequence"}  # fmt: skip
    rows = []
    for runtime, name in LINEAR_EXPORT_ROWS:
        for length in lengths if runtime == "litert" else lengths[-1:]:
            at = {layer: ms[runtime, length, layer] for layer in layers}
            rows.append({"label": f"{name}, {length:,} steps", "ms": at})
    return rows


def _ms_short(v):
    return f"{v:.1f}" if v < 10 else f"{v:,.0f}"


def _linear_export_text(rows):
    layers = list(rows[0]["ms"])
    names = {"LSTM": "package LSTM"}
    header = ["<file at batch 1, median ms"] + [names.get(n, f"`{n}`") for n in layers]
    return _table(header, [[r["label"]] + [_ms_short(r["ms"][n]) for n in layers] for r in rows])


def _linear_export_data(rows):
    return [(r["label"], layer, v, _ms_short(v)) for r in rows for layer, v in r["ms"].items()]


TABLES = {
    "summary": (summary_rows, _summary_text, _summary_data),
    "cpu": (_cpu_rows, _cpu_text, _cpu_data),
    "gpu_jit": (_gpu_rows, _gpu_text, _gpu_data),
    "gpu_keras_call": (_keras_call_rows, _keras_call_text, _keras_call_data),
    "trees": (_tree_rows, _tree_text, _tree_data),
    "bidirectional": (_bidirectional_rows, _bidirectional_text, _bidirectional_data),
    "translation_xla": (_xla_rows, _xla_text, _xla_data),
    "generate": (_generate_rows, _generate_text, _generate_data),
    "drop_in": (_drop_in_rows, _drop_in_text, _drop_in_data),
    "deploy_summary": (_deploy_summary_rows, _deploy_summary_text, _deploy_summary_data),
    "deploy": (_deploy_rows, _deploy_text, _deploy_data),
    "deploy_fill": (_fill_rows, _fill_text, _fill_data),
    "deploy_interpreters": (_options_rows, _options_text, _options_data),
    "deploy_ptb": (_ptb_rows, _ptb_text, _ptb_data),
    "deploy_lstm_docs": (_deploy_docs_rows, _deploy_docs_text, _deploy_data),
    "deploy_ptb_docs": (_ptb_docs_rows, _ptb_docs_text, _ptb_docs_data),
    "litert_rnn": (_litert_rnn_rows, _litert_rnn_text, _litert_rnn_data),
    "litert_rnn_docs": (_litert_rnn_rows, _litert_rnn_text, _litert_rnn_data),
    "tree_eager": (_tree_eager_rows, _tree_eager_text, _tree_eager_data),
    "row_groups": (_row_groups_rows, _row_groups_text, _row_groups_data),
    "translation_predict": (_predict_rows, _predict_text, _predict_data),
    "linear_rnn_mingru": (_linear_mingru_rows, _linear_mingru_text, _linear_mingru_data),
    "linear_rnn_turns4096": (_linear_turns_rows, _linear_turns_text, _linear_turns_data),
    "linear_rnn_mingru_docs": (
        _linear_mingru_docs_rows,
        _linear_mingru_docs_text,
        _linear_mingru_data,
    ),
    "linear_rnn_turns4096_docs": (_linear_turns_rows, _linear_turns_text, _linear_turns_data),
    "linear_rnn_export": (_linear_export_rows, _linear_export_text, _linear_export_data),
}
DEPLOY_DOC = os.path.join(ROOT, "docs", "deploy.md")
LINEAR_DOC = os.path.join(ROOT, "docs", "linear_recurrences.md")
# The page each table is on: BENCHMARKS.md unless named here.
DOC_OF = {
    "deploy_lstm_docs": DEPLOY_DOC,
    "deploy_ptb_docs": DEPLOY_DOC,
    "litert_rnn_docs": DEPLOY_DOC,
    "linear_rnn_mingru_docs": LINEAR_DOC,
    "linear_rnn_turns4096_docs": LINEAR_DOC,
}
TITLES = {
    "summary": "tokens/s as a multiple of Keras's layer (batch 32 x 100, 128 → 256)",
    "cpu": "CPU: the package's layer ÷ Keras's, tokens/s (log scale)",
    "gpu_jit": "H100, compiled layers: the package's defaults ÷ the peer, tokens/s",
    "gpu_keras_call": "H100 through Keras's calls: ours ÷ Keras's layer, tokens/s (log scale)",
    "trees": "Binary Tree-LSTM, 100 SST dev trees: trees per second (log scale)",
    "bidirectional": "Masked Bidirectional, TensorFlow: ms per batch",
    "translation_xla": "multi30k-en-de decoding: ms per sentence (median)",
    "generate": "seqmodels generate, 30 words: seconds (log scale)",
    "drop_in": "Drop-in layers ÷ Keras's, tokens/s (median, range over processes)",
    "deploy_summary": "One LSTM (128 → 256, 100 steps) at batch 1: latency ms",
    "deploy": "Deployment formats, batch 1 LSTM: latency ms",
    "deploy_fill": "Zero-state FILL: time ÷ stateful file's, no reset",
    "deploy_interpreters": "LiteRT interpreter settings: latency ms",
    "deploy_ptb": "PTB test perplexity through LiteRT (windows of 35 words)",
    "deploy_lstm_docs": "Batch 1 LSTM in each deployment file: latency ms",
    "deploy_ptb_docs": "PTB test perplexity through LiteRT",
    "litert_rnn": "GRU and Elman as LiteRT files: Keras's time ÷ the file's",
    "litert_rnn_docs": "GRU and Elman as LiteRT files: Keras's time ÷ the file's",
    "tree_eager": "TreeLSTM(64), eager calls on JAX: ms (log scale)",
    "row_groups": "Fused JAX loop, forward + backward: ms (log scale)",
    "translation_predict": "multi30k-en-de predict, one sentence a call: ms (log scale)",
    "linear_rnn_mingru": "MinGRU's speed-up over the package's LSTM (batch 8, 128 → 256)",
    "linear_rnn_turns4096": "Length 4,096, timed in turns: speed-up over the package's LSTM",
    "linear_rnn_mingru_docs": "MinGRU's speed-up over the package's LSTM (batch 8, 128 → 256)",
    "linear_rnn_turns4096_docs": "Length 4,096, timed in turns: speed-up over the package's LSTM",
    "linear_rnn_export": "Linear recurrences' exported files at batch 1: ms (log scale)",
}
LOG_SCALE = {
    "cpu",
    "linear_rnn_export",
    "gpu_keras_call",
    "generate",
    "trees",
    "tree_eager",
    "row_groups",
    "translation_predict",
}
RATIO_PLOTS = {
    "summary",
    "cpu",
    "gpu_jit",
    "gpu_keras_call",
    "drop_in",
    "deploy_fill",
    "litert_rnn",
    "litert_rnn_docs",
    "linear_rnn_mingru",
    "linear_rnn_turns4096",
    "linear_rnn_mingru_docs",
    "linear_rnn_turns4096_docs",
}


def table(name):
    rows, text, _ = TABLES[name]
    return text(rows())


def plot_data(name):
    """``[(row label, series, value, as the table shows it)]``: what the plot draws."""
    rows, _, data = TABLES[name]
    return data(rows())


def draw(name, path):
    """One horizontal bar chart of ``plot_data(name)``: a group of bars per row."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    data = [d for d in plot_data(name) if not d[1].endswith((" low", " high"))]
    labels = list(dict.fromkeys(d[0].replace(" | ", ", ") for d in data))
    series = list(dict.fromkeys(d[1] for d in data))
    spread = {(d[0], d[1][: -len(" low")]): d[2] for d in plot_data(name) if d[1].endswith(" low")}
    spread_high = {
        (d[0], d[1][: -len(" high")]): d[2] for d in plot_data(name) if d[1].endswith(" high")
    }
    height = 1.0 + 0.22 * len(labels) * max(1, len(series)) ** 0.6
    fig = Figure(figsize=(7.5, height), dpi=80)
    ax = fig.add_subplot()
    bar = 0.8 / len(series)
    colors = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b"]
    for s, serie in enumerate(series):
        ys, xs, err = [], [], [[], []]
        for label_raw, name_, value, _ in data:
            if name_ != serie:
                continue
            y = labels.index(label_raw.replace(" | ", ", "))
            ys.append(y + (s - (len(series) - 1) / 2) * bar)
            xs.append(value)
            low, high = spread.get((label_raw, serie)), spread_high.get((label_raw, serie))
            err[0].append(0 if low is None else value - low)
            err[1].append(0 if high is None else high - value)
        kwargs = {"xerr": err, "capsize": 2} if spread else {}
        ax.barh(ys, xs, height=bar, color=colors[s % len(colors)], label=serie, **kwargs)
    ax.set_yticks(range(len(labels)), labels, fontsize=8)
    ax.invert_yaxis()
    if name in LOG_SCALE:
        ax.set_xscale("log")
        low, high = ax.get_xlim()
        steps = (0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 50, 100, 500, 1000, 10000)
        ticks = [t for t in steps if low <= t <= high]
        ax.set_xticks(ticks, [f"{t:g}" for t in ticks])
        ax.minorticks_off()
    if name in RATIO_PLOTS:
        ax.axvline(1.0, color="black", linestyle="--", linewidth=0.8)
    ax.tick_params(axis="x", labelsize=8)
    ax.set_title(TITLES[name], fontsize=9)
    ax.legend(fontsize=7, loc="best")
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, metadata={"Software": None})


def markers(name):
    return (
        f"<!-- table {name}: python tools/benchmark_plots.py -->",
        f"<!-- end of table {name} -->",
    )


def plot_path(name):
    return os.path.join(PLOTS, f"{name}.png")


def doc_path(name):
    return DOC_OF.get(name, DOC)


def plot_link(name):
    """The plot's path as the page ``name`` is on links it."""
    return os.path.relpath(plot_path(name), os.path.dirname(doc_path(name))).replace(os.sep, "/")


def documented_table(name, text=None):
    if text is None:
        with open(doc_path(name), encoding="utf-8") as f:
            text = f.read()
    begin, end = markers(name)
    return text[text.index(begin) + len(begin) : text.index(end)].strip()


def documented_rows(name):
    """The page's table ``name`` as ``{row label: row text}`` (label: the first
    columns, as ``plot_data`` names them)."""
    lines = documented_table(name).split("\n")[2:]
    return [line.strip().strip("|").strip() for line in lines]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="compare, write nothing")
    args = parser.parse_args(argv)
    pages = {}
    for name in TABLES:
        path = doc_path(name)
        if path not in pages:
            with open(path, encoding="utf-8") as f:
                pages[path] = [f.read()] * 2
        new = pages[path][1]
        begin, end = markers(name)
        start, stop = new.index(begin) + len(begin), new.index(end)
        pages[path][1] = new[:start] + "\n" + table(name) + "\n" + new[stop:]
    if args.check:
        missing = [n for n in TABLES if not os.path.exists(plot_path(n))]
        changed = [os.path.relpath(p, ROOT) for p, (old, new) in pages.items() if old != new]
        if changed or missing:
            print(f"tables or plots differ from the results files "
                  f"({', '.join(changed + missing)}): run python tools/benchmark_plots.py",
                  file=sys.stderr)  # fmt: skip
            return 1
        return 0
    os.makedirs(PLOTS, exist_ok=True)
    for name in TABLES:
        draw(name, plot_path(name))
    for path, (old, new) in pages.items():
        if new != old:
            with open(path, "w", encoding="utf-8") as f:
                f.write(new)
    return 0


if __name__ == "__main__":
    sys.exit(main())
