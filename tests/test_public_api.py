"""API polish: every public name is documented, its Example runs, its
arguments are named as Keras names them.

The public names are the ``__all__`` of the package's sub-packages (the
command-line package ``cli`` and the helper package ``utils`` excepted) and
of the public modules listed in ``MODULES``.
"""

import doctest
import importlib
import inspect
import pkgutil
import re

import keras
import pytest

import keras_seqmodels

NOT_LIBRARY = {"cli", "utils"}  # commands; helper modules imported by path
SUBPACKAGES = sorted(
    m.name for m in pkgutil.iter_modules(keras_seqmodels.__path__)
    if m.ispkg and m.name not in NOT_LIBRARY
)
MODULES = ["keras_seqmodels.utils.plotting"]  # public modules outside them


def _exports():
    seen = {}
    for path in [f"keras_seqmodels.{sub}" for sub in SUBPACKAGES] + MODULES:
        module = importlib.import_module(path)
        for name in getattr(module, "__all__", []):
            obj = getattr(module, name)
            if inspect.isclass(obj) or inspect.isfunction(obj):
                seen.setdefault(id(obj), (f"{path}.{name}", obj))
    return sorted(seen.values(), key=lambda item: item[0])


EXPORTS = _exports()
IDS = [name for name, _ in EXPORTS]


def _parameters(obj):
    try:
        params = inspect.signature(obj).parameters.values()
    except ValueError:  # builtin constructors (exception classes)
        return []
    return [p.name for p in params
            if p.name != "self" and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]


def _docs(obj):
    """The docstring of ``obj`` and, for a class, of its package base classes
    (a subclass may document its inherited arguments by reference)."""
    if not inspect.isclass(obj):
        return inspect.getdoc(obj) or ""
    bases = [c for c in obj.__mro__ if c.__module__.startswith("keras_seqmodels")]
    return "\n".join(inspect.getdoc(c) or "" for c in bases)


def test_every_library_subpackage_declares_its_public_names():
    missing = [s for s in SUBPACKAGES
               if not hasattr(importlib.import_module(f"keras_seqmodels.{s}"), "__all__")]
    assert not missing
    assert len(EXPORTS) > 60


@pytest.mark.parametrize("name,obj", EXPORTS, ids=IDS)
def test_docstring_has_args_returns_example(name, obj):
    doc = inspect.getdoc(obj) or ""
    assert doc.strip(), f"{name} has no docstring"
    if inspect.isclass(obj) and issubclass(obj, Exception):
        return
    params = _parameters(obj)
    if params:
        assert "Args:" in doc, f"{name}: no Args section"
        text = _docs(obj)
        undocumented = [p for p in params if not re.search(rf"\b{p}\b", text)]
        assert not undocumented, f"{name}: arguments not in the docstring: {undocumented}"
    if inspect.isfunction(obj):
        assert "Returns:" in doc, f"{name}: no Returns section"
    assert ">>>" in doc, f"{name}: no Example"


class _ShapeChecker(doctest.OutputChecker):
    """Shapes print as ``TensorShape([2, 5])`` on TensorFlow and ``(2, 5)`` on
    JAX; the Examples may show either."""

    @staticmethod
    def _tuple(text):
        def as_tuple(match):
            dims = match.group(1)
            return f"({dims},)" if dims and "," not in dims else f"({dims})"

        return re.sub(r"TensorShape\(\[([^\]]*)\]\)", as_tuple, text)

    def check_output(self, want, got, optionflags):
        return super().check_output(self._tuple(want), self._tuple(got), optionflags)


@pytest.mark.tf_only  # string layers and SavedModel export in some Examples
@pytest.mark.parametrize("name,obj", EXPORTS, ids=IDS)
def test_docstring_example_runs(name, obj, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    module = inspect.getmodule(obj)
    finder = doctest.DocTestFinder(recurse=False)
    runner = doctest.DocTestRunner(
        checker=_ShapeChecker(),
        optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE,
    )
    report = []
    for test in finder.find(obj, name, module=module, globs=dict(vars(module))):
        result = runner.run(test, out=report.append)
        assert result.failed == 0, "".join(report)


# Argument names -----------------------------------------------------------

# Names Keras spells otherwise (keras.layers.LSTM, SimpleRNNCell, Embedding...).
KERAS_NAMES = {
    "num_units": "units", "hidden_size": "units", "n_units": "units",
    "hidden_units": "units", "return_seq": "return_sequences",
    "return_sequence": "return_sequences", "return_states": "return_state",
    "kernel_init": "kernel_initializer", "recurrent_init": "recurrent_initializer",
    "bias_init": "bias_initializer", "init": "kernel_initializer",
    "activation_fn": "activation", "keep_prob": "dropout", "drop_rate": "dropout",
    "backwards": "go_backwards", "reverse": "go_backwards",
}
# The package's own spelling of the same thing, once chosen.
PACKAGE_NAMES = {"vocab_size": "vocabulary_size", "embed_dim": "embedding_dim"}
# Known departures, kept because a shipped artifact's config stores them.
KNOWN = {("keras_seqmodels.memory.MemoryNetwork", "vocab_size"),
         ("keras_seqmodels.memory.MemoryNetwork", "embed_dim"),
         # A scan function, not a layer: ``reverse`` as jax.lax.scan names it.
         ("keras_seqmodels.linear_rnn.linear_scan", "reverse"),
         ("keras_seqmodels.linear_rnn.complex_linear_scan", "reverse")}


@pytest.mark.parametrize("name,obj", EXPORTS, ids=IDS)
def test_argument_names_follow_keras(name, obj):
    wrong = {}
    for param in _parameters(obj):
        better = KERAS_NAMES.get(param) or PACKAGE_NAMES.get(param)
        if better and (name, param) not in KNOWN:
            wrong[param] = better
        elif param.endswith(("_init", "_initialiser", "_regulariser")):
            wrong[param] = "a Keras-style *_initializer / *_regularizer name"
    assert not wrong, f"{name}: rename {wrong}"


# Cells assembled from layers the user gives take those first (as
# keras.layers.RNN takes its cell); their width comes from the layers.
LAYERS_FIRST = {"keras_seqmodels.cells.StateMachineCell": "transition"}


def test_cells_and_recurrent_layers_take_units_first():
    for name, obj in EXPORTS:
        if not (inspect.isclass(obj) and issubclass(obj, keras.layers.Layer)):
            continue
        params = _parameters(obj)
        if name in LAYERS_FIRST:
            assert params[0] == LAYERS_FIRST[name], f"{name}: first argument {params[0]!r}"
        elif name.endswith("Cell") or (name.split(".")[-1] in {"NTM"}):
            assert params[0] == "units", f"{name}: first argument {params[0]!r}"
        if "return_sequences" in params:
            assert "return_state" in params, f"{name}: return_sequences without return_state"
