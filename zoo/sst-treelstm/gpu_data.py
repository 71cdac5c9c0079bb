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
sentences); and ``words.json``, the vocabulary.
"""

import argparse
import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import recipe  # noqa: E402


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


def corpus(train_trees, words, ptb_path):
    index = {w: i + 1 for i, w in enumerate(words)}
    sentences = [[t for t in tree.tokens if t is not None] for tree in train_trees]
    if os.path.isfile(ptb_path):
        with open(ptb_path) as f:
            sentences += [line.split() for line in f]
    out = []
    for sent in sentences:
        out.extend(index[t] for t in sent if t in index and t != "")
        out.append(-1)
    return np.array(out, np.int32)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="sst-treelstm gpu_data")
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--out", default=os.path.join(recipe.REPO, "runs", "gpu", recipe.NAME))
    args = parser.parse_args(argv)
    data_dir = recipe.resolve_data_dir(args.data_dir)
    splits = {s: recipe.load_split(data_dir, s) for s in ("train", "dev")}
    words = recipe.build_vocabulary(splits["train"])
    arrays = {}
    for split, trees in splits.items():
        for key, value in tree_arrays(trees, words).items():
            arrays[f"{split}_{key}"] = value
    arrays["corpus"] = corpus(splits["train"], words, os.path.join(
        os.path.dirname(data_dir.rstrip("/")), "ptb", "ptb.train.txt"))
    os.makedirs(args.out, exist_ok=True)
    np.savez_compressed(os.path.join(args.out, "sst_arrays.npz"), **arrays)
    with open(os.path.join(args.out, "words.json"), "w") as f:
        json.dump(words, f)
    print({k: v.shape for k, v in arrays.items()})
    return 0


if __name__ == "__main__":
    sys.exit(main())
