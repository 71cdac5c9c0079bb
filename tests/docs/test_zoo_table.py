"""The README's zoo table and model facts equal what tools/zoo_table.py prints."""

import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOOL = os.path.join(ROOT, "tools", "zoo_table.py")


def _readme():
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        return f.read()


def _tool(*args):
    result = subprocess.run(
        [sys.executable, TOOL, *args], capture_output=True, text=True, check=True, timeout=60
    )
    return result.stdout.rstrip("\n")


def _index():
    sys.path.insert(0, os.path.dirname(TOOL))
    try:
        import zoo_table
    finally:
        sys.path.remove(os.path.dirname(TOOL))
    return zoo_table.load_index()


def test_readme_table_is_the_generated_one():
    match = re.search(r"<!-- zoo-table[^>]*-->\n(.*?)\n<!-- /zoo-table -->", _readme(), re.S)
    assert match, "README.md lost its <!-- zoo-table --> markers"
    assert match.group(1) == _tool(), "run `python tools/zoo_table.py` and paste it into README.md"


def test_table_has_every_model_and_its_test_metrics():
    table = _tool()
    for name, entry in _index().items():
        row = next(line for line in table.splitlines() if line.startswith(f"| `{name}` |"))
        assert entry["task"] in row
        for key, value in entry["metrics"].items():
            if "accuracy" in key and isinstance(value, float):
                assert f"{100 * value:.2f}%" in row, (key, row)


def test_readme_gives_every_models_facts():
    readme = _readme()
    for name, entry in _index().items():
        facts = _tool("--facts", name)
        assert facts in readme, f"README.md lacks the facts of {name}: {facts}"
        for field in ("domain", "intended_use", "limits", "license"):
            assert entry[field].replace("<", "&lt;") in facts


def test_unknown_model_is_one_line():
    result = subprocess.run(
        [sys.executable, TOOL, "--facts", "no-such-model"], capture_output=True, text=True,
        timeout=60,
    )
    assert result.returncode == 2
    assert "unknown model 'no-such-model'" in result.stderr


def test_write_readme_restores_a_stale_table_and_facts(tmp_path):
    sys.path.insert(0, os.path.dirname(TOOL))
    try:
        import zoo_table
    finally:
        sys.path.remove(os.path.dirname(TOOL))
    readme = _readme()
    index = zoo_table.load_index()
    name = sorted(index)[0]
    stale = readme.replace(zoo_table.table(index), "| model |\n|---|\n| stale |")
    stale = stale.replace(zoo_table.facts(index, name), f"> **`{name}`** — domain: stale.")
    assert stale != readme
    path = tmp_path / "README.md"
    path.write_text(stale, encoding="utf-8")
    zoo_table.write_readme(zoo_table.load_index(), str(path))
    assert path.read_text(encoding="utf-8") == readme
