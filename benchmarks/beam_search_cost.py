"""Beam-5 vs greedy search cost of the shipped translator, wall and CPU time.

Runs the id-level search (``decoding.greedy_decode`` / ``decoding.beam_search``
over the shipped ``multi30k-en-de`` encoder-decoder) as traced
``tf.function``s, interleaved, per sentence (``--batch 1``) or on one batch of
64 test sentences (``--batch 64``), and prints median wall and process CPU
milliseconds per call (CPU time is the steadier figure on a loaded machine).
``--baseline FILE`` also times the ``beam_search`` of another version of
``decoding.py`` (e.g. an older commit's) on the same inputs and checks that both
return the same hypotheses:

    git show fe4573a~1:keras_seqmodels/seq2seq/decoding.py > /tmp/decoding_before.py
    python benchmarks/beam_search_cost.py --batch 64 --repeats 8 \\
        --baseline /tmp/decoding_before.py
"""

import argparse
import importlib.util
import os
import statistics
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SAMPLE = os.path.join(HERE, "..", "tests", "fixtures", "multi30k", "test2016_sample.en")


def main(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument("--batch", type=int, default=64, help="1 = each sentence alone")
    p.add_argument("--sentences", type=int, default=20, help="with --batch 1")
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--beam", type=int, default=5)
    p.add_argument("--baseline", help="another decoding.py whose beam_search to time too")
    p.add_argument("--input", default=SAMPLE)
    args = p.parse_args(argv)

    import numpy as np
    import tensorflow as tf

    from keras_seqmodels import zoo
    from keras_seqmodels.seq2seq import decoding

    translator = zoo.load("multi30k-en-de").model
    core = translator.model
    with open(args.input, encoding="utf-8") as f:
        lines = [s for s in f.read().splitlines() if s.strip()]
    if args.batch == 1:
        inputs = [translator.encode_source(tf.constant([s])) for s in lines[: args.sentences]]
    else:
        pool = lines * (-(-args.batch // len(lines)))
        inputs = [translator.encode_source(tf.constant(pool[: args.batch]))]
    searches = {"greedy": None, "beam": decoding.beam_search}
    if args.baseline:
        spec = importlib.util.spec_from_file_location("baseline_decoding", args.baseline)
        baseline = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(baseline)
        searches["beam_baseline"] = baseline.beam_search

    def make(search):
        def run(ids):
            _, prepared, state = core._prepare(ids)
            n, max_length = ids.shape[0], 2 * tf.shape(ids)[1] + 10
            if search is None:
                return decoding.greedy_decode(core._step, state, prepared, n, core.start_id,
                                              core.end_id, max_length)[0]
            return search(core._step, state, prepared, n, core.start_id, core.end_id,
                          max_length, beam_size=args.beam, alpha=translator.alpha)[0]

        return tf.function(run)

    fns = {name: make(search) for name, search in searches.items()}
    for ids in inputs:  # trace, warm up, and compare the hypotheses
        out = {name: fn(ids).numpy() for name, fn in fns.items()}
        if args.baseline and not np.array_equal(out["beam"], out["beam_baseline"]):
            raise SystemExit("beam_search and the baseline's differ on the same input")
    wall = {name: [] for name in fns}
    cpu = {name: [] for name in fns}
    load_before = os.getloadavg()[0]
    for _ in range(args.repeats):
        for ids in inputs:
            for name, fn in fns.items():
                w, c = time.perf_counter(), time.process_time()
                fn(ids).numpy()
                wall[name].append(1000 * (time.perf_counter() - w))
                cpu[name].append(1000 * (time.process_time() - c))
    print(f"batch {args.batch}, {len(inputs)} input(s), {args.repeats} repeats, CPUs "
          f"{os.cpu_count()}, load average {load_before:.1f} -> {os.getloadavg()[0]:.1f}")
    for name in fns:
        print(f"{name:>14}: median wall {statistics.median(wall[name]):9.1f} ms, "
              f"CPU {statistics.median(cpu[name]):9.1f} ms per call")
    for name in fns:
        if name != "greedy":
            print(f"{name}/greedy: wall "
                  f"{statistics.median(wall[name]) / statistics.median(wall['greedy']):.2f}x, "
                  f"CPU {statistics.median(cpu[name]) / statistics.median(cpu['greedy']):.2f}x")


if __name__ == "__main__":
    main()
