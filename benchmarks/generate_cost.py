"""``seqmodels generate`` cost: wall seconds of ``sample`` on the shipped ptb-lstm-small.

Times ``keras_seqmodels.cli.generate_commands.sample`` (the prompt once, then
one word per step with the LSTM states carried) and, with ``--baseline FILE``,
the ``sample`` of another version of ``generate_commands.py`` (e.g. the one
that re-ran the whole text at every step), interleaved on the same prompt,
length, temperature and seed, and checks that both give the same words. Each
call is timed whole (building and compiling the decoder included), as the CLI
pays it once per command:

    git show 74b70c1:keras_seqmodels/cli/generate_commands.py > /tmp/generate_before.py
    python benchmarks/generate_cost.py --baseline /tmp/generate_before.py
    KERAS_BACKEND=jax python benchmarks/generate_cost.py --baseline /tmp/generate_before.py
"""

import argparse
import importlib.util
import json
import os
import statistics
import time


def main(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument("--prompt", default="the company")
    p.add_argument("--length", type=int, default=30)
    p.add_argument("--temperature", type=float, default=0.8)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--baseline", help="another generate_commands.py whose sample to time too")
    p.add_argument("--out", help="write the timings here (json)")
    args = p.parse_args(argv)

    import keras

    from keras_seqmodels import zoo
    from keras_seqmodels.cli import generate_commands

    model = zoo.load("ptb-lstm-small").model
    with open(zoo.asset_path("ptb-lstm-small", "vocabulary"), encoding="utf-8") as f:
        vocabulary = [line.rstrip("\n") for line in f if line.rstrip("\n")]
    samplers = {"incremental": generate_commands.sample}
    if args.baseline:
        spec = importlib.util.spec_from_file_location("generate_baseline", args.baseline)
        baseline = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(baseline)
        samplers["baseline"] = baseline.sample
    times = {name: [] for name in samplers}
    words = {}
    for _ in range(args.repeats):
        for name, sample in samplers.items():
            start = time.perf_counter()
            words[name] = sample(model, vocabulary, args.prompt, args.length,
                                 args.temperature, args.seed)  # fmt: skip
            times[name].append(time.perf_counter() - start)
    result = {
        "backend": keras.backend.backend(),
        "prompt": args.prompt,
        "length": args.length,
        "load_average": os.getloadavg(),
        "seconds": times,
        "median_seconds": {k: statistics.median(v) for k, v in times.items()},
        "same_words": len({" ".join(w) for w in words.values()}) == 1,
        "words": words["incremental"],
    }
    if args.baseline:
        result["speedup"] = (
            result["median_seconds"]["baseline"] / result["median_seconds"]["incremental"]
        )
    print(json.dumps(result, indent=1))
    if args.out:
        with open(args.out, "w") as f:
            json.dump(result, f, indent=1)
    return 0 if result["same_words"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
