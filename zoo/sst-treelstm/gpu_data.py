"""Export SST as integer arrays for the JAX trainer (``train_jax.py``).

    python zoo/sst-treelstm/gpu_data.py [--data-dir D] [--out runs/gpu/sst-treelstm]

Writes ``sst_arrays.npz``: for each split, the nodes of all trees concatenated
(``{split}_ids`` token ids as the artifact's ``StringLookup`` numbers them:
0 out-of-vocabulary, ``i + 1`` for ``words[i]``, 1 for internal nodes ``""``;
``{split}_children (n, 2)`` within-tree indices; ``{split}_levels``;
``{split}_labels``) and ``{split}_offsets`` (tree ``t`` is nodes
``offsets[t]:offsets[t + 1]``); ``corpus``, unlabelled text for the optional
skip-gram pre-training of the embeddings (the SST *train* sentences and the
PTB language-model *train* text, ``../shared/data/ptb/ptb.train.txt``, as ids
of the same vocabulary, out-of-vocabulary words dropped, ``-1`` between
sentences, plus any ``--extra-text`` files); and ``words.json``, the
vocabulary.
"""

import argparse
import importlib.util
import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def _load_recipe():
    # By path, under its own name: a bare `import recipe` returns whichever
    # zoo recipe this process imported first.
    spec = importlib.util.spec_from_file_location(
        "sst_treelstm_recipe", os.path.join(HERE, "recipe.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


recipe = _load_recipe()


def tree_arrays(trees, words):
    from keras_seqmodels.trees import encode_tree

    index = {w: i + 1 for i, w in enumerate(words)}
    parts = {"ids": [], "children": [], "levels": [], "labels": []}
    offsets = [0]
    for tree in trees:
        e = encode_tree(tree, arity=2)
        parts["ids"].append(np.array([index.get(str(t), 0) for t in e["tokens"]], np.int32))
        parts["children"].append(e["children"])
        parts["levels"].append(e["levels"].astype(np.int32))
        parts["labels"].append(e["labels"])
        offsets.append(offsets[-1] + len(tree))
    out = {k: np.concatenate(v) for k, v in parts.items()}
    out["offsets"] = np.array(offsets, np.int64)
    return out


def text_sentences(path):
    """Lower-cased token lists of a text file: a ``.conllu`` file's FORM
    column (one list per sentence), else whitespace tokens per line."""
    with open(path, encoding="utf-8") as f:
        if not path.endswith(".conllu"):
            return [line.lower().split() for line in f]
        out, sent = [], []
        for line in f:
            cols = line.rstrip("\n").split("\t")
            if len(cols) == 10 and cols[0].isdigit():  # not ranges 1-2 or empty nodes 1.1
                sent.append(cols[1].lower())
            elif not line.strip() and sent:
                out.append(sent)
                sent = []
        return out + ([sent] if sent else [])


def corpus(train_trees, words, ptb_path, extra=()):
    index = {w: i + 1 for i, w in enumerate(words)}
    sentences = [[t for t in tree.tokens if t is not None] for tree in train_trees]
    if os.path.isfile(ptb_path):
        with open(ptb_path) as f:
            sentences += [line.split() for line in f]
    for path in extra:
        sentences += text_sentences(path)
    out = []
    for sent in sentences:
        out.extend(index[t] for t in sent if t in index and t != "")
        out.append(-1)
    return np.array(out, np.int32)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="sst-treelstm gpu_data")
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--out", default=os.path.join(recipe.REPO, "runs", "gpu", recipe.NAME))
    parser.add_argument("--extra-text", nargs="*", default=[],
                        help="more unlabelled text for the skip-gram corpus (.conllu: "
                        "the FORM column; else whitespace tokens per line); train splits only")
    args = parser.parse_args(argv)
    data_dir = recipe.resolve_data_dir(args.data_dir)
    splits = {s: recipe.load_split(data_dir, s) for s in ("train", "dev")}
    words = recipe.build_vocabulary(splits["train"])
    arrays = {}
    for split, trees in splits.items():
        for key, value in tree_arrays(trees, words).items():
            arrays[f"{split}_{key}"] = value
    arrays["corpus"] = corpus(splits["train"], words, os.path.join(
        os.path.dirname(data_dir.rstrip("/")), "ptb", "ptb.train.txt"), args.extra_text)
    os.makedirs(args.out, exist_ok=True)
    np.savez_compressed(os.path.join(args.out, "sst_arrays.npz"), **arrays)
    with open(os.path.join(args.out, "words.json"), "w") as f:
        json.dump(words, f)
    print({k: v.shape for k, v in arrays.items()})
    return 0


if __name__ == "__main__":
    sys.exit(main())
