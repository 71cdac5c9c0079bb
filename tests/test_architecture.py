"""One zoo model, one folder: no package module outside a model's folder
names the model (its zoo name or its folder's name), in code, docstrings or
comments alike. Adding a zoo model is adding a folder under
``keras_seqmodels/zoo/models/``; the registry finds it through its spec."""

import os
import re

from keras_seqmodels.zoo import models

ROOT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "keras_seqmodels")

# Known departures, to go: (folder, zoo model it names). None today.
KNOWN = set()


def _names():
    """``(folder path, zoo name, folder name)`` of every declared model."""
    out = []
    for spec in models.specs().values():
        folder = spec.package.rpartition(".")[2]
        out.append((os.path.join(ROOT, "zoo", "models", folder), spec.name, folder))
    return out


def _pattern(name):
    return re.compile(rf"(?<![\w-]){re.escape(name)}(?![\w-])")


def test_the_specs_are_found():
    assert len(_names()) >= 1


def test_no_package_module_outside_a_models_folder_names_it():
    declared = [(path, name, [_pattern(name), _pattern(folder)]) for path, name, folder in _names()]
    models_dir = os.path.join(ROOT, "zoo", "models")
    offenders, used = [], set()
    for directory, _, files in os.walk(ROOT):
        for file_name in files:
            if not file_name.endswith(".py"):
                continue
            path = os.path.join(directory, file_name)
            with open(path, encoding="utf-8") as f:
                lines = f.read().splitlines()
            for folder, name, patterns in declared:
                if path.startswith(folder + os.sep):
                    continue  # the model's own folder
                pair = (os.path.relpath(path, models_dir).split(os.sep)[0], name)
                for number, line in enumerate(lines, 1):
                    if not any(p.search(line) for p in patterns):
                        continue
                    if pair in KNOWN:
                        used.add(pair)
                    else:
                        where = os.path.relpath(path, os.path.dirname(ROOT))
                        offenders.append(f"{where}:{number}: {line.strip()}")
    assert not offenders, (
        "package code names a zoo model outside its folder (move it into the folder's "
        "spec, keras_seqmodels/zoo/models/<folder>/__init__.py; a variant that shares "
        "another model's code is declared in that model's folder, SPECS = (...)):\n"
        + "\n".join(offenders)
    )
    known = {pair for pair in KNOWN if pair[1] in models.specs()}
    assert used == known, f"KNOWN lists departures that are gone: {sorted(known - used)}"


def test_the_check_finds_a_name():
    # The patterns match a name as a word, not inside a longer one.
    _, name, folder = _names()[0]
    assert _pattern(name).search(f'load("{name}")')
    assert _pattern(folder).search(f"zoo.models.{folder}.task")
    assert not _pattern(name).search(f"{name}-extra")
    assert not _pattern(folder).search(f"{folder}_extra")
