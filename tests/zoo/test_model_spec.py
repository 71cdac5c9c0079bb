"""One spec per zoo model: each folder of ``keras_seqmodels.zoo.models``
declares its model once (``SPEC``), and the registry finds the folders."""

import json
import os
import subprocess
import sys

import pytest

from keras_seqmodels.zoo import ModelSpec, api, models
from keras_seqmodels.zoo.task import Task, task_class

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _folders():
    base = os.path.dirname(models.__file__)
    return sorted(
        f for f in os.listdir(base) if os.path.isfile(os.path.join(base, f, "__init__.py"))
    )


def test_every_folder_declares_one_spec_and_is_found():
    found = models.specs()
    assert sorted({s.package.rpartition(".")[2] for s in found.values()}) == _folders()
    for name, spec in found.items():
        assert spec.name == name
        assert spec.package == f"{models.__name__}.{spec.package.rpartition('.')[2]}"


def test_every_registered_model_has_a_folder_and_the_same_card():
    with open(api.INDEX_PATH, encoding="utf-8") as f:
        index = json.load(f)
    found = models.specs()
    assert set(index) <= set(found)
    for name, entry in index.items():
        assert entry["card"] == found[name].card
        assert os.path.isfile(os.path.join(ROOT, found[name].card)), found[name].card


@pytest.mark.parametrize("name", sorted(models.specs()))
def test_spec_resolves_its_task_recipe_and_exporter(name):
    spec = models.spec(name)
    cls = task_class(name)
    assert issubclass(cls, Task) and cls is spec.task_class()
    recipe = spec.recipe_module()
    assert recipe is None or recipe.__name__.startswith(spec.package + ".")
    exporter = spec.exporter("savedmodel")
    assert exporter is None or callable(exporter)
    assert spec.exporter("no-such-format") is None


def test_a_command_has_one_default_model():
    commands = [c for s in models.specs().values() for c in s.cli_defaults]
    assert len(commands) == len(set(commands)), commands
    for command in commands:
        assert command in models.specs()[models.default_model(command)].cli_defaults
    with pytest.raises(LookupError, match="0 zoo models"):
        models.default_model("no-such-command")


def test_unknown_names():
    with pytest.raises(KeyError, match="Declared: "):
        models.spec("no-such-model")
    assert task_class("no-such-model") is Task


def test_spec_is_frozen_and_validates_its_name():
    spec = ModelSpec("my-model", package="my_models.my_model", exporters={"savedmodel": "os:sep"})
    assert spec.card == "zoo/my-model/card.md" and spec.recipe == ".recipe"
    assert spec.exporter("savedmodel") == os.sep
    with pytest.raises(AttributeError):
        spec.name = "other"  # frozen
    with pytest.raises(TypeError):
        spec.exporters["onnx"] = "os:sep"  # read-only
    with pytest.raises(ValueError, match="`name` must be a non-empty string"):
        ModelSpec("", package="p")


def test_a_folder_without_spec_is_refused(monkeypatch, tmp_path):
    folder = tmp_path / "no_spec_here"
    folder.mkdir()
    (folder / "__init__.py").write_text('"""A folder that forgot its spec."""\n')
    monkeypatch.setattr(models, "__path__", [*models.__path__, str(tmp_path)])
    models._specs.cache_clear()
    try:
        with pytest.raises(TypeError, match="declares no SPEC"):
            models.specs()
    finally:
        monkeypatch.undo()
        sys.modules.pop(f"{models.__name__}.no_spec_here", None)
        models._specs.cache_clear()
    assert "no-spec-here" not in models.specs()


def _extra_folder(monkeypatch, tmp_path, folder, body):
    (tmp_path / folder).mkdir()
    (tmp_path / folder / "__init__.py").write_text(body)
    monkeypatch.setattr(models, "__path__", [*models.__path__, str(tmp_path)])
    models._specs.cache_clear()


def _forget(monkeypatch, folder):
    monkeypatch.undo()
    sys.modules.pop(f"{models.__name__}.{folder}", None)
    models._specs.cache_clear()


def test_a_folder_may_declare_variants_sharing_its_code(monkeypatch, tmp_path):
    body = (
        "from keras_seqmodels.zoo.model_spec import ModelSpec\n"
        "SPECS = (ModelSpec('variant-a', package=__name__, recipe=None),\n"
        "         ModelSpec('variant-b', package=__name__, recipe=None))\n"
    )
    _extra_folder(monkeypatch, tmp_path, "two_variants", body)
    try:
        found = models.specs()
        assert {"variant-a", "variant-b"} <= set(found)
        assert found["variant-b"].card == "zoo/variant-b/card.md"
        assert task_class("variant-a") is Task
    finally:
        _forget(monkeypatch, "two_variants")
    assert "variant-a" not in models.specs()


def test_a_spec_must_name_its_own_folder(monkeypatch, tmp_path):
    body = (
        "from keras_seqmodels.zoo.model_spec import ModelSpec\n"
        "SPEC = ModelSpec('elsewhere', package='some.other.folder')\n"
    )
    _extra_folder(monkeypatch, tmp_path, "wrong_package", body)
    try:
        with pytest.raises(ValueError, match="pass package=__name__"):
            models.specs()
    finally:
        _forget(monkeypatch, "wrong_package")


def test_reading_the_specs_imports_no_framework():
    code = (
        "import sys; from keras_seqmodels.zoo import models; models.specs(); "
        "print(sorted(m for m in ('keras', 'tensorflow', 'jax') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "[]"


def test_recipe_takes_its_name_and_card_from_the_spec():
    from keras_seqmodels.cli.recipe_commands import load_recipe

    for name, spec in models.specs().items():
        recipe = load_recipe(name)
        assert (recipe.name, recipe.card) == (name, spec.card)
    assert load_recipe("no-such-model") is None
    assert isinstance(
        models.spec_of_package(next(iter(models.specs().values())).package), ModelSpec
    )
    assert models.spec_of_package("not.a.folder") is None
