"""Greedy and beam decoding of the shipped translator with and without XLA, on CPU.

Times the id-level search (``Translator.translate_ids``: encoder, decoder and
the ``while_loop`` search) traced as one ``tf.function`` with
``jit_compile=False`` and ``jit_compile=True``; tokenisation and
detokenisation (string ops, which XLA does not compile) run outside the timed
call. Two settings:

- per sentence: each of the first ``--sentences`` test sentences alone (batch 1);
- batched: the first ``--batched`` sentences in batches of ``--batch``.

Sources are padded to a multiple of ``--bucket`` pieces (padding changes no
output), so XLA compiles once per bucket width rather than once per length;
every (function, shape) pair is called once before timing, and the compile
time of those first calls is reported separately. The variants are
interleaved (same input, one after the other) so they see the same machine
load, which is recorded (``os.getloadavg``) before and after.

    python benchmarks/translation_xla.py --sentences 30 --batched 256 --repeats 3
"""

import argparse
import json
import os
import statistics
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SAMPLE = os.path.join(HERE, "..", "tests", "fixtures", "multi30k", "test2016_sample.en")


def _pad(ids, bucket):
    import numpy as np

    width = -(-ids.shape[1] // bucket) * bucket
    return np.pad(ids, ((0, 0), (0, width - ids.shape[1])))


def main(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument("--sentences", type=int, default=30, help="per-sentence runs")
    p.add_argument("--batched", type=int, default=256, help="sentences decoded batched")
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--beam", type=int, default=5)
    p.add_argument("--bucket", type=int, default=8)
    p.add_argument("--repeats", type=int, default=3, help="timed passes over the batches")
    p.add_argument("--input", default=SAMPLE, help="one English sentence per line")
    p.add_argument("--out", help="write the timings as JSON")
    args = p.parse_args(argv)

    import numpy as np
    import tensorflow as tf

    from keras_seqmodels import zoo

    translator = zoo.load("multi30k-en-de").model
    with open(args.input, encoding="utf-8") as f:
        lines = [s for s in f.read().splitlines() if s.strip()]
    # The committed sample has 50 sentences; repeat it for larger batched runs.
    pool = (lines * (-(-max(args.batched, args.sentences) // len(lines))))

    def make(beam, xla):
        def search(ids):
            return translator.translate_ids(ids, beam_size=beam)

        return tf.function(search, jit_compile=xla)

    variants = {}
    for beam in (1, args.beam):
        for xla in (False, True):
            name = f"{'greedy' if beam == 1 else f'beam{beam}'}{'+xla' if xla else ''}"
            variants[name] = make(beam, xla)

    def encode(chunk):
        return _pad(translator.encode_source(tf.constant(chunk)).numpy(), args.bucket)

    settings = {
        "per_sentence": [encode([s]) for s in pool[: args.sentences]],
        "batched": [encode(pool[i : i + args.batch])
                    for i in range(0, args.batched, args.batch)],
    }
    load_before = os.getloadavg()
    compile_s = {name: 0.0 for name in variants}
    outputs = {}
    for inputs in settings.values():
        seen = set()
        for ids in inputs:
            if ids.shape in seen:
                continue
            seen.add(ids.shape)
            for name, fn in variants.items():
                start = time.perf_counter()
                try:
                    fn(tf.constant(ids)).numpy()
                except Exception as e:  # report, don't hide, a compile failure
                    print(f"{name} failed on shape {ids.shape}: {type(e).__name__}: "
                          f"{str(e)[:2000]}")
                    raise
                compile_s[name] += time.perf_counter() - start
    results = {}
    for setting, inputs in settings.items():
        times = {name: [] for name in variants}
        for _ in range(args.repeats):
            for ids in inputs:
                x = tf.constant(ids)
                for name, fn in variants.items():
                    start = time.perf_counter()
                    out = fn(x).numpy()
                    times[name].append(1000 * (time.perf_counter() - start) / ids.shape[0])
                    outputs.setdefault((setting, name), []).append(out)
        results[setting] = {
            name: {"median_ms_per_sentence": statistics.median(t),
                   "mean_ms_per_sentence": statistics.mean(t), "calls": len(t)}
            for name, t in times.items()
        }
    load_after = os.getloadavg()
    # XLA must not change the translations.
    same = {}
    for setting in settings:
        for name in variants:
            if name.endswith("+xla"):
                a = outputs[(setting, name)]
                b = outputs[(setting, name[: -len("+xla")])]
                same[f"{setting}/{name}"] = all(
                    x.shape == y.shape and np.array_equal(x, y) for x, y in zip(a, b)
                )
    print(f"CPUs: {os.cpu_count()}, TF {tf.__version__}, load average before "
          f"{load_before[0]:.1f}, after {load_after[0]:.1f}")
    print("first-call (trace + compile) seconds, all shapes:",
          {k: round(v, 1) for k, v in compile_s.items()})
    for setting, res in results.items():
        print(f"{setting}:")
        for name, r in res.items():
            print(f"  {name:>12}: median {r['median_ms_per_sentence']:8.1f} ms/sentence, "
                  f"mean {r['mean_ms_per_sentence']:8.1f} ({r['calls']} calls)")
        med = {name: r["median_ms_per_sentence"] for name, r in res.items()}
        g, b = med["greedy"], med[f"beam{args.beam}"]
        gx, bx = med["greedy+xla"], med[f"beam{args.beam}+xla"]
        print(f"  beam/greedy (median): {b / g:.2f}x, with XLA {bx / gx:.2f}x; "
              f"XLA speed-up greedy {g / gx:.2f}x, beam {b / bx:.2f}x")
    print("XLA output identical:", same)
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"args": vars(args), "load_before": load_before,
                       "load_after": load_after, "compile_s": compile_s,
                       "results": results, "identical": same}, f, indent=1)


if __name__ == "__main__":
    main()
