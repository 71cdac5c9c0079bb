"""Every ```python snippet in README.md and docs/*.md runs as written."""

import glob
import os
import re

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FILES = [os.path.join(ROOT, "README.md")] + sorted(glob.glob(os.path.join(ROOT, "docs", "*.md")))
BLOCK = re.compile(r"```python\n(.*?)```", re.S)


def snippets():
    for path in FILES:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        for i, match in enumerate(BLOCK.finditer(text)):
            code = match.group(1)
            yield pytest.param(code, id=f"{os.path.relpath(path, ROOT)}#{i}")


SNIPPETS = list(snippets())


def test_docs_have_snippets():
    assert len(SNIPPETS) > 0


@pytest.mark.tf_only
@pytest.mark.parametrize("code", SNIPPETS)
def test_snippet_runs(code, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    exec(compile(code, "<snippet>", "exec"), {"__name__": "__snippet__"})
