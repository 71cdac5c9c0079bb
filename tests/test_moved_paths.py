"""The layers and modules that moved to the package of their concern keep
their old paths for one release: each old path warns (DeprecationWarning,
naming the new path) and gives the very same object; the classes keep their
Keras serialization names, so saved files load; loading a shipped model that
uses them warns about nothing."""

import importlib
import json
import os
import subprocess
import sys
import zipfile

import keras
import pytest

from keras_seqmodels import layers

# Old name in keras_seqmodels.layers -> its new package.
LAYERS = {
    "CRF": "keras_seqmodels.tagging",
    "CRFTagger": "keras_seqmodels.tagging",
    "CharacterEncoder": "keras_seqmodels.tagging",
    "SentenceVectorizer": "keras_seqmodels.tagging",
    "TagLookup": "keras_seqmodels.tagging",
    "RecursiveNN": "keras_seqmodels.trees",
    "RNTN": "keras_seqmodels.trees",
    "TreeLSTM": "keras_seqmodels.trees",
}

# (old module, new module, a name it defines).
MODULES = [
    ("keras_seqmodels.layers.crf", "keras_seqmodels.tagging.crf", "CRF"),
    ("keras_seqmodels.layers.crf", "keras_seqmodels.tagging.crf", "crf_decode"),
    ("keras_seqmodels.layers.crf_tagger", "keras_seqmodels.tagging.crf_tagger", "CRFTagger"),
    ("keras_seqmodels.layers.tag_lookup", "keras_seqmodels.tagging.tag_lookup", "TagLookup"),
    (
        "keras_seqmodels.layers.character_encoder",
        "keras_seqmodels.tagging.character_encoder",
        "CharacterEncoder",
    ),
    (
        "keras_seqmodels.layers.sentence_vectorizer",
        "keras_seqmodels.tagging.sentence_vectorizer",
        "SentenceVectorizer",
    ),
    ("keras_seqmodels.layers.tree_lstm", "keras_seqmodels.trees.tree_lstm", "TreeLSTM"),
    ("keras_seqmodels.layers.rntn", "keras_seqmodels.trees.rntn", "RNTN"),
    ("keras_seqmodels.layers.recursive_nn", "keras_seqmodels.trees.recursive_nn", "RecursiveNN"),
    *(
        ("keras_seqmodels.training.recipe_utils", f"keras_seqmodels.zoo.framework.{new}", name)
        for new, name in (
            ("arguments", "add_common_arguments"),
            ("arguments", "default_data_dir"),
            ("arguments", "PRECISIONS"),
            ("distribution", "strategy_scope"),
            ("distribution", "DistributedSetup"),
        )
    ),
    ("keras_seqmodels.seq2seq.multi30k", "keras_seqmodels.data.multi30k", "Multi30kEnDe"),
    ("keras_seqmodels.seq2seq.multi30k", "keras_seqmodels.data.multi30k", "read_split"),
]


@pytest.mark.parametrize("name", sorted(LAYERS))
def test_an_old_layer_name_warns_and_gives_the_same_class(name):
    home = importlib.import_module(LAYERS[name])
    with pytest.warns(DeprecationWarning, match=rf"keras_seqmodels\.layers\.{name} moved to "
                      rf"{LAYERS[name]}\.{name}"):  # fmt: skip
        assert getattr(layers, name) is getattr(home, name)
    assert name in home.__all__ and name not in layers.__all__
    assert keras.saving.get_registered_name(getattr(home, name)) == f"keras_seqmodels>{name}"


def test_an_old_layer_name_imports_with_from():
    with pytest.warns(DeprecationWarning, match="moved to keras_seqmodels.tagging.CRF"):
        from keras_seqmodels.layers import CRF
    from keras_seqmodels.tagging import CRF as new

    assert CRF is new
    with pytest.raises(AttributeError, match="no attribute 'NoSuchLayer'"):
        layers.NoSuchLayer  # noqa: B018


@pytest.mark.parametrize("old, new, name", MODULES, ids=[f"{o}.{n}" for o, _, n in MODULES])
def test_an_old_module_path_warns_and_gives_the_same_objects(old, new, name, monkeypatch):
    parent, _, child = old.rpartition(".")
    # A fresh import of the old path, as a program that names it does.
    monkeypatch.delitem(sys.modules, old, raising=False)
    monkeypatch.delitem(vars(importlib.import_module(parent)), child, raising=False)
    with pytest.warns(DeprecationWarning, match=rf"{old} moved to .*{new}\b.*the old path goes"):
        module = importlib.import_module(old)
    assert getattr(module, name) is getattr(importlib.import_module(new), name)
    with pytest.raises(AttributeError):
        module.no_such_name  # noqa: B018


def test_the_old_recipe_utils_attribute_warns():
    import keras_seqmodels as ks
    from keras_seqmodels.zoo.framework import distribution

    sys.modules.pop("keras_seqmodels.training.recipe_utils", None)
    vars(ks.training).pop("recipe_utils", None)
    assert "recipe_utils" not in ks.training.__all__
    with pytest.warns(DeprecationWarning, match="recipe_utils moved to"):
        assert ks.training.recipe_utils.strategy_scope is distribution.strategy_scope


def test_default_data_dir_is_still_shared_data_beside_the_checkout():
    import keras_seqmodels
    from keras_seqmodels.zoo.framework.arguments import default_data_dir

    checkout = os.path.dirname(os.path.dirname(os.path.abspath(keras_seqmodels.__file__)))
    expected = os.path.join(os.path.dirname(checkout), "shared", "data")
    assert default_data_dir() == (expected if os.path.isdir(expected) else None)


def _uses_a_moved_class(path):
    with zipfile.ZipFile(path) as archive:
        config = archive.read("config.json").decode()
    return any(f'"keras_seqmodels>{name}"' in config for name in LAYERS)


_LOAD_ALL = """
import json, sys, warnings
warnings.simplefilter("always")
with warnings.catch_warnings(record=True) as caught:
    import keras
    from keras_seqmodels import zoo
    for name in json.loads(sys.argv[1]):
        keras.saving.load_model(zoo.artifact_path(name))
        zoo.load(name)
print(json.dumps([str(w.message) for w in caught if "moved to" in str(w.message)]))
"""


@pytest.mark.slow
@pytest.mark.tf_only
def test_loading_the_shipped_models_that_use_moved_classes_warns_nothing():
    from keras_seqmodels import zoo

    names = [n for n in zoo.list_models() if _uses_a_moved_class(zoo.artifact_path(n))]
    assert {"ud-ewt-upos", "sst-treelstm"} <= set(names)
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    done = subprocess.run(
        [sys.executable, "-c", _LOAD_ALL, json.dumps(names)],
        capture_output=True, text=True, timeout=600, env=env,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout.strip().splitlines()[-1]) == []
