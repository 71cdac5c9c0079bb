"""BENCHMARKS.md's (and docs/deploy.md's) tables are the results files' numbers, and
each has its plot.

tools/benchmark_plots.py reads every table from the files in benchmarks/results/
that its section cites; here each table is made again from those files and must be
the page's table, character for character, and every number its plot draws must be
the number the table shows in that row. No benchmark runs: only the files are read.
"""

import os

import pytest
from scripts import ROOT, load_script

plots = load_script("tools", "benchmark_plots")
NAMES = list(plots.TABLES)


@pytest.mark.parametrize("name", NAMES)
def test_table_is_made_from_the_results_files(name):
    assert plots.documented_table(name) == plots.table(name)


@pytest.mark.parametrize("name", NAMES)
def test_plot_draws_the_tables_numbers(name):
    rows = plots.documented_rows(name)
    data = plots.plot_data(name)
    assert data
    for label, series, value, shown in data:
        matching = [row for row in rows if row.startswith(label + " |")]
        assert len(matching) == 1, (name, label)
        assert shown in matching[0], (name, label, series, shown)
        assert value == value and value > 0, (name, label, series)  # not NaN


@pytest.mark.parametrize("name", NAMES)
def test_plot_is_beside_its_table_and_small(name):
    path = plots.plot_path(name)
    assert os.path.getsize(path) < 100_000
    with open(path, "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"
    with open(plots.doc_path(name), encoding="utf-8") as f:
        text = f.read()
    after = text[text.index(plots.markers(name)[1]) :].split("\n")[:3]
    assert f"({plots.plot_link(name)})" in "\n".join(after)


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


def test_a_changed_result_changes_the_table(monkeypatch):
    # The tables follow the files: a different figure in a file gives a table that
    # no longer matches the page.
    original = plots._load

    def doubled(name):
        results = original(name)
        return [dict(r, train_tok_s=2 * r.get("train_tok_s", 1)) for r in results]

    monkeypatch.setattr(plots, "_load", doubled)
    assert plots.table("drop_in") != plots.documented_table("drop_in")
    assert plots.main(["--check"]) == 1


def test_check_passes_on_the_page():
    assert plots.main(["--check"]) == 0
    assert ROOT == plots.ROOT


def test_a_changed_deployment_result_changes_both_pages(monkeypatch):
    # docs/deploy.md's tables follow benchmarks/deploy_latency.py's file as
    # BENCHMARKS.md's do.
    original = plots._file

    def slower(name):
        data = original(name)
        if name == plots.DEPLOY_FILE:
            data = dict(data, rows=[dict(r, latency_ms=2 * r["latency_ms"]) for r in data["rows"]])
        return data

    monkeypatch.setattr(plots, "_file", slower)
    assert plots.table("deploy") != plots.documented_table("deploy")
    assert plots.table("deploy_lstm_docs") != plots.documented_table("deploy_lstm_docs")
    assert plots.main(["--check"]) == 1


def test_a_changed_linear_recurrence_result_changes_its_tables(monkeypatch):
    # The two linear-recurrence tables follow benchmarks/linear_rnn_throughput.py's
    # files: a slower MinGRU in one of them changes the table that cites it.
    original = plots._file

    def slower(name):
        data = original(name)
        if name in (plots.LINEAR_CORE[0][1], plots.LINEAR_TURNS[1][1]):
            rows = [dict(r, train_ms=2 * r["train_ms"]) if r["model"] == "min_gru" else r
                    for r in data["rows"]]  # fmt: skip
            data = dict(data, rows=rows)
        return data

    monkeypatch.setattr(plots, "_file", slower)
    assert plots.table("linear_rnn_mingru") != plots.documented_table("linear_rnn_mingru")
    assert plots.table("linear_rnn_turns4096") != plots.documented_table("linear_rnn_turns4096")
    assert plots.main(["--check"]) == 1
