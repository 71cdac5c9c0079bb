"""Print the zoo table (Markdown) from keras_seqmodels/zoo/index.json."""

import json
import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main():
    with open(os.path.join(ROOT, "keras_seqmodels", "zoo", "index.json")) as f:
        index = json.load(f)
    print("| model | task | test metrics | size | card |")
    print("|---|---|---|---:|---|")
    for name in sorted(index):
        entry = index[name]
        metrics = ", ".join(
            f"{k} = {round(v, 4) if isinstance(v, float) else v}"
            for k, v in entry.get("metrics", {}).items()
            if not isinstance(v, dict)  # per-task tables stay in the card
        )
        size = f"{entry.get('size_bytes', 0) / 1e6:.1f} MB"
        card = entry.get("card", "")
        print(f"| `{name}` | {entry.get('task', '')} | {metrics} | {size} | {card} |")


if __name__ == "__main__":
    main()
