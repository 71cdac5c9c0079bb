"""Print the README's zoo table, or one model's facts, from the model index.

    python tools/zoo_table.py               # the Markdown table of every model
    python tools/zoo_table.py --facts NAME  # domain, intended use, limits, license
    python tools/zoo_table.py --write-readme  # put both into README.md

The README holds this output verbatim between ``<!-- zoo-table -->`` markers
and after each model's first example; ``tests/docs/test_zoo_table.py`` checks
that it still equals what this script prints from
``keras_seqmodels/zoo/index.json``. After changing the index, run it with
``--write-readme``.
"""

import argparse
import json
import os
import re

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
INDEX = os.path.join(ROOT, "keras_seqmodels", "zoo", "index.json")


def load_index(path=INDEX):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


_WORDS = {"bleu": "BLEU", "oov": "OOV", "upos": "UPOS", "beam5": "beam 5"}


def _metric(key, value):
    """``test_upos_accuracy, 0.9558`` -> ``UPOS accuracy: 95.58%``."""
    words = key.removeprefix("test_").split("_")
    label = " ".join(_WORDS.get(w, w) for w in words)
    if "accuracy" in words and isinstance(value, float) and value <= 1:
        return f"{label}: {100 * value:.2f}%"
    if words[-1] == "percent" and isinstance(value, float):
        return f"{label.removesuffix(' percent')}: {value:g}%"
    return f"{label}: {round(value, 4) if isinstance(value, float) else value}"


def metrics_text(entry):
    """The entry's test metrics (per-task tables and example counts stay in the card)."""
    return "; ".join(
        _metric(k, v)
        for k, v in entry.get("metrics", {}).items()
        if not isinstance(v, dict) and not k.endswith("examples")
    )


def table(index):
    lines = [
        "| model | task | test results | size | card |",
        "|---|---|---|---:|---|",
    ]
    for name in sorted(index):
        entry = index[name]
        size = f"{entry.get('size_bytes', 0) / 1e6:.1f} MB"
        card = entry.get("card", "")
        lines.append(
            f"| `{name}` | {_md(entry.get('task', ''))} | {_md(metrics_text(entry))} | {size} "
            f"| [card]({card}) |"
        )
    return "\n".join(lines)


def _md(text):
    """Text for Markdown: ``<unk>`` would be read as an HTML tag."""
    return str(text).replace("<", "&lt;")


def facts(index, name):
    entry = {k: _md(v) for k, v in index[name].items() if isinstance(v, str)}
    return "\n".join(
        [
            f"> **`{name}`** — domain: {entry.get('domain', 'not stated')}.",
            f"> Intended use: {entry.get('intended_use', 'not stated')}.",
            f"> Known limits: {entry.get('limits', 'not stated')}.",
            f"> Training data license: {entry.get('license', 'not stated')}.",
        ]
    )


def write_readme(index, path=None):
    """Replace the table and every model's facts block in ``path`` (README.md)."""
    path = path or os.path.join(ROOT, "README.md")
    with open(path, encoding="utf-8") as f:
        text = f.read()
    text, found = re.subn(
        r"(<!-- zoo-table[^>]*-->\n).*?(\n<!-- /zoo-table -->)",
        lambda m: m.group(1) + table(index) + m.group(2),
        text,
        flags=re.S,
    )
    if not found:
        raise SystemExit(f"{path} has no <!-- zoo-table --> ... <!-- /zoo-table --> block")
    for name in index:
        pattern = r"> \*\*`" + re.escape(name) + r"`\*\* — .*?(?=\n\n|\Z)"
        text = re.sub(pattern, lambda m, n=name: facts(index, n), text, flags=re.S)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--facts", metavar="NAME", help="print one model's facts instead")
    parser.add_argument("--write-readme", action="store_true", help="update README.md")
    args = parser.parse_args(argv)
    index = load_index()
    if args.write_readme:
        write_readme(index)
    elif args.facts:
        if args.facts not in index:
            parser.error(f"unknown model {args.facts!r}; known: {', '.join(sorted(index))}")
        print(facts(index, args.facts))
    else:
        print(table(index))


if __name__ == "__main__":
    main()
