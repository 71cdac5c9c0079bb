"""Imports run downward: no module of the library outside ``cli/`` imports
the command line (the CLI reads input, calls the library, writes output), and
no two modules import each other, directly or through others (every import
in a file counts, inside a function or a module-level ``__getattr__`` too: it
is a dependency all the same)."""

import ast
import os

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


PACKAGE = "keras_seqmodels"


def _modules():
    """``{module name: path}`` of every module of the package."""
    found = {}
    for folder, _, files in os.walk(ROOT):
        for name in files:
            if name.endswith(".py"):
                path = os.path.join(folder, name)
                module = os.path.relpath(path, os.path.dirname(ROOT))[:-3].replace(os.sep, ".")
                found[module.removesuffix(".__init__")] = path
    return found


def import_graph(modules=None):
    """``{module: {modules it imports}}`` within the package.

    ``from pkg import name`` is an edge to the submodule ``pkg.name`` when
    there is one, else to ``pkg`` (its ``__init__``); relative imports are
    resolved; an import inside a function counts.
    """
    modules = _modules() if modules is None else modules

    def owner(name):
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    graph = {}
    for module, path in modules.items():
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read(), path)
        edges = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                edges.update(owner(a.name) for a in node.names if a.name.startswith(PACKAGE))
            elif isinstance(node, ast.ImportFrom):
                source = node.module
                if node.level:
                    base = module if path.endswith("__init__.py") else module.rpartition(".")[0]
                    for _ in range(node.level - 1):
                        base = base.rpartition(".")[0]
                    source = base + ("." + node.module if node.module else "")
                if not source or not source.startswith(PACKAGE):
                    continue
                for alias in node.names:
                    full = f"{source}.{alias.name}"
                    edges.add(full if full in modules else owner(source))
        edges.discard(module)
        edges.discard(None)
        graph[module] = edges
    return graph


def circles(graph):
    """The import circles of ``graph``: its strongly connected components of
    more than one module (Tarjan's algorithm), each sorted."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(root):
        # Iterative, so a deep package cannot hit the recursion limit.
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


def test_no_two_modules_import_each_other():
    graph = import_graph()
    found = circles(graph)
    lines = []
    for circle in found:
        lines.append(" <-> ".join(circle))
        lines.extend(f"    {a} -> {b}" for a in circle for b in sorted(graph[a]) if b in circle)
    assert not found, (
        "import circles (move the function that needs the other module one level up or "
        "down, see CONTRIBUTING.md):\n" + "\n".join(lines)
    )


def test_the_circle_finder_finds_circles():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": {"e2"}, "e2": set()}
    assert circles(graph) == [["a", "b", "c"]]
    assert circles({"x": {"y"}, "y": {"x"}, "z": set()}) == [["x", "y"]]
    assert circles({"x": {"y"}, "y": set()}) == []


def test_the_graph_sees_imports_inside_functions(tmp_path):
    package = tmp_path / PACKAGE
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("def f():\n    from keras_seqmodels import b\n")
    (package / "b.py").write_text(
        "from . import a\n\n\ndef __getattr__(name):\n    from keras_seqmodels.c import x\n"
    )
    (package / "c.py").write_text("x = 1\n")
    modules = {
        f"{PACKAGE}{suffix}": str(package / file)
        for suffix, file in (("", "__init__.py"), (".a", "a.py"), (".b", "b.py"), (".c", "c.py"))
    }
    graph = import_graph(modules)
    assert graph[f"{PACKAGE}.a"] == {f"{PACKAGE}.b"}
    assert graph[f"{PACKAGE}.b"] == {f"{PACKAGE}.a", f"{PACKAGE}.c"}  # __getattr__ counts too
    assert circles(graph) == [[f"{PACKAGE}.a", f"{PACKAGE}.b"]]


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


def test_private_keras_and_tensorflow_only_in_compat():
    """``keras.src`` and ``tensorflow.python`` (private, unversioned) are
    imported by ``keras_seqmodels/_compat.py`` alone."""
    offenders = []
    for folder, _, files in os.walk(ROOT):
        for name in files:
            path = os.path.join(folder, name)
            if not name.endswith(".py") or path == os.path.join(ROOT, "_compat.py"):
                continue
            for module in _imports(path):
                if module.split(".")[:2] in (["keras", "src"], ["tensorflow", "python"]):
                    offenders.append(f"{os.path.relpath(path, ROOT)}: {module}")
    assert not offenders, "private imports outside _compat.py:\n" + "\n".join(offenders)
