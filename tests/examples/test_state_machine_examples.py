"""examples/state_machines.py: the zero-parity machine as a table and as a
hand-set StateMachineCell (exact agreement on every string up to length 12),
learned by BPTT with and without a gate, and a sequence classifier trained as
a transduction. Thresholds come from the runs listed in docs/designs.md, with
margin; seeds are fixed."""

import numpy as np
import pytest
from scripts import load_script


@pytest.fixture(scope="module")
def sm():
    return load_script("examples", "state_machines")


def test_tables_compute_what_they_describe(sm):
    rng = np.random.default_rng(0)
    strings = rng.integers(0, 2, (50, 15))
    # Parity of the zeros read so far, counted directly.
    parity = np.cumsum(1 - strings, axis=1) % 2
    np.testing.assert_array_equal(sm.fsm_outputs(sm.ZERO_PARITY, strings), parity)
    # Prefixes read as binary numbers, most significant bit first.
    values = [[int("".join(map(str, row[: t + 1])), 2) for t in range(15)] for row in strings]
    np.testing.assert_array_equal(
        sm.fsm_outputs(sm.DIVISIBLE_BY_3, strings), (np.array(values) % 3 == 0).astype(int)
    )
    for row in strings[:5]:
        assert sm.run_fsm(sm.ZERO_PARITY, list(row)) == list(np.cumsum(1 - row) % 2)
    strings, mask = sm.all_strings(12)
    assert len(strings) == 2**13 - 1 and mask.sum() == sum(n * 2**n for n in range(13))
    assert len({(tuple(s[m])) for s, m in zip(strings, mask)}) == 2**13 - 1


@pytest.mark.parametrize("machine", ["ZERO_PARITY", "DIVISIBLE_BY_3"])
def test_hand_set_cell_agrees_with_the_table_on_every_string_up_to_12(sm, machine):
    result = sm.check_encoding(getattr(sm, machine), max_length=12)
    assert result["strings"] == 8191 and result["steps"] == 90114
    assert result["step_errors"] == 0 and result["final_state_errors"] == 0
    # σ(-0.5 k) with k = 20 is 4.5e-5: the outputs are 0/1 to that margin.
    assert result["max_deviation"] < 1e-4


def test_a_shallow_sigmoid_breaks_the_encoding(sm):
    """The exactness comes from the steep sigmoid: at k = 1 the units are
    never near 0/1 and the cell disagrees with the table."""
    assert sm.check_encoding(sm.ZERO_PARITY, max_length=8, steepness=1.0)["step_errors"] > 0


def _learned(result, threshold=0.99):
    """The run learned the machine: exact on its training strings and right
    at every step of strings 10x and 100x longer, to ``threshold``."""
    return result["train"] == 1.0 and min(result["10x"], result["100x"]) >= threshold


def test_ungated_parity_either_learns_the_machine_or_fails_on_long_strings(sm):
    """Seeds 0 and 1 (on TensorFlow seed 0 learns and 1 does not; on JAX the
    reverse). A run that fits its training strings exactly holds on strings
    10x and 100x longer; a run that does not (0.86-0.95 per step on length
    10 in the runs made) is near chance (0.5-0.6) on length 100."""
    runs = [sm.learn_parity(seed) for seed in (0, 1)]
    learned = [_learned(r) for r in runs]
    assert sorted(learned) == [False, True], runs
    for r, ok in zip(runs, learned):
        if not ok:
            assert r["train"] < 0.98 and r["10x"] < 0.7 and r["10x_strings"] < 0.1, r


def test_gated_parity_holds_on_10x_where_the_ungated_failed(sm):
    """The gated machine learns with both seeds (the ungated one fails with
    one of them) and holds on strings 10x longer (>= 0.9945 per step in the
    runs made), but not through long runs of ones (0.51-0.52: the gate
    never closes exactly, so the state drifts)."""
    runs = [sm.learn_parity(seed, gated=True) for seed in (0, 1)]
    for r in runs:
        assert r["train"] == 1.0 and r["10x"] >= 0.98, r
        assert r["runs_of_ones"] < 0.75, r


def test_classifier_trained_as_transduction_beats_the_final_label_only(sm):
    """Divisible by 3, gated machine, seed 1: every prefix labelled gives
    0.998-1.0 on strings of the training length and 0.98-1.0 on strings
    twice as long (TF, JAX runs); the last label only gives 0.60-0.63 and
    0.59-0.66 (majority class 2/3)."""
    dense = sm.learn_classifier(1, transduction=True)
    final = sm.learn_classifier(1, transduction=False)
    assert dense["same_length"] >= 0.97 and dense["longer"] >= 0.9, dense
    assert final["same_length"] <= 0.8 and final["longer"] <= 0.8, final


def test_main_runs_small(sm):
    results = sm.main(["--seeds", "0", "--epochs", "1", "--test-length", "20"])
    assert results["encoding"]["step_errors"] == 0
    assert set(results["parity"]) == {"ungated", "gated"}
    assert all(0.0 <= r["10x"] <= 1.0 for runs in results["parity"].values() for r in runs)
    assert set(results["classifier"]) == {"transduction", "final label only"}
    assert all(0.0 <= r["longer"] <= 1.0 for runs in results["classifier"].values() for r in runs)
