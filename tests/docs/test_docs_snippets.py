"""Every ```python snippet in README.md and docs/*.md runs as written, and
prints what the page says it prints.

A snippet that prints is followed on its page by an ```output block: the
text it prints, compared as doctest compares (``...`` stands for any text,
runs of whitespace are equal). Printed values that change from run to run
(timings) are written as ``...``; the rest is checked.
"""

import contextlib
import doctest
import functools
import glob
import io
import os
import re

import pytest

from keras_seqmodels import zoo

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FILES = [os.path.join(ROOT, "README.md")] + sorted(glob.glob(os.path.join(ROOT, "docs", "*.md")))
BLOCK = re.compile(r"```python\n(.*?)```(?:\s*```output\n(.*?)```)?", re.S)


def snippets():
    for path in FILES:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        for i, match in enumerate(BLOCK.finditer(text)):
            code, output = match.group(1), match.group(2)
            yield pytest.param(code, output, id=f"{os.path.relpath(path, ROOT)}#{i}")


SNIPPETS = list(snippets())


_cached_load = functools.lru_cache(maxsize=None)(zoo.load)


def test_docs_have_snippets():
    assert len(SNIPPETS) > 0


def test_every_snippet_that_prints_shows_its_output():
    missing = [p.id for p in SNIPPETS if "print(" in p.values[0] and p.values[1] is None]
    assert not missing, f"snippets that print with no ```output block after them: {missing}"


@pytest.mark.tf_only
@pytest.mark.parametrize("code, output", SNIPPETS)
def test_snippet_runs(code, output, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    # Each zoo model is loaded (and its SHA-256 checked) once for all the
    # snippets, as one user session keeps it, not once per snippet; the
    # translator's compiled search is then traced once.
    monkeypatch.setattr(zoo, "load", _cached_load)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(code, "<snippet>", "exec"), {"__name__": "__snippet__"})
    if output is None:
        return
    checker = doctest.OutputChecker()
    flags = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
    got = printed.getvalue()
    assert checker.check_output(output, got, flags), (
        f"the page says it prints:\n{output}\nit printed:\n{got}"
    )
