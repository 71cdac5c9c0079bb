"""Translation latency per sentence on CPU (the shipped translator).

Default mode: beam 5 vs greedy decoding cost. Each sentence is translated
alone (batch 1) through one ``tf.function`` per search, traced beforehand;
greedy and beam 5 interleaved so both see the same machine load; prints the
mean and median milliseconds per sentence and the beam/greedy ratio.

    python benchmarks/translation_decoding.py --sentences 50

``--predict``: what a user of the zoo pays. ``task.predict(sentence,
beam_size=...)`` on a freshly loaded task per search (greedy and beam 5):
the first call (tracing included) and then the steady state, each of
``--sentences`` sentences (of varying lengths) translated alone, ``--repeats``
passes. With ``--baseline`` the same calls also run the way ``predict`` ran
before its search was compiled once per beam size (a new ``tf.function``
around ``model(strings, beam_size=...)`` at every call), on its own fresh
task, interleaved with the current path so both see the same load; the
translations of both are compared. Prints the first-call seconds and the
median, mean, min and max milliseconds per sentence of the later calls, the
ratios, and the load average before and after.

    python benchmarks/translation_decoding.py --predict --baseline --sentences 10 --repeats 2

``--out FILE.json`` (with ``--predict``): also write those figures with the command, date,
machine and the 1-minute load averages.
"""

import argparse
import datetime
import json
import os
import statistics
import sys
import time

from machine import machine  # noqa: E402 (beside this script)

HERE = os.path.dirname(os.path.abspath(__file__))
SAMPLE = os.path.join(HERE, "..", "tests", "fixtures", "multi30k", "test2016_sample.en")


def _load_average():
    try:
        return f"{os.getloadavg()[0]:.1f}"
    except OSError:
        return "n/a"



def _timed(fn, *args):
    start = time.perf_counter()
    out = fn(*args)
    return out, time.perf_counter() - start


def _per_call_function(task, sentence, beam_size):
    """``predict`` as it was: a new ``tf.function`` traced at every call."""
    import tensorflow as tf

    model = task.model
    fn = tf.function(lambda s: model(s, beam_size=beam_size), reduce_retracing=True)
    return fn(tf.constant([sentence])).numpy()[0].decode("utf-8")


def predict_latency(lines, beam, repeats, baseline):
    """First-call and later-call seconds per search and variant, and whether
    the variants' translations agree."""
    from keras_seqmodels import zoo

    # The current path goes first, so that what the process pays once (the
    # first trace of any tf.function) falls on it, not on the baseline.
    variants = {"now": lambda task, line, size: task.predict(line, beam_size=size)}
    if baseline:
        variants["before"] = _per_call_function
    runs = [(f"greedy {v}" if size == 1 else f"beam{size} {v}", v, size)
            for size in (1, beam) for v in variants]
    tasks = {name: zoo.load("multi30k-en-de") for name, _, _ in runs}
    first, later, outputs = {}, {name: [] for name, _, _ in runs}, {}
    for name, variant, size in runs:
        out, first[name] = _timed(variants[variant], tasks[name], lines[0], size)
        outputs[name] = [out]
    for _ in range(repeats):
        for line in lines:
            for name, variant, size in runs:
                out, seconds = _timed(variants[variant], tasks[name], line, size)
                later[name].append(seconds)
                outputs[name].append(out)
    same = {size: len({tuple(outputs[n]) for n, _, s in runs if s == size}) == 1
            for size in (1, beam)}
    return first, later, same


def main(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument("--sentences", type=int, default=50)
    p.add_argument("--beam", type=int, default=5)
    p.add_argument("--input", default=SAMPLE, help="one English sentence per line")
    p.add_argument("--predict", action="store_true",
                   help="time task.predict: first call and steady state")
    p.add_argument("--repeats", type=int, default=1,
                   help="passes over the sentences (--predict)")
    p.add_argument("--baseline", action="store_true",
                   help="--predict: also time the per-call tf.function of before")
    p.add_argument("--out", help="--predict: also write the figures to this JSON file")
    args = p.parse_args(argv)
    if args.out and not args.predict:
        p.error("--out needs --predict")

    with open(args.input, encoding="utf-8") as f:
        lines = f.read().splitlines()[: args.sentences]
    if args.predict:
        load = _load_average()
        date = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
        first, later, same = predict_latency(lines, args.beam, args.repeats, args.baseline)
        print(f"task.predict, {len(lines)} sentences x {args.repeats} passes, "
              f"CPUs: {os.cpu_count()}, load average (1 min) {load} -> {_load_average()}")
        medians = {}
        for name in first:
            t = [1000 * s for s in later[name]]
            medians[name] = statistics.median(t)
            print(f"{name:>13}: first call {first[name]:6.3f} s; later calls median "
                  f"{medians[name]:8.1f} ms, mean {statistics.mean(t):8.1f} ms, "
                  f"min {min(t):8.1f}, max {max(t):8.1f} ms per sentence")
        if args.baseline:
            for search in ("greedy", f"beam{args.beam}"):
                now, before = f"{search} now", f"{search} before"
                print(f"{search}: later calls {medians[before] / medians[now]:.1f}x faster "
                      f"(median), first call {first[before] / first[now]:.2f}x")
            print(f"same translations: {same}")
        if args.out:
            record = {
                "sentences": len(lines),
                "repeats": args.repeats,
                "beam": args.beam,
                "first_call_s": first,
                "later_calls_ms": {n: [1000 * s for s in t] for n, t in later.items()},
                "later_median_ms": medians,
                "same_translations": {str(k): v for k, v in same.items()},
                "command": "python benchmarks/translation_decoding.py " + " ".join(sys.argv[1:]),
                "date": date,
                "machine": machine(),
                "load_average_1min_start_end": [float(load), float(_load_average())],
            }
            with open(args.out, "w", encoding="utf-8") as f:
                json.dump(record, f, indent=2)
                f.write("\n")
        return

    import tensorflow as tf

    from keras_seqmodels import zoo

    model = zoo.load("multi30k-en-de").model
    spec = [tf.TensorSpec([None], tf.string)]
    greedy = tf.function(lambda s: model(s, beam_size=1), input_signature=spec)
    beam = tf.function(lambda s: model(s, beam_size=args.beam), input_signature=spec)
    for fn in (greedy, beam):  # trace and warm up
        fn(tf.constant(lines[:1]))
    times = {"greedy": [], f"beam{args.beam}": []}
    for line in lines:
        x = tf.constant([line])
        for name, fn in ((f"beam{args.beam}", beam), ("greedy", greedy)):
            start = time.perf_counter()
            fn(x).numpy()
            times[name].append(1000 * (time.perf_counter() - start))
    g = times["greedy"]
    b = times[f"beam{args.beam}"]
    print(f"sentences: {len(lines)}, threads: TF default, CPUs: {os.cpu_count()}")
    for name, t in times.items():
        print(f"{name:>7}: mean {statistics.mean(t):7.1f} ms, median "
              f"{statistics.median(t):7.1f} ms per sentence")
    print(f"ratio beam{args.beam}/greedy: mean {statistics.mean(b) / statistics.mean(g):.2f}x, "
          f"median {statistics.median(b) / statistics.median(g):.2f}x")


if __name__ == "__main__":
    main()
