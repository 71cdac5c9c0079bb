"""Beam-5 vs greedy decoding cost per sentence on CPU (the shipped translator).

Each sentence is translated alone (batch 1), greedy and beam 5 interleaved so
both see the same machine load; prints the mean and median milliseconds per
sentence and the beam/greedy ratio.

    python benchmarks/translation_decoding.py --sentences 50
"""

import argparse
import os
import statistics
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SAMPLE = os.path.join(HERE, "..", "tests", "fixtures", "multi30k", "test2016_sample.en")


def main(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument("--sentences", type=int, default=50)
    p.add_argument("--beam", type=int, default=5)
    p.add_argument("--input", default=SAMPLE, help="one English sentence per line")
    args = p.parse_args(argv)

    import tensorflow as tf

    from keras_seqmodels import zoo

    model = zoo.load("multi30k-en-de").model
    spec = [tf.TensorSpec([None], tf.string)]
    greedy = tf.function(lambda s: model(s, beam_size=1), input_signature=spec)
    beam = tf.function(lambda s: model(s, beam_size=args.beam), input_signature=spec)
    with open(args.input, encoding="utf-8") as f:
        lines = f.read().splitlines()[: args.sentences]
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
