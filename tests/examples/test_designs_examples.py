"""Smoke tests: the examples of the other recurrent designs run end to end
with tiny settings (issue 3)."""

import numpy as np
import pytest
from scripts import load_script


def load(name, folder="examples"):
    return load_script(folder, name)


def test_mackey_glass_integrator_converges_and_stays_in_range():
    mg = load("esn_mackey_glass").mackey_glass
    coarse = mg(200, dt=0.1, sample_every=10, transient=50, noise=0.0)
    fine = mg(200, dt=0.05, sample_every=20, transient=50, noise=0.0)
    finest = mg(200, dt=0.025, sample_every=40, transient=50, noise=0.0)
    assert coarse.shape == (200,)
    assert 0.2 < coarse.min() and coarse.max() < 1.5
    # The integrator converges as the step shrinks: against dt = 0.025, the
    # error of dt = 0.1 is about 3x that of dt = 0.05 (first order overall:
    # the constant initial history leaves derivative kinks at multiples of τ).
    e_coarse = np.max(np.abs(coarse - finest))
    e_fine = np.max(np.abs(fine - finest))
    assert e_coarse < 1e-2 and e_coarse / e_fine > 2.5
    # τ = 17 is chaotic: no period shorter than 100 samples.
    tail = coarse[100:]
    assert all(np.max(np.abs(tail[p:] - tail[:-p])) > 0.05 for p in range(1, 50))


def test_esn_example_runs_small_and_merges_split_runs(tmp_path):
    esn = load("esn_mackey_glass")
    small = ["--units", "60", "--connectivity", "0.2", "--train", "400", "--washout", "100"]
    small += ["--warmup", "100"]
    small += ["--horizon", "12", "--trials", "3", "--networks", "1", "--plot", ""]
    parts = [str(tmp_path / f"part{k}.json") for k in range(2)]
    first = esn.main(small + ["--json", parts[0]])
    second = esn.main(small + ["--first-network", "1", "--json", parts[1]])
    assert np.isfinite(first) and first < 0.5 and first != second
    png = tmp_path / "esn.png"
    merged = esn.main(["--merge", *parts, "--plot", str(png)])
    np.testing.assert_allclose(merged, np.sqrt((first**2 + second**2) / 2))
    assert png.exists()
    assert png.stat().st_size > 1000


@pytest.mark.slow
def test_output_feedback_example_runs_small():
    results = load("output_feedback").main(["--n", "32", "--steps", "8", "--epochs", "1"])
    assert set(results) == {"teacher_forcing", "closed_loop", "scheduled"}
    assert all(np.isfinite(r["rmse"]) for r in results.values())


@pytest.mark.slow
def test_conditioned_generation_example_runs_small():
    results = load("conditioned_generation").main(["--n", "32", "--steps", "6", "--epochs", "1"])
    assert all(np.isfinite(v) for v in results.values())
    assert 0.0 <= results["classification_accuracy"] <= 1.0


@pytest.mark.slow
def test_deep_transition_example_runs_small():
    results = load("deep_transition").main(["--n", "32", "--steps", "6", "--epochs", "1"])
    assert len(results) == 5 and all(0 <= r["accuracy"] <= 1 for r in results.values())


@pytest.mark.slow
def test_leaky_skip_clockwork_example_runs_small():
    results = load("leaky_skip_clockwork").main(["--n", "32", "--steps", "12", "--epochs", "1"])
    assert len(results) == 5 and all(np.isfinite(v) for v in results.values())


@pytest.mark.slow
def test_teacher_forcing_benchmark_runs_small():
    results = load("teacher_forcing_vs_bptt", "benchmarks").main(
        ["--steps", "6", "--batch", "4", "--batches", "2", "--units", "4", "--repeats", "1"]
    )
    assert set(results) == {"teacher_parallel", "teacher_loop", "bptt_closed_loop"}
