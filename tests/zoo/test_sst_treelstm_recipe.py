"""The sst-treelstm recipe's assembly of JAX-trained weights (no training)."""

import numpy as np
import pytest

pytestmark = pytest.mark.tf_only  # the models take strings (StringLookup)

WORDS = ["", "good", "bad", "film"]
TREES = ["(3 (2 a) (3 (3 good) (2 film)))", "(1 (1 bad) (2 film))", "(2 film)"]


def load_recipe(name):
    """The model's script in ``zoo/<name>/recipe.py`` (until it moves onto the
    recipe framework in ``keras_seqmodels.zoo.models``)."""
    import importlib.util
    import os

    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    path = os.path.join(root, "zoo", name, "recipe.py")
    spec = importlib.util.spec_from_file_location(f"legacy_{name.replace('-', '_')}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def recipe():
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


def test_siblings_load_by_path_not_by_a_bare_import(recipe, monkeypatch):
    import sys
    import types

    # Another zoo's `recipe` module already imported in this process.
    monkeypatch.setitem(sys.modules, "recipe", types.ModuleType("recipe"))
    gpu_data = recipe._sibling("gpu_data")
    assert gpu_data.__name__ == "sst_treelstm_gpu_data"
    assert gpu_data.recipe.NAME == "sst-treelstm"
    assert recipe._sibling("train_jax").BUCKETS[-1] >= 100


def test_extra_text_reads_conllu_words_and_plain_lines(recipe, tmp_path):
    conllu = tmp_path / "x.conllu"
    conllu.write_text(
        "# text = I don't like it.\n"
        "1\tI\tI\tPRON\t_\t_\t4\tnsubj\t_\t_\n"
        "2-3\tdon't\t_\t_\t_\t_\t_\t_\t_\t_\n"
        "2\tdo\tdo\tAUX\t_\t_\t4\taux\t_\t_\n"
        "3\tn't\tnot\tPART\t_\t_\t4\tadvmod\t_\t_\n"
        "4\tLike\tlike\tVERB\t_\t_\t0\troot\t_\t_\n"
        "4.1\tit\t_\t_\t_\t_\t_\t_\t_\t_\n"
        "\n"
        "1\tBad\tbad\tADJ\t_\t_\t0\troot\t_\t_\n"
    )
    plain = tmp_path / "x.txt"
    plain.write_text("A Good film\nbad\n")
    gpu_data = recipe._sibling("gpu_data")
    assert gpu_data.text_sentences(str(conllu)) == [["i", "do", "n't", "like"], ["bad"]]
    assert gpu_data.text_sentences(str(plain)) == [["a", "good", "film"], ["bad"]]
    # Only in-vocabulary words reach the skip-gram corpus; -1 ends a sentence.
    words = ["", "bad", "film", "good"]
    ids = gpu_data.corpus([], words, str(tmp_path / "missing.txt"), [str(plain)])
    assert ids.tolist() == [4, 3, -1, 2, -1]
