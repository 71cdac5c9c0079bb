"""Training and inference throughput of the package's recurrent layers against
Keras's and PyTorch's own, on every backend.

The matrix: backends (TensorFlow, JAX, PyTorch; one process each) x cells
(LSTM, GRU reset-after, GRU reset-before, Elman) x configs (batch x length x
input -> units) x training / inference. On each backend it times
``keras_seqmodels.layers.Recurrent(<cell>)`` (the fused loop where it applies;
``fused=False``, the generic loop, alongside as "today's" reference) and
``keras.layers.LSTM`` / ``GRU`` / ``SimpleRNN``; the PyTorch process also times
``torch.nn.LSTM`` / ``GRU`` / ``RNN`` (2 threads). Training = one step of
forward, backward and SGD on a mean squared error (``train_on_batch`` for the
Keras models, ``loss.backward(); opt.step()`` for torch); inference =
``predict_on_batch`` / a forward pass under ``torch.no_grad()``. Timings are
taken in turns (every model once, then again), the median of the repeats is
kept, and the load average is recorded: on a shared machine, load changes
then hit all models alike.

Ratios: ours against Keras's layer on the same backend, and against the
fastest peer (any backend, torch included) of the whole run.

    python benchmarks/rnn_throughput.py --out benchmarks/results/rnn_throughput_cpu.json

(runs one worker process per backend, then prints the Markdown table). On a
GPU (JAX's CUDA build; Keras's ``LSTM`` then runs cuDNN where it has no mask,
its generic loop where it has one), with masked rows and cuDNN's ``torch.nn``:

    KERAS_BACKEND=jax python benchmarks/rnn_throughput.py --backends jax,torch \
        --torch-device cuda --masks none,padded --out benchmarks/results/rnn_throughput_gpu.json

There every Keras model's ``train_on_batch`` / ``predict_on_batch`` call costs
several milliseconds whatever its layer; ``--jit`` (JAX worker) times each layer
alone as one compiled function instead (``benchmarks/gpu.sh`` runs the GPU set).

``--drop-in`` times the drop-in ``ks.layers.LSTM`` / ``GRU`` / ``SimpleRNN``
(built with Keras's arguments; ``fused=False`` as "generic") as "ours", on
TensorFlow and JAX:

    python benchmarks/rnn_throughput.py --drop-in --backends tensorflow,jax \
        --configs b32_t50_64to128 --cells LSTM,GRU --processes 3 --out drop_in.json

One
backend only: ``--worker tensorflow --out part.json``. ``--combine a.json
b.json ... --out all.json`` rebuilds the table from worker files. PyTorch is
optional (``pip install torch``); without it that backend is skipped.

On a small shared CPU the speed of the same model moves by 5-15% from one
process to the next (memory placement, the allocator's state), more than
many of the differences measured. ``--processes 5`` runs every worker five
times, each in a fresh process; the table then gives the median tokens/s
over the processes and, for the ratio to Keras, the median of the
per-process ratios (each taken within one process) with their range.
Worker files given to ``--combine`` that repeat a model are merged the
same way.
"""

import argparse
import itertools
import json
import os
import platform
import statistics
import subprocess
import sys
import time

CONFIGS = {
    "b32_t100_128to256": dict(batch=32, time=100, features=128, units=256, repeats=7),
    "b1_t1000_128to256": dict(batch=1, time=1000, features=128, units=256, repeats=5),
    "b128_t50_512to512": dict(batch=128, time=50, features=512, units=512, repeats=3),
    "b32_t50_64to128": dict(batch=32, time=50, features=64, units=128, repeats=5),
}
CELLS = ["LSTM", "GRU", "GRU_reset_before", "Elman"]
BACKENDS = ["tensorflow", "jax", "torch"]


def keras_layers(cell, cfg, drop_in=False):
    """The timed Keras layers: ours (fused where it applies), ours with the
    generic loop, and Keras's own. ``drop_in``: ours are the drop-in
    ``ks.layers.LSTM`` / ``GRU`` / ``SimpleRNN``, built with Keras's arguments."""
    import keras

    import keras_seqmodels as ks

    u = cfg["units"]
    if drop_in:
        make = {
            "LSTM": lambda **kw: ks.layers.LSTM(u, return_sequences=True, **kw),
            "GRU": lambda **kw: ks.layers.GRU(u, return_sequences=True, **kw),
            "GRU_reset_before": lambda **kw: ks.layers.GRU(
                u, return_sequences=True, reset_after=False, **kw
            ),
            "Elman": lambda **kw: ks.layers.SimpleRNN(u, return_sequences=True, **kw),
        }[cell]
        keras_cls = {"Elman": keras.layers.SimpleRNN, "LSTM": keras.layers.LSTM}
        peer = keras_cls.get(cell, keras.layers.GRU)
        peer_kwargs = {"reset_after": False} if cell == "GRU_reset_before" else {}
        return {
            "ours": make(),
            "ours_generic": make(fused=False),
            "keras": peer(u, return_sequences=True, **peer_kwargs),
        }
    ours = {
        "LSTM": lambda: ks.cells.LSTMCell(u),
        "GRU": lambda: ks.cells.GRUCell(u, reset_after=True),
        "GRU_reset_before": lambda: ks.cells.GRUCell(u, reset_after=False),
        "Elman": lambda: ks.cells.ElmanCell(u),
    }[cell]
    peer = {
        "LSTM": lambda: keras.layers.LSTM(u, return_sequences=True),
        "GRU": lambda: keras.layers.GRU(u, return_sequences=True, reset_after=True),
        "GRU_reset_before": lambda: keras.layers.GRU(u, return_sequences=True, reset_after=False),
        "Elman": lambda: keras.layers.SimpleRNN(u, return_sequences=True),
    }[cell]
    layers = {"ours": ks.layers.Recurrent(ours(), return_sequences=True)}
    layers["ours_generic"] = ks.layers.Recurrent(ours(), return_sequences=True, fused=False)
    layers["keras"] = peer()
    return layers


def keras_models(cell, cfg, masked=False, drop_in=False):
    import keras

    runners = {}
    for name, layer in keras_layers(cell, cfg, drop_in).items():
        inputs = keras.Input((cfg["time"], cfg["features"]), batch_size=cfg["batch"])
        if masked:
            mask = keras.Input((cfg["time"],), batch_size=cfg["batch"], dtype="bool")
            model = keras.Model([inputs, mask], layer(inputs, mask=mask))
        else:
            model = keras.Model(inputs, layer(inputs))
        model.compile(optimizer=keras.optimizers.SGD(1e-3), loss="mse")
        runners[name] = (
            lambda x, y, m=model: m.train_on_batch(x, y),
            lambda x, m=model: keras.ops.convert_to_numpy(m.predict_on_batch(x)),
        )
    return runners


def jit_layers(cell, cfg):
    """``keras_layers`` plus the package's layer with other settings than its
    defaults (its own kernels, ``kernels.tune``): for the LSTM with cuDNN in
    inference (``ours_cudnn_infer``); for every cell with the fused loop in
    inference on every platform (``ours_fused_infer``) and, besides, the
    input product hoisted out of that loop (``ours_hoist``)."""
    from keras_seqmodels.cells.forms import FORMS
    from keras_seqmodels.layers import kernels

    layers = keras_layers(cell, cfg)
    if cell == "LSTM":
        layer = keras_layers(cell, cfg)["ours"]
        layers["ours_cudnn_infer"] = kernels.tune(layer, cudnn_inference=True)
    every = tuple(FORMS)
    inference = dict.fromkeys(kernels.FusedTuning().inference, every)
    for name, hoist in (("ours_fused_infer", False), ("ours_hoist", True)):
        layer = keras_layers(cell, cfg)["ours"]
        layers[name] = kernels.tune(layer, inference=inference, hoist=hoist)
    return layers


def jax_jit_models(cell, cfg, sample):
    """The same layers, each timed as one compiled JAX function of the layer
    alone (``jax.jit`` of ``stateless_call``; training = gradient and an SGD
    update of the weights), without the cost of a Keras
    ``train_on_batch`` / ``predict_on_batch`` call. ``sample`` is
    ``(x, y)`` or ``([x, mask], y)`` as device arrays; the layers are
    ``jit_layers``."""
    import jax
    import jax.numpy as jnp

    inputs, target = sample
    x, mask = inputs if isinstance(inputs, (list, tuple)) else (inputs, None)
    runners = {}
    for name, layer in jit_layers(cell, cfg).items():
        layer.build(x.shape)
        fixed = [v.value for v in layer.non_trainable_variables]
        weights = [v.value for v in layer.trainable_variables]

        def forward(w, x, m, training, layer=layer, fixed=fixed):
            kwargs = {} if m is None else {"mask": m}
            return layer.stateless_call(w, fixed, x, training=training, **kwargs)[0]

        def step(w, x, y, m, forward=forward):
            grads = jax.grad(lambda w: jnp.mean(jnp.square(forward(w, x, m, True) - y)))(w)
            return [a - 1e-3 * g for a, g in zip(w, grads)]

        def infer(w, x, m, forward=forward):
            return forward(w, x, m, False)

        step = jax.jit(step).lower(weights, x, target, mask).compile()
        infer = jax.jit(infer).lower(weights, x, mask).compile()
        state = {"w": weights}

        def train_fn(inputs, y, step=step, state=state):
            x, m = inputs if isinstance(inputs, (list, tuple)) else (inputs, None)
            state["w"] = jax.block_until_ready(step(state["w"], x, y, m))

        def infer_fn(inputs, infer=infer, state=state):
            x, m = inputs if isinstance(inputs, (list, tuple)) else (inputs, None)
            return jax.block_until_ready(infer(state["w"], x, m))

        runners[name] = (train_fn, infer_fn)
    return runners


def torch_models(cell, cfg, threads, device="cpu", lengths=None):
    import torch

    if cell == "GRU_reset_before":
        return {}  # torch has only the reset-after GRU
    cls = {"LSTM": torch.nn.LSTM, "GRU": torch.nn.GRU, "Elman": torch.nn.RNN}[cell]
    net = cls(cfg["features"], cfg["units"], batch_first=True).to(device)
    opt = torch.optim.SGD(net.parameters(), lr=1e-3)
    pack = torch.nn.utils.rnn.pack_padded_sequence
    unpack = torch.nn.utils.rnn.pad_packed_sequence

    def forward(x):
        if lengths is None:
            return net(x)[0]
        packed = pack(x, torch.from_numpy(lengths), batch_first=True, enforce_sorted=False)
        return unpack(net(packed)[0], batch_first=True, total_length=cfg["time"])[0]

    def sync():
        if device != "cpu":
            torch.cuda.synchronize()

    def train(x, y):
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(forward(x), y)
        loss.backward()
        opt.step()
        sync()

    def infer(x):
        with torch.no_grad():
            return forward(x).cpu().numpy()

    label = f"torch_{threads}t" if device == "cpu" else "torch_cuda"
    return {label: (train, infer)}


def padded_lengths(cfg, seed=0):
    """Right-padded lengths, uniform in [time / 2, time], the longest = time."""
    import numpy as np

    rng = np.random.default_rng(seed)
    lengths = rng.integers(cfg["time"] // 2, cfg["time"] + 1, cfg["batch"])
    lengths[0] = cfg["time"]
    return lengths


def keras_backend(worker, torch_keras=False):
    """The Keras backend a worker runs: its own (the torch worker imports
    Keras on PyTorch whether or not ``--torch-keras`` times Keras models
    there, so it needs neither TensorFlow nor JAX)."""
    return worker


def run_worker(backend, configs, cells, repeats_scale, torch_threads=2, torch_keras=False,
               masked=False, torch_device="cpu", jit=False, drop_in=False):  # fmt: skip
    import numpy as np

    if drop_in and (jit or backend == "torch"):
        raise SystemExit("rnn_throughput: --drop-in times the Keras models of the "
                         "TensorFlow and JAX workers, without --jit.")
    if jit and backend != "jax":
        raise SystemExit(f"rnn_throughput: --jit times JAX only. Received the {backend} worker.")

    if backend == "torch":
        import torch

        torch.set_num_threads(torch_threads)
    import keras

    expected = keras_backend(backend, torch_keras)
    if backend != "torch" or torch_keras:
        if keras.backend.backend() != expected:
            raise SystemExit(
                f"rnn_throughput: the {backend} worker found Keras on the "
                f"{keras.backend.backend()} backend (Keras was imported before the "
                f"worker set KERAS_BACKEND={expected})."
            )

    rows = []
    for cfg_name in configs:
        cfg = CONFIGS[cfg_name]
        for cell in cells:
            keras.utils.set_random_seed(0)
            runners = {}
            if (backend != "torch" or torch_keras) and not jit:
                runners = keras_models(cell, cfg, masked, drop_in)
            rng = np.random.default_rng(0)
            shape = (cfg["batch"], cfg["time"], cfg["features"])
            x = rng.standard_normal(shape).astype("float32")
            y = rng.standard_normal((cfg["batch"], cfg["time"], cfg["units"])).astype("float32")
            lengths = padded_lengths(cfg) if masked else None
            if masked:  # padded steps: zero inputs, zero targets (the layers output 0 there)
                keep = np.arange(cfg["time"])[None, :] < lengths[:, None]
                x, y = x * keep[..., None], y * keep[..., None]
                inputs = {name: ([x, keep], y) for name in runners}
            else:
                inputs = {name: (x, y) for name in runners}
            if jit:
                import jax

                sample = jax.device_put(([x, keep], y) if masked else (x, y))
                runners = jax_jit_models(cell, cfg, sample)
                inputs = {name: sample for name in runners}
            if backend == "torch":
                import torch

                torch_runners = torch_models(cell, cfg, torch_threads, torch_device, lengths)
                runners.update(torch_runners)
                for name in torch_runners:
                    tx, ty = (torch.from_numpy(a).to(torch_device) for a in (x, y))
                    inputs[name] = (tx, ty)
            loads = [os.getloadavg()[0]]
            for name, (train, infer) in runners.items():  # warm-up, compilation
                for _ in range(2):
                    train(*inputs[name])
                    infer(inputs[name][0])
            times = {name: ([], []) for name in runners}
            repeats = max(2, round(cfg["repeats"] * repeats_scale))
            for _ in range(repeats):
                for name, (train, infer) in runners.items():
                    start = time.perf_counter()
                    train(*inputs[name])
                    times[name][0].append(time.perf_counter() - start)
                    start = time.perf_counter()
                    infer(inputs[name][0])
                    times[name][1].append(time.perf_counter() - start)
                loads.append(os.getloadavg()[0])
            tokens = cfg["batch"] * cfg["time"]
            for name, (tr, inf) in times.items():
                row = dict(
                    backend=backend,
                    config=cfg_name
                    + ("+mask" if masked else "")
                    + ("+jit" if jit else "")
                    + ("+drop-in" if drop_in else ""),
                    cell=cell,
                    model=name,
                    train_tok_s=tokens / float(np.median(tr)),
                    infer_tok_s=tokens / float(np.median(inf)),
                    train_tok_s_best=tokens / float(np.min(tr)),
                    infer_tok_s_best=tokens / float(np.min(inf)),
                    repeats=repeats,
                    process=os.getpid(),
                    load_avg_1min=[float(v) for v in loads],
                )
                rows.append(row)
                print(
                    f"{backend:10s} {row['config']:23s} {cell:16s} {name:12s} "
                    f"train {row['train_tok_s']:9.0f} infer {row['infer_tok_s']:9.0f} tok/s  "
                    f"load {loads[-1]:.1f}",
                    flush=True,
                )
    return rows


def meta(backend):
    info = dict(machine=platform.machine(), cpus=os.cpu_count(), python=platform.python_version())
    try:
        import keras

        info["keras"] = keras.__version__
        info["keras_backend"] = keras.backend.backend()
    except ImportError:
        pass
    if backend == "tensorflow":
        import tensorflow as tf

        info["tensorflow"] = tf.__version__
    elif backend == "jax":
        import jax

        info["jax"] = jax.__version__
        info["device"] = jax.devices()[0].device_kind
    elif backend == "torch":
        import torch

        info["torch"] = torch.__version__
        if torch.cuda.is_available():
            info["device"] = torch.cuda.get_device_name(0)
    return info


def is_peer(model):
    return model == "keras" or model.startswith("torch")


def merge(rows):
    """One row per backend x config x cell x model: rows measured in several
    processes get the median tokens/s, and ``ours`` rows the per-process
    ratios to Keras's layer (``train_vs_keras``, ``infer_vs_keras``)."""
    def key(r):
        return (r["backend"], r["config"], r["cell"], r["model"])

    def process(r):
        # A row merged before lists its processes.
        p = r.get("process")
        return tuple(p) if isinstance(p, list) else p

    groups = {}
    for r in rows:
        groups.setdefault(key(r), []).append(r)
    by_process = {(key(r), process(r)): r for r in rows}
    merged = []
    for k, group in groups.items():
        if len(group) == 1:
            merged.append(group[0])
            continue
        row = dict(group[0], processes=len(group), process=[r.get("process") for r in group])
        for field in ("train_tok_s", "infer_tok_s", "train_tok_s_best", "infer_tok_s_best"):
            row[field] = statistics.median(r[field] for r in group)
        if k[3] != "keras":
            for mode in ("train", "infer"):
                ratios = []
                for r in group:
                    peer = by_process.get((k[:3] + ("keras",), process(r)))
                    if peer is not None:
                        ratios.append(r[f"{mode}_tok_s"] / peer[f"{mode}_tok_s"])
                if ratios:
                    row[f"{mode}_vs_keras"] = ratios
        merged.append(row)
    return merged


def table(rows):
    """Markdown table: one line per config x cell x backend, with the ratios
    of ours to Keras on that backend and to the fastest peer of the run."""
    out = [
        "| config | cell | backend | train tok/s ours | generic | Keras | ours/Keras "
        "| ours/fastest peer | infer tok/s ours | generic | Keras | ours/Keras "
        "| ours/fastest peer |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    peers = {}
    for r in rows:
        if is_peer(r["model"]):
            key = (r["config"], r["cell"])
            best = peers.setdefault(key, {"train": (0, ""), "infer": (0, "")})
            label = r["model"] if r["model"] != "keras" else f"Keras {r['backend']}"
            for mode in ("train", "infer"):
                if r[f"{mode}_tok_s"] > best[mode][0]:
                    best[mode] = (r[f"{mode}_tok_s"], label)
    index = {(r["config"], r["cell"], r["backend"], r["model"]): r for r in rows}
    for cfg in dict.fromkeys(r["config"] for r in rows):
        for cell in CELLS:
            for backend in BACKENDS:
                ours = index.get((cfg, cell, backend, "ours"))
                if ours is None:
                    continue
                gen = index.get((cfg, cell, backend, "ours_generic"))
                ker = index.get((cfg, cell, backend, "keras"))
                best = peers.get((cfg, cell))
                cols = [cfg, cell, backend]
                for mode in ("train", "infer"):
                    o = ours[f"{mode}_tok_s"]
                    g = gen[f"{mode}_tok_s"] if gen else float("nan")
                    k = ker[f"{mode}_tok_s"] if ker else float("nan")
                    fastest, label = best[mode] if best else (float("nan"), "")
                    ratio = f"**{o / k:.2f}**"
                    per_process = ours.get(f"{mode}_vs_keras")
                    if per_process:
                        lo, hi = min(per_process), max(per_process)
                        mid = statistics.median(per_process)
                        ratio = f"**{mid:.2f}** ({lo:.2f}-{hi:.2f})"
                    cols += [
                        f"{o:.0f}",
                        f"{g:.0f}",
                        f"{k:.0f}",
                        ratio,
                        f"{o / fastest:.2f} ({label})",
                    ]
                out.append("| " + " | ".join(cols) + " |")
    torch_rows = [r for r in rows if r["model"].startswith("torch")]
    if torch_rows:
        out.append("")
        out.append("| config | cell | torch.nn (threads) | train tok/s | infer tok/s |")
        out.append("|---|---|---|---:|---:|")
        for r in torch_rows:
            out.append(
                f"| {r['config']} | {r['cell']} | {r['model']} | {r['train_tok_s']:.0f} "
                f"| {r['infer_tok_s']:.0f} |"
            )
    return "\n".join(out)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--worker", choices=BACKENDS, help="run one backend in this process")
    parser.add_argument("--backends", default=",".join(BACKENDS))
    parser.add_argument("--configs", default=",".join(CONFIGS))
    parser.add_argument("--cells", default=",".join(CELLS))
    parser.add_argument(
        "--repeats-scale", type=float, default=1.0, help="multiply each config's repeats"
    )
    parser.add_argument(
        "--torch-threads",
        default="2,1",
        help="torch.nn peers: one torch worker per thread count",
    )
    parser.add_argument(
        "--torch-keras",
        action="store_true",
        help="also time Keras models on the torch backend (ours runs the generic loop there)",
    )
    parser.add_argument(
        "--masks",
        default="none",
        help="none, padded or none,padded: padded gives every model a right-padded mask "
        "(lengths uniform in [time/2, time]; torch packs the sequences)",
    )
    parser.add_argument(
        "--torch-device",
        default="cpu",
        help="cpu, or cuda: the torch.nn peer on the GPU (cuDNN), one worker",
    )
    parser.add_argument(
        "--processes",
        type=int,
        default=1,
        help="run every worker this many times, each in a fresh process, and merge",
    )
    parser.add_argument(
        "--jit",
        action="store_true",
        help="JAX worker: time each layer alone as one compiled function (no Keras "
        "train_on_batch / predict_on_batch call); configs get a +jit label",
    )
    parser.add_argument(
        "--drop-in",
        action="store_true",
        help="ours = the drop-in ks.layers.LSTM / GRU / SimpleRNN (Keras's arguments) "
        "instead of Recurrent(<cell>); TensorFlow and JAX workers; configs get a "
        "+drop-in label",
    )
    parser.add_argument("--combine", nargs="*", help="worker JSON files to merge")
    parser.add_argument("--out", default=None, help="JSON file to write")
    args = parser.parse_args()
    configs, cells = args.configs.split(","), args.cells.split(",")

    if args.worker:
        # Keras reads its backend when first imported (below, in the worker):
        # a worker runs on the backend it is named for, whatever the caller's
        # environment or ~/.keras/keras.json says.
        os.environ["KERAS_BACKEND"] = keras_backend(args.worker, args.torch_keras)
        threads = int(args.torch_threads.split(",")[0])
        masks = args.masks.split(",")
        if not set(masks) <= {"none", "padded"}:
            parser.error(f"--masks takes none and/or padded. Received: {args.masks!r}")
        result = dict(meta={args.worker: meta(args.worker)}, results=[])
        for cfg, cell, mask in itertools.product(configs, cells, masks):
            result["results"] += run_worker(args.worker, [cfg], [cell], args.repeats_scale,
                                            threads, args.torch_keras, mask == "padded",
                                            args.torch_device, args.jit,
                                            args.drop_in)  # fmt: skip
            if args.out:  # what is done so far survives a time limit
                write(args.out, result)
    elif args.combine:
        result = dict(meta={}, results=[])
        for i, path in enumerate(args.combine):
            with open(path) as f:
                part = json.load(f)
            result["meta"].update(part["meta"])
            # Files written before rows recorded their process: one each.
            result["results"] += [dict({"process": f"file{i}"}, **r) for r in part["results"]]
        result["results"] = merge(result["results"])
    else:
        result = dict(meta={}, results=[])
        base = os.path.splitext(args.out or "rnn_throughput.json")[0]
        jobs = []
        for backend in args.backends.split(","):
            if backend != "torch":
                jobs.append((backend, f"{base}_{backend}.json", []))
                continue
            import importlib.util

            if importlib.util.find_spec("torch") is None:
                print("torch is not installed: skipping that backend", flush=True)
                continue
            keras_flag = ["--torch-keras"] if args.torch_keras else []
            if args.torch_device != "cpu":
                extra = ["--torch-device", args.torch_device] + keras_flag
                jobs.append((backend, f"{base}_torch_{args.torch_device}.json", extra))
                continue
            for threads in args.torch_threads.split(","):
                extra = ["--torch-threads", threads] + keras_flag
                jobs.append((backend, f"{base}_torch_{threads}t.json", extra))
        if args.processes < 1:
            parser.error(f"--processes takes a positive count. Received: {args.processes}")
        for i in range(args.processes):
            for backend, part, extra in jobs:
                if args.processes > 1:
                    part = part.replace(".json", f"_p{i + 1}.json")
                cmd = [sys.executable, __file__, "--worker", backend, "--out", part]
                cmd += ["--configs", args.configs, "--cells", args.cells]
                cmd += ["--repeats-scale", str(args.repeats_scale), "--masks", args.masks]
                cmd += ["--drop-in"] if args.drop_in else []
                env = dict(os.environ, KERAS_BACKEND=backend)
                subprocess.run(cmd + extra, env=env, check=True)
                with open(part) as f:
                    data = json.load(f)
                result["meta"].update(data["meta"])
                result["results"] += data["results"]
        result["results"] = merge(result["results"])
    result["meta"]["command"] = " ".join(sys.argv)
    if not args.worker:
        print(table(result["results"]))
    if args.out:
        write(args.out, result)


def write(path, result):
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w") as f:
        json.dump(result, f, indent=2)


if __name__ == "__main__":
    main()
