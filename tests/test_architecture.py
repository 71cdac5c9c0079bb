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


# One owner for each question ---------------------------------------------------------

MAX_LINES = 700  # Keras's own modules are 150-700 lines


def _package_files():
    for directory, _, files in os.walk(ROOT):
        for file_name in sorted(files):
            if file_name.endswith(".py"):
                yield os.path.join(directory, file_name)


def _imported_modules(path):
    """Every ``keras_seqmodels`` module a file imports (inside functions too;
    relative imports resolved)."""
    import ast

    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), path)
    module = os.path.relpath(path, os.path.dirname(ROOT))[:-3].replace(os.sep, ".")
    package = module if path.endswith("__init__.py") else module.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            source = node.module or ""
            if node.level:
                base = package
                for _ in range(node.level - 1):
                    base = base.rpartition(".")[0]
                source = base + ("." + source if source else "")
            yield source
            yield from (f"{source}.{alias.name}" for alias in node.names)


def test_no_module_under_export_imports_the_zoo():
    # A zoo model's writer and options reach export through its task (Task.export_plan).
    offenders = []
    for path in _package_files():
        if os.path.relpath(path, ROOT).split(os.sep)[0] != "export":
            continue
        for name in _imported_modules(path):
            if name == "keras_seqmodels.zoo" or name.startswith("keras_seqmodels.zoo."):
                offenders.append(f"{os.path.relpath(path, ROOT)}: {name}")
    assert not offenders, "export/ imports zoo/:\n" + "\n".join(offenders)


def _keras_loader_calls(path):
    """Lines of ``path`` that call Keras's ``.keras`` loader
    (``keras.saving.load_model``, ``keras.models.load_model``, or the name
    imported from either)."""
    import ast

    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), path)
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module in ("keras.saving", "keras.models"):
            imported |= {a.asname or a.name for a in node.names if a.name == "load_model"}
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        if (
            isinstance(f, ast.Attribute)
            and f.attr == "load_model"
            and isinstance(f.value, ast.Attribute)
            and f.value.attr in ("saving", "models")
            and isinstance(f.value.value, ast.Name)
            and f.value.value.id == "keras"
        ) or (isinstance(f, ast.Name) and f.id in imported):
            found.append(node.lineno)
    return found


# The layer test helper reloads the file it has just written (with custom objects).
LOADER_EXEMPT = {os.path.join("testing", "layer_test.py")}


def test_one_place_opens_a_keras_file():
    # utils/loading.py: exists, sizes bounded, safe mode, one-line error.
    calls = {}
    for path in _package_files():
        where = os.path.relpath(path, ROOT)
        if where not in LOADER_EXEMPT and _keras_loader_calls(path):
            calls[where] = _keras_loader_calls(path)
    assert list(calls) == [os.path.join("utils", "loading.py")], (
        "Keras's .keras loader called outside keras_seqmodels/utils/loading.py "
        f"(use load_model_file): {calls}"
    )


def test_the_loader_check_finds_a_call(tmp_path):
    path = tmp_path / "m.py"
    path.write_text(
        "import keras\nfrom keras.saving import load_model as lm\n"
        "def f(p):\n    keras.models.load_model(p)\n    return lm(p)\n"
    )
    assert _keras_loader_calls(str(path)) == [4, 5]


def test_no_module_is_over_700_lines():
    long = {}
    for path in _package_files():
        with open(path, encoding="utf-8") as f:
            count = sum(1 for _ in f)
        if count > MAX_LINES:
            long[os.path.relpath(path, ROOT)] = count
    assert not long, f"modules over {MAX_LINES} lines (split them by concern): {long}"
