"""``seqmodels zoo list`` and ``seqmodels zoo info NAME``.

Both read the zoo's index only: no Keras or TensorFlow import, so they answer
in well under a second.
"""

import json
import shutil
import textwrap

MAX_WIDTH = 100  # columns of `zoo list` and `zoo info`, whatever the terminal
# The card's fields that `zoo info` shows first, in this order, with a label.
CARD_FIELDS = (
    ("task", "task"),
    ("domain", "domain"),
    ("intended_use", "intended use"),
    ("limits", "known limits"),
    ("license", "license"),
    ("data", "data"),
    ("metrics", "test metrics"),
    ("command", "measured with"),
    ("card", "model card"),
)


def _width():
    return max(60, min(MAX_WIDTH, shutil.get_terminal_size((MAX_WIDTH, 24)).columns))


def _short(text, width):
    """``text`` cut to ``width`` characters: before its first parenthesis when
    that is enough, else with a trailing "..."."""
    text = " ".join(str(text).split())
    if len(text) <= width:
        return text
    head = text.split(" (")[0]
    if len(head) <= width:
        return head
    return text[: width - 3].rstrip() + "..."


def _metrics(entry):
    # Scalars only: a per-task breakdown stays in `zoo info NAME`.
    return ", ".join(
        f"{k}={v:.4g}" for k, v in entry.get("metrics", {}).items()
        if isinstance(v, (int, float)) and not isinstance(v, bool)
    )


def list_table(entries, width=MAX_WIDTH):
    """The lines of ``zoo list``: name, size, task and test metrics, the last
    two wrapped so that no line is longer than ``width``.

    Args:
        entries: ``{name: index entry}``.
        width: the longest line allowed (at least 60).

    Returns:
        A list of strings.

    Example:

    >>> list_table({"m": {"task": "tagging", "metrics": {"acc": 0.9}, "size_bytes": 2e6}})
    ['name  size    task     test metrics', 'm     2.0 MB  tagging  acc=0.9']
    """
    header = ("name", "size", "task", "test metrics")
    names = sorted(entries)
    rows = [header] + [
        (n, f"{entries[n].get('size_bytes', 0) / 1e6:.1f} MB",
         " ".join(str(entries[n].get("task", "")).split()), _metrics(entries[n]))
        for n in names
    ]
    name_w = max(len(r[0]) for r in rows)
    size_w = max(len(r[1]) for r in rows)
    rest = max(40, width - name_w - size_w - 6)
    # The task gets up to 40% of what is left, the metrics the rest.
    task_w = max(len(header[2]), min(max(len(r[2]) for r in rows), rest * 2 // 5))
    metrics_w = rest - task_w
    lines = []
    for row in rows:
        task = textwrap.wrap(row[2], task_w, break_on_hyphens=False) or [""]
        metrics = textwrap.wrap(
            row[3], metrics_w, break_on_hyphens=False, break_long_words=False
        ) or [""]
        for k in range(max(len(task), len(metrics))):
            cells = (row[0] if k == 0 else "", row[1] if k == 0 else "",
                     task[k] if k < len(task) else "", metrics[k] if k < len(metrics) else "")
            lines.append(f"{cells[0]:<{name_w}}  {cells[1]:<{size_w}}  "
                         f"{cells[2]:<{task_w}}  {cells[3]}".rstrip())
    return lines


def info_lines(name, entry, width=MAX_WIDTH):
    """The lines of ``zoo info NAME``: the card's fields, labelled and wrapped.

    The task, domain, intended use, known limits and license come first (when
    the index has them), then the data, test metrics, the command that
    measured them, and every other field of the index entry.
    """
    labels = [label for key, label in CARD_FIELDS if key in entry] + [
        key.replace("_", " ") for key in entry if key not in dict(CARD_FIELDS)
    ]
    label_w = min(24, max(len(label) for label in labels)) if labels else 0
    lines = [name]
    shown = set()

    def add(label, value):
        if isinstance(value, dict):
            value = ", ".join(f"{k}={v}" for k, v in value.items()) if value else "-"
        elif isinstance(value, list):
            value = ", ".join(str(v) for v in value)
        wrapped = textwrap.wrap(
            str(value), width - label_w - 4, break_on_hyphens=False, break_long_words=True
        ) or [""]
        lines.append(f"  {label:<{label_w}}  {wrapped[0]}")
        lines.extend(" " * (label_w + 4) + more for more in wrapped[1:])

    for key, label in CARD_FIELDS:
        if key in entry:
            add(label, entry[key])
            shown.add(key)
    for key in sorted(entry):
        if key not in shown:
            add(key.replace("_", " "), entry[key])
    return [line.rstrip() for line in lines]


def _list(args):
    from keras_seqmodels import zoo

    names = zoo.list_models()
    if not names:
        print("(the zoo is empty)")
        return
    for line in list_table({name: zoo.info(name) for name in names}, _width()):
        print(line)


def _info(args):
    from keras_seqmodels import zoo

    entry = zoo.info(args.name)
    if args.json:
        print(json.dumps(entry, indent=2, sort_keys=True))
        return
    for line in info_lines(args.name, entry, _width()):
        print(line)


def register(subparsers):
    parser = subparsers.add_parser("zoo", help="list the zoo or show a model card")
    sub = parser.add_subparsers(dest="zoo_command", metavar="ZOO_COMMAND")
    sub.required = True
    p_list = sub.add_parser("list", help="name, task, size and test metrics of each model")
    p_list.set_defaults(func=_list)
    p_info = sub.add_parser(
        "info",
        help="a model's card: task, domain, intended use, known limits, license, metrics",
    )
    p_info.add_argument("name")
    p_info.add_argument("--json", action="store_true", help="the index entry as JSON")
    p_info.set_defaults(func=_info)
