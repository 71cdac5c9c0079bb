"""Train many MemN2N seeds at once on JAX (vectorised over seeds), for a GPU.

    KERAS_BACKEND=jax python zoo/babi-memn2n/seeds_jax.py --data babi.npz --out OUT \
        --seeds 32 --budget-s 480

The paper's joint "PE LS RN" model and schedule (Sukhbaatar et al. 2015 and
its reference code): d = 50, 3 hops, batch 32, plain SGD on the summed loss
with the gradient clipped to global norm 40, linear start (hop softmax
removed, learning rate ``--ls-lr``, until the validation loss has not
improved for ``--ls-patience`` epochs or ``--ls-max-epochs`` are done), then
the softmax re-inserted and ``--epochs`` more epochs at ``--lr`` halved every
``--anneal-every``; random noise: 10% empty memories inserted into every
training story, re-drawn at every step. Every seed has its own
initialisation, data order and noise, and its own linear-start switch.

The model is the package's ``MemoryNetwork`` layer, run through
``stateless_call`` under ``jax.vmap`` over the seeds; one epoch is one
``lax.scan`` over fixed-shape batches (all 50 memory slots), so XLA compiles
once. Only the train/valid arrays are read (``babi.npz``, made by
``recipe.py export-arrays``); the test split is never seen here. The best
weights of every seed (highest validation accuracy with the softmax in) are
rewritten to ``OUT/seeds_best.npz`` after every epoch, so a kill loses
nothing; ``recipe.py assemble`` picks the seed on the validation split.
"""

import argparse
import json
import os
import sys
import time

import numpy as np

os.environ.setdefault("KERAS_BACKEND", "jax")
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(os.path.dirname(HERE)))

NIL = 1


def insert_noise(stories, key, rate):
    """``babi.insert_empty_memories`` in JAX, for one batch ``(b, slots, words)``."""
    import jax

    return insert_empty(stories, jax.random.uniform(key, stories.shape[:2]) < rate)


def insert_empty(stories, draws):
    """An empty memory before each statement where ``draws`` ``(b, slots)`` is True.

    The same result as ``babi.insert_empty_memories`` given the same draws.
    """
    import jax.numpy as jnp

    b, size, _ = stories.shape
    used = stories[:, :, 0] != 0
    extra = draws & used
    new_slot = jnp.arange(size)[None, :] + jnp.cumsum(extra, axis=1)
    keep = used & (new_slot < size)
    target = jnp.where(keep, new_slot, size)  # slot `size` is dropped below
    rows = jnp.broadcast_to(jnp.arange(b)[:, None], (b, size))
    out = jnp.zeros((b, size + 1, stories.shape[2]), stories.dtype)
    out = out.at[rows, target].set(stories)[:, :size]
    filled = jnp.zeros((b, size + 1), bool).at[rows, target].set(True)[:, :size]
    last = jnp.max(jnp.where(used, new_slot, -1), axis=1)
    empty = (~filled) & (jnp.arange(size)[None, :] <= last[:, None])
    return out.at[:, :, 0].set(jnp.where(empty, NIL, out[:, :, 0]))


def main(argv=None):
    parser = argparse.ArgumentParser(prog="seeds_jax")
    parser.add_argument("--data", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--seeds", type=int, default=32)
    parser.add_argument("--seed0", type=int, default=0)
    parser.add_argument("--budget-s", type=float, default=480.0)
    parser.add_argument("--ls-lr", type=float, default=0.005)
    parser.add_argument("--lr", type=float, default=0.005)
    parser.add_argument("--ls-patience", type=int, default=3)
    parser.add_argument("--ls-max-epochs", type=int, default=30)
    parser.add_argument("--epochs", type=int, default=60, help="epochs after linear start")
    parser.add_argument("--anneal-every", type=int, default=15)
    parser.add_argument("--noise", type=float, default=0.1)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--clip", type=float, default=40.0)
    parser.add_argument("--embed-dim", type=int, default=50)
    parser.add_argument("--init", default=None, help="seeds_best.npz to continue (softmax in)")
    parser.add_argument("--smoke", action="store_true", help="tiny data, for a local check")
    args = parser.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    start = time.time()

    import jax
    import jax.numpy as jnp

    from keras_seqmodels.memory import MemoryNetwork

    data = np.load(args.data)
    vocab_size = int(data["vocab_size"])
    xs, xq, xa = (data[f"train_{k}"].astype("int32") for k in ("stories", "queries", "answers"))
    vs, vq, va = (data[f"valid_{k}"].astype("int32") for k in ("stories", "queries", "answers"))
    vt = data["valid_tasks"].astype("int32")
    if args.smoke:
        xs, xq, xa = xs[::60], xq[::60], xa[::60]
        vs, vq, va, vt = vs[::4], vq[::4], va[::4], vt[::4]
    n, size, words = xs.shape
    steps = n // args.batch_size
    # Chunks of 100 questions: bounded memory for the one-hot encodings of all seeds.
    eval_chunks = len(va) // 100 if len(va) % 100 == 0 else 1
    print(f"train {n} valid {len(va)} vocab {vocab_size} seeds {args.seeds} steps {steps}")

    layer = MemoryNetwork(
        vocab_size, args.embed_dim, size, hops=3, linear_start=True, name="memn2n"
    )
    layer.build([(None, size, words), (None, xq.shape[1])])
    hops = layer.hops
    d = args.embed_dim

    seeds = args.seed0 + np.arange(args.seeds)
    rng = [np.random.default_rng(int(s)) for s in seeds]
    emb = np.stack([0.1 * r.standard_normal((hops + 1, vocab_size, d)) for r in rng])
    tmp = np.stack([0.1 * r.standard_normal((hops + 1, size, d)) for r in rng])
    gate = np.zeros(args.seeds, "float32")
    if args.init:
        init = np.load(args.init)
        emb, tmp = init["embeddings"][: args.seeds], init["temporal_embeddings"][: args.seeds]
        gate[:] = 1.0
    params = (jnp.asarray(emb, "float32"), jnp.asarray(tmp, "float32"))

    xs_d, xq_d, xa_d = jnp.asarray(xs), jnp.asarray(xq), jnp.asarray(xa)
    vs_d, vq_d, va_d = (jnp.asarray(a.reshape(eval_chunks, -1, *a.shape[1:])) for a in (vs, vq, va))

    def logits_fn(p, g, s, q):
        out, _ = layer.stateless_call(list(p), [g], [s, q])
        return out

    def loss_fn(p, g, s, q, a):
        logits = logits_fn(p, g, s, q)
        logp = jax.nn.log_softmax(logits, axis=-1)
        return -jnp.sum(jnp.take_along_axis(logp, a[:, None], axis=-1))

    def one_epoch(p, g, lr, key):
        k_perm, k_noise = jax.random.split(key)
        perm = jax.random.permutation(k_perm, n)[: steps * args.batch_size]
        perm = perm.reshape(steps, args.batch_size)
        noise_keys = jax.random.split(k_noise, steps)

        def step(p, inputs):
            idx, nk = inputs
            s = insert_noise(xs_d[idx], nk, args.noise) if args.noise > 0 else xs_d[idx]
            loss, grads = jax.value_and_grad(loss_fn)(p, g, s, xq_d[idx], xa_d[idx])
            norm = jnp.sqrt(sum(jnp.sum(x * x) for x in grads))
            scale = lr * jnp.minimum(1.0, args.clip / jnp.maximum(norm, 1e-12))
            return tuple(w - scale * x for w, x in zip(p, grads)), loss

        p, losses = jax.lax.scan(step, p, (perm, noise_keys))
        return p, jnp.sum(losses)

    def evaluate(p, g):
        def chunk(inputs):
            s, q, a = inputs
            logits = logits_fn(p, g, s, q)
            logp = jax.nn.log_softmax(logits, axis=-1)
            loss = -jnp.sum(jnp.take_along_axis(logp, a[:, None], axis=-1))
            return loss, jnp.argmax(logits, axis=-1)

        losses, preds = jax.lax.map(chunk, (vs_d, vq_d, va_d))
        return jnp.sum(losses), preds.reshape(-1)

    epoch_fn = jax.jit(jax.vmap(one_epoch))
    eval_fn = jax.jit(jax.vmap(evaluate))

    S = args.seeds
    keys = jax.random.split(jax.random.PRNGKey(int(seeds[0]) + 12345), S)
    ls_best = np.full(S, np.inf)
    ls_wait = np.zeros(S, int)
    ls_epochs = np.zeros(S, int)
    sm_epochs = np.zeros(S, int)  # epochs done with the softmax in
    best_acc = np.full(S, -1.0)
    best_loss = np.full(S, np.inf)
    best_task_err = np.full((S, 20), np.nan)
    best_epoch = np.zeros(S, int)
    best_emb, best_tmp = emb.astype("float32").copy(), tmp.astype("float32").copy()
    history = []
    epoch = 0
    epoch_time = None
    while True:
        done = sm_epochs >= args.epochs
        if done.all():
            break
        elapsed = time.time() - start
        if epoch_time is not None and elapsed + 1.2 * epoch_time > args.budget_s:
            print(f"wall-clock budget reached after {epoch} epochs ({elapsed:.0f} s)")
            break
        t0 = time.time()
        lr = np.where(
            gate > 0, args.lr * 0.5 ** (sm_epochs // args.anneal_every), args.ls_lr
        ).astype("float32")
        lr[done] = 0.0
        keys, sub = jnp.split(jax.vmap(jax.random.split)(keys), 2, axis=1)
        keys, sub = keys[:, 0], sub[:, 0]
        params, train_loss = epoch_fn(params, jnp.asarray(gate), jnp.asarray(lr), sub)
        val_loss, preds = eval_fn(params, jnp.asarray(gate))
        val_loss = np.asarray(val_loss) / len(va)
        preds = np.asarray(preds)
        train_loss = np.asarray(train_loss) / (steps * args.batch_size)
        correct = preds == va[None, :]
        acc = correct.mean(axis=1)
        task_err = np.stack(
            [100.0 * (1.0 - correct[:, vt == t].mean(axis=1)) for t in range(1, 21)], axis=1
        )
        epoch += 1
        emb_now = tmp_now = None
        for i in range(S):
            if done[i]:
                continue
            if gate[i] == 0:
                ls_epochs[i] += 1
                ls_wait[i] = 0 if val_loss[i] < ls_best[i] else ls_wait[i] + 1
                ls_best[i] = min(ls_best[i], val_loss[i])
                if ls_wait[i] >= args.ls_patience or ls_epochs[i] >= args.ls_max_epochs:
                    gate[i] = 1.0
                continue
            sm_epochs[i] += 1
            if acc[i] > best_acc[i] or (acc[i] == best_acc[i] and val_loss[i] < best_loss[i]):
                if emb_now is None:
                    emb_now, tmp_now = (np.asarray(x) for x in params)
                best_acc[i], best_loss[i], best_epoch[i] = acc[i], val_loss[i], epoch
                best_task_err[i] = task_err[i]
                best_emb[i], best_tmp[i] = emb_now[i], tmp_now[i]
        epoch_time = time.time() - t0
        history.append(
            {
                "epoch": epoch,
                "time_s": round(time.time() - start, 1),
                "gate": gate.tolist(),
                "lr": lr.tolist(),
                "train_loss": np.round(train_loss, 4).tolist(),
                "val_loss": np.round(val_loss, 4).tolist(),
                "val_acc": np.round(acc, 4).tolist(),
            }
        )
        if emb_now is not None or epoch == 1:
            tmp_path = os.path.join(args.out, "seeds_best.tmp.npz")
            np.savez(
                tmp_path,
                embeddings=best_emb,
                temporal_embeddings=best_tmp,
                best_val_acc=best_acc,
                best_val_loss=best_loss,
                best_val_task_error=best_task_err,
                best_epoch=best_epoch,
                seeds=seeds,
            )
            os.replace(tmp_path, os.path.join(args.out, "seeds_best.npz"))
        summary = {
            "args": vars(args),
            "epochs_run": epoch,
            "ls_epochs": ls_epochs.tolist(),
            "softmax_epochs": sm_epochs.tolist(),
            "best_val_acc": best_acc.tolist(),
            "best_val_mean_task_error": best_task_err.mean(axis=1).tolist(),
            "best_epoch": best_epoch.tolist(),
            "elapsed_s": round(time.time() - start, 1),
            "device": str(jax.devices()[0]),
            "history": history,
        }
        with open(os.path.join(args.out, "summary.tmp.json"), "w") as f:
            json.dump(summary, f)
        os.replace(
            os.path.join(args.out, "summary.tmp.json"), os.path.join(args.out, "summary.json")
        )
        top = best_task_err.mean(axis=1)
        top = np.nanmin(top) if np.isfinite(top).any() else float("nan")
        print(
            f"epoch {epoch} {epoch_time:.1f}s softmax {int(gate.sum())}/{S} "
            f"val acc mean {acc.mean():.4f} max {acc.max():.4f} "
            f"best-seed val task error {top:.2f}",
            flush=True,
        )
    print(f"finished in {time.time() - start:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
