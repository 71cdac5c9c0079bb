"""``seqmodels zoo list`` and ``seqmodels zoo info NAME``."""

import json


def _list(args):
    from keras_seqmodels import zoo

    names = zoo.list_models()
    if not names:
        print("(the zoo is empty)")
        return
    rows = []
    for name in names:
        entry = zoo.info(name)
        # Scalars only: a per-task breakdown stays in `zoo info NAME`.
        metrics = ", ".join(
            f"{k}={v:.4g}" for k, v in entry.get("metrics", {}).items()
            if isinstance(v, (int, float))
        )
        size = f"{entry.get('size_bytes', 0) / 1e6:.1f} MB"
        rows.append((name, entry.get("task", ""), metrics, size))
    widths = [
        max(len(r[i]) for r in rows + [("name", "task", "test metrics", "size")]) for i in range(4)
    ]
    header = ("name", "task", "test metrics", "size")
    for row in [header] + rows:
        print("  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip())


def _info(args):
    from keras_seqmodels import zoo

    print(json.dumps(zoo.info(args.name), indent=2, sort_keys=True))


def register(subparsers):
    parser = subparsers.add_parser("zoo", help="list the zoo or show a model card")
    sub = parser.add_subparsers(dest="zoo_command", metavar="ZOO_COMMAND")
    sub.required = True
    p_list = sub.add_parser("list", help="name, task, test metric and size of each model")
    p_list.set_defaults(func=_list)
    p_info = sub.add_parser("info", help="a model's card as JSON")
    p_info.add_argument("name")
    p_info.set_defaults(func=_info)
