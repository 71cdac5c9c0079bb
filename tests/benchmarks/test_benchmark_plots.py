"""BENCHMARKS.md's summary table and plot are what tools/benchmark_plots.py makes
from the results files."""

from scripts import load_script

plots = load_script("tools", "benchmark_plots")


def test_summary_table_and_plot_match_the_results_files():
    assert plots.main(["--check"]) == 0


def test_summary_rows_are_the_fastest_of_each_peer():
    rows = {(where, cell, what): rest for where, cell, what, *rest in plots.summary_rows()}
    ours, keras, torch = rows[("CPU, 2 cores", "LSTM", "training")]
    results = plots._load(plots.CPU_FILE)
    keras_lstm = [
        r["train_tok_s"] for r in results
        if r["cell"] == "LSTM" and r["model"] == "keras" and r["config"] == plots.CONFIG
    ]  # fmt: skip
    assert keras == max(keras_lstm) and len(keras_lstm) == 2  # TensorFlow and JAX
    assert ours > keras and torch is not None
    assert rows[("GPU, H100", "LSTM", "inference")][2] is None  # torch: host copy included
    svg = plots.svg(plots.summary_rows())
    assert svg.startswith("<svg") and svg.count("<rect") >= len(rows)
