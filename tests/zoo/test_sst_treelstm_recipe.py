"""The sst-treelstm recipe's assembly of JAX-trained weights (no training)."""

import numpy as np
import pytest

pytestmark = pytest.mark.tf_only  # the models take strings (StringLookup)

WORDS = ["", "good", "bad", "film"]
TREES = ["(3 (2 a) (3 (3 good) (2 film)))", "(1 (1 bad) (2 film))", "(2 film)"]


@pytest.fixture(scope="module")
def recipe():
    from keras_seqmodels.cli.recipe_commands import load_recipe

    return load_recipe("sst-treelstm")


def random_member(recipe, embed_dim, units, cell, seed):
    """A member as ``train_jax.py`` stores it: ``{weight path: array}``."""
    model = recipe.build_model(WORDS, embed_dim, units, cell=cell)
    rng = np.random.default_rng(seed)
    weights = {w.path: rng.uniform(-0.5, 0.5, w.shape).astype("float32")
               for w in model.trainable_weights}
    return (embed_dim, units, cell), weights


def node_logits(model):
    import keras_seqmodels as ks

    batch = ks.trees.encode([ks.trees.parse_ptb(t) for t in TREES], arity=2)
    out = model.predict_on_batch([batch["tokens"].astype(object), batch["children"],
                                  batch["levels"]])
    return np.asarray(out, np.float64), batch["levels"] >= 0


def log_softmax(x):
    x = x - x.max(-1, keepdims=True)
    return x - np.log(np.exp(x).sum(-1, keepdims=True))


def test_ensemble_is_the_mean_of_member_log_probabilities(recipe):
    members = [random_member(recipe, 4, 3, "treelstm", 0),
               random_member(recipe, 5, 2, "treelstm", 1),
               random_member(recipe, 3, 3, "rntn", 2)]
    singles = [node_logits(recipe._model_from_members(WORDS, [m]))[0] for m in members]
    ensemble, real = node_logits(recipe._model_from_members(WORDS, members))
    expected = np.mean([log_softmax(s) for s in singles], 0)
    np.testing.assert_allclose(ensemble[real], expected[real], atol=1e-5)
    # The members differ, so the mean is not any one of them.
    assert not np.allclose(log_softmax(singles[0])[real], expected[real], atol=1e-3)


def test_single_member_keeps_its_weights(recipe):
    member = random_member(recipe, 4, 3, "treelstm", 3)
    model = recipe._model_from_members(WORDS, [member])
    for w in model.trainable_weights:
        np.testing.assert_array_equal(w.numpy(), member[1][w.path])


def test_shape_mismatch_is_named(recipe):
    (_, units, cell), weights = random_member(recipe, 4, 3, "treelstm", 4)
    with pytest.raises(ValueError, match="assemble: embedding/embeddings has shape"):
        recipe._model_from_members(WORDS, [((6, units, cell), weights)])
