"""ptb-lstm on an accelerator: Zaremba et al. (2014) configs, JAX training loop.

    KERAS_BACKEND=jax python zoo/ptb-lstm/jax_train.py --config small \\
        --streams ptb_streams.npz --out OUT [--budget-s 500]

The model is the recipe's ``build_model`` (the package's ``Recurrent`` +
``LSTMCell``), stateful, driven by ``model.stateless_call`` in a jitted
``lax.scan`` over ``chunk`` TBPTT windows: the LSTM states (non-trainable
variables of the stateful layers) are carried from one window to the next,
row i of window t+1 continuing row i of window t. As in the paper: plain SGD,
loss summed over the window and averaged over the batch, gradients clipped to
global norm 5, learning rate ``lr * decay ** max(epoch - decay_after, 0)``
(epochs counted from 1). Valid perplexity after every epoch; the best
weights are written to ``OUT/best_weights.npz`` (``--save-dtype``) at once,
so a kill loses nothing. No TensorFlow: the streams come from
``recipe.save_streams`` (made on a TensorFlow machine).
"""

import argparse
import importlib.util
import json
import math
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def _load_recipe():
    """zoo/ptb-lstm/recipe.py, by path under its own name: a bare ``import
    recipe`` returns whichever zoo recipe this process imported first."""
    path = os.path.join(HERE, "recipe.py")
    spec = importlib.util.spec_from_file_location("ptb_lstm_recipe", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


recipe = _load_recipe()  # the model and the configs

CONFIGS = recipe.CONFIGS


def windows(ids, batch, bptt, chunk):
    """(inputs, targets) of shape (n_chunks, chunk, batch, bptt), stream order.

    The stream is cut into ``batch`` rows; window t holds columns
    ``[t*bptt, (t+1)*bptt)`` of every row. The last ``steps % chunk`` windows
    of the pass are dropped (fewer than ``chunk`` of about 2,300 / 1,300).
    """
    rows = (len(ids) - 1) // batch
    x = ids[: rows * batch].reshape(batch, rows)
    y = ids[1 : rows * batch + 1].reshape(batch, rows)
    steps = rows // bptt
    steps -= steps % chunk
    x = x[:, : steps * bptt].reshape(batch, steps, bptt).transpose(1, 0, 2)
    y = y[:, : steps * bptt].reshape(batch, steps, bptt).transpose(1, 0, 2)
    shape = (steps // chunk, chunk, batch, bptt)
    return x.reshape(shape).astype("int32"), y.reshape(shape).astype("int32")


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--config", choices=sorted(CONFIGS), default="small")
    parser.add_argument("--streams", required=True, help="npz from recipe.save_streams")
    parser.add_argument("--out", required=True)
    parser.add_argument("--budget-s", type=float, default=500.0,
                        help="stop cleanly after this many seconds from start")  # fmt: skip
    parser.add_argument("--epochs", type=int, default=None)
    parser.add_argument("--chunk", type=int, default=0, help="windows per jitted call")
    parser.add_argument("--limit", type=int, default=0, help="first N train tokens (smoke)")
    parser.add_argument("--units", type=int, default=None, help="override the config")
    parser.add_argument("--dropout", type=float, default=None, help="override the config")
    parser.add_argument("--decay-after", type=int, default=None, help="override the config")
    parser.add_argument("--decay", type=float, default=None, help="override the config")
    parser.add_argument("--tag", default=None, help="name of the run's files (default: config)")
    parser.add_argument("--save-weights", action="store_true")
    parser.add_argument("--shared-best", default=None,
                        help="runs in parallel keep one weights file: the best valid of "
                             "all of them (OUT/<name>_weights.npz, OUT/<name>.json)")  # fmt: skip
    parser.add_argument("--save-dtype", default="float32",
                        help="dtype of the matrices over 1M entries in the saved file")  # fmt: skip
    parser.add_argument("--test", action="store_true",
                        help="score test once with the best-valid weights at the end")  # fmt: skip
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    t_start = time.time()
    cfg = dict(CONFIGS[args.config])
    if args.epochs:
        cfg["epochs"] = args.epochs
    for key in ("units", "dropout", "decay_after", "decay"):
        if getattr(args, key) is not None:
            cfg[key] = getattr(args, key)
    tag = args.tag or args.config
    os.makedirs(args.out, exist_ok=True)
    log_path = os.path.join(args.out, f"{tag}_log.jsonl")

    def log(entry):
        entry["t"] = round(time.time() - t_start, 1)
        print(json.dumps(entry), flush=True)
        with open(log_path, "a") as f:
            f.write(json.dumps(entry) + "\n")

    os.environ.setdefault("KERAS_BACKEND", "jax")
    import jax
    import jax.numpy as jnp
    import keras

    keras.utils.set_random_seed(args.seed)
    data = np.load(args.streams)
    vocab_size = len(data["vocab"])
    train_ids = data["train"].astype("int32")
    valid_ids = data["valid"].astype("int32")
    if args.limit:
        train_ids, valid_ids = train_ids[: args.limit], valid_ids[: args.limit // 5]
    batch, bptt = cfg["batch_size"], cfg["bptt"]
    steps_per_pass = ((len(train_ids) - 1) // batch) // bptt
    chunk = args.chunk or min(range(32, 65), key=lambda k: (steps_per_pass % k, -k))
    chunk = min(chunk, steps_per_pass)
    tx, ty = windows(train_ids, batch, bptt, chunk)
    vx, vy = windows(valid_ids, batch, bptt, 1)
    vx, vy = vx[:, 0], vy[:, 0]

    model = recipe.build_model(vocab_size, cfg["units"], cfg["layers"], cfg["dropout"],
                               batch=batch, bptt=bptt, stateful=True,
                               init_scale=cfg["init_scale"], precompute_inputs=True,
                               seed=args.seed)  # fmt: skip
    n_params = int(model.count_params())
    state_mask = [v.path.split("/")[-1] == "state" for v in model.non_trainable_variables]
    log({"event": "start", "config": args.config, "tag": tag, "seed": args.seed, **cfg,
         "chunk": chunk,
         "windows_per_pass": int(tx.shape[0] * chunk), "of": steps_per_pass,
         "parameters": n_params, "devices": [str(d) for d in jax.devices()],
         "state_vars": int(sum(state_mask)), "jax": jax.__version__,
         "keras": keras.__version__})  # fmt: skip

    def zero_states(ntv):
        return [jnp.zeros_like(v) if s else v for v, s in zip(ntv, state_mask)]

    def loss_fn(tv, ntv, x, y, training):
        logits, ntv = model.stateless_call(tv, ntv, x, training=training)
        logp = jax.nn.log_softmax(logits.astype("float32"), axis=-1)
        nll = -jnp.take_along_axis(logp, y[..., None], axis=-1)[..., 0]
        return nll.sum() / batch, (ntv, nll.sum())

    grad_fn = jax.value_and_grad(loss_fn, has_aux=True)

    @jax.jit
    def train_chunk(tv, ntv, lr, xs, ys):
        def body(carry, xy):
            tv, ntv = carry
            (_, (ntv, nll)), grads = grad_fn(tv, ntv, xy[0], xy[1], True)
            norm = jnp.sqrt(sum(jnp.sum(jnp.square(g)) for g in grads))
            scale = jnp.minimum(1.0, cfg["clip"] / jnp.maximum(norm, 1e-6))
            tv = [w - lr * scale * g for w, g in zip(tv, grads)]
            return (tv, ntv), (nll, norm)

        (tv, ntv), (nll, norms) = jax.lax.scan(body, (tv, ntv), (xs, ys))
        return tv, ntv, nll.sum(), norms.mean()

    @jax.jit
    def eval_stream(tv, ntv, xs, ys):
        def body(ntv, xy):
            _, (ntv, nll) = loss_fn(tv, ntv, xy[0], xy[1], False)
            return ntv, nll

        _, nll = jax.lax.scan(body, zero_states(ntv), (xs, ys))
        return nll.sum()

    def perplexity(tv, ntv, xs, ys):
        return math.exp(float(eval_stream(tv, ntv, xs, ys)) / ys.size)

    tv = [v.value for v in model.trainable_variables]
    ntv = [v.value for v in model.non_trainable_variables]
    names = [v.path for v in model.trainable_variables]
    best = {"valid_ppl": float("inf"), "epoch": 0}
    best_host = None
    words_trained, train_seconds = 0, 0.0
    stop = False
    for epoch in range(1, cfg["epochs"] + 1):
        lr = cfg["lr"] * cfg["decay"] ** max(epoch - cfg["decay_after"], 0)
        ntv = zero_states(ntv)
        t0 = time.time()
        total, count, norm_sum = 0.0, 0, 0.0
        for i in range(len(tx)):
            tv, ntv, nll, norm = train_chunk(tv, ntv, jnp.float32(lr), tx[i], ty[i])
            total += float(nll)
            norm_sum += float(norm)
            count += ty[i].size
            if time.time() - t_start > args.budget_s:
                stop = True
                break
            if epoch == 1 and i in (0, 4, 19):
                log({"event": "progress", "chunk": i + 1, "train_ppl": math.exp(total / count),
                     "s": round(time.time() - t0, 1)})  # fmt: skip
        seconds = time.time() - t0
        if stop and count < ty[0].size * len(tx):
            log({"event": "budget", "epoch": epoch, "done_fraction": count / ty.size,
                 "train_ppl": math.exp(total / count), "s": round(seconds, 1)})  # fmt: skip
            break
        words_trained += count
        train_seconds += seconds
        t1 = time.time()
        ppl = perplexity(tv, ntv, vx, vy)
        entry = {"event": "epoch", "epoch": epoch, "lr": lr, "train_ppl": math.exp(total / count),
                 "valid_ppl": ppl, "mean_grad_norm": norm_sum / len(tx),
                 "train_s": round(seconds, 1), "words_per_s": round(count / seconds),
                 "eval_s": round(time.time() - t1, 1)}  # fmt: skip
        if ppl < best["valid_ppl"]:
            best = {"valid_ppl": ppl, "epoch": epoch}
            best_host = [np.asarray(w) for w in tv]
            if args.save_weights:
                record = {"tag": tag, "seed": args.seed, "epoch": epoch, "valid_ppl": ppl}
                saved = save(args.out, tag, names, best_host, args.save_dtype,
                             args.shared_best, record)  # fmt: skip
                if args.save_dtype != "float32":
                    saved = [jnp.asarray(w.astype("float32")) for w in saved]
                    entry["valid_ppl_saved_weights"] = perplexity(saved, ntv, vx, vy)
        log(entry)
        if time.time() - t_start > args.budget_s:
            break
    summary = {"event": "end", "config": args.config, "tag": tag, "best_epoch": best["epoch"],
               "best_valid_ppl": best["valid_ppl"], "epochs_done": epoch,
               "train_seconds": round(train_seconds, 1), "words_trained": words_trained,
               "words_per_s": round(words_trained / max(train_seconds, 1e-9))}  # fmt: skip
    if args.test and best_host is not None:
        ex, ey = windows(data["test"].astype("int32"), batch, bptt, 1)
        summary["test_ppl_of_best_valid"] = perplexity(
            [jnp.asarray(w) for w in best_host], ntv, ex[:, 0], ey[:, 0]
        )
    log(summary)
    return 0


def save(out, tag, names, weights, dtype, shared=None, record=None):
    """Best weights, by variable path, written atomically; returns what was saved.

    With ``dtype`` other than float32 only the matrices over 1M entries (the
    embedding and output matrices, ~90% of the bytes) are stored in it.
    """
    arrays = {}
    for name, w in zip(names, weights):
        keep32 = dtype == "float32" or w.size < 1_000_000
        arrays[name.replace("/", "|")] = w if keep32 else w.astype(dtype)
    if shared is None:
        _write(os.path.join(out, f"{tag}_best_weights.npz"), arrays)
        return list(arrays.values())
    import fcntl

    with open(os.path.join(out, f"{shared}.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        info_path = os.path.join(out, f"{shared}.json")
        best = {"valid_ppl": float("inf")}
        if os.path.isfile(info_path):
            with open(info_path) as f:
                best = json.load(f)
        if record["valid_ppl"] < best["valid_ppl"]:
            _write(os.path.join(out, f"{shared}_weights.npz"), arrays)
            with open(info_path + ".tmp", "w") as f:
                json.dump(record, f)
            os.replace(info_path + ".tmp", info_path)
    return list(arrays.values())


def _write(path, arrays):
    tmp = path + ".tmp.npz"
    np.savez(tmp, **arrays)
    os.replace(tmp, path)


if __name__ == "__main__":
    sys.exit(main())
