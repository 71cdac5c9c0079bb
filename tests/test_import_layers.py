"""Imports run downward: no module of the library outside ``cli/`` imports
the command line (the CLI reads input, calls the library, writes output)."""

import ast
import os
import warnings

import pytest

ROOT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "keras_seqmodels")


def _imports(path):
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), path)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield node.module
            yield from (f"{node.module}.{alias.name}" for alias in node.names)


def test_no_library_module_imports_the_cli():
    offenders = []
    for folder, _, files in os.walk(ROOT):
        if os.path.relpath(folder, ROOT).split(os.sep)[0] == "cli":
            continue
        for name in files:
            if name.endswith(".py"):
                path = os.path.join(folder, name)
                if any(m.startswith("keras_seqmodels.cli") for m in _imports(path)):
                    offenders.append(os.path.relpath(path, ROOT))
    assert not offenders, f"library modules importing keras_seqmodels.cli: {offenders}"


def test_the_old_sentiment_helper_path_still_works_with_a_warning():
    from keras_seqmodels.cli import sentiment_commands
    from keras_seqmodels.trees import text

    with pytest.warns(DeprecationWarning, match="moved to keras_seqmodels.trees.text"):
        assert sentiment_commands.text_to_tree is text.text_to_tree
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert sentiment_commands.DEFAULT_MODEL == "sst-treelstm"
    with pytest.raises(AttributeError):
        sentiment_commands.no_such_name  # noqa: B018
