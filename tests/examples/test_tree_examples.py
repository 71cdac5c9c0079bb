import numpy as np
import pytest
from scripts import load_script


def load_example(name):
    return load_script("examples", name, f"example_{name}")


def test_random_tree_labels_are_subtree_sums():
    from keras_seqmodels import trees as T

    ex = load_example("recursive_trees")
    rng = np.random.default_rng(0)
    t = T.parse_ptb(ex.random_tree_string(rng, [2, -1, -2, 0]))
    # Root: sign(2 - 1 - 2 + 0) = -1 -> label 0; leaves keep their own sign.
    assert t.labels[t.root] == 0
    assert [t.labels[i] for i in t.leaves] == [2, 0, 0, 1]
    for tree in ex.make_trees(rng, 6):
        assert all(lab in (0, 1, 2) for lab in tree.labels)


@pytest.mark.tf_only
def test_recursive_trees_example_runs_and_learns():
    ex = load_example("recursive_trees")
    out = ex.main(["--trees", "64", "--epochs", "4"])
    assert np.all(np.isfinite(out["loss"]))
    assert out["loss"][-1] < out["loss"][0]
    assert 0.0 <= out["root_accuracy"] <= 1.0 and 0.0 <= out["node_accuracy"] <= 1.0
