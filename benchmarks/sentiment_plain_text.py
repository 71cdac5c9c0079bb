"""How much `seqmodels sentiment` loses on plain text: treebank parse vs balanced tree.

    python benchmarks/sentiment_plain_text.py [--data-dir ../shared/data] [--split dev]

Scores the zoo's sst-treelstm model on the roots of one SST split twice: on the
treebank's own parses, and on the same sentences read as `seqmodels sentiment`
reads plain text (the leaves' words joined by spaces, tokenised again, and put
in a balanced binary tree). Prints fine-grained and binary root accuracy of each.
Use dev: the test split is kept for the model's card.
"""

import argparse
import os

import numpy as np


def root_accuracy(probs, gold):
    fine = float(np.mean(probs.argmax(1) == gold))
    keep = gold != 2
    positive = probs[:, 3:].sum(1) > probs[:, :2].sum(1)
    return fine, float(np.mean(positive[keep] == (gold[keep] > 2)))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default="../shared/data")
    parser.add_argument("--split", default="dev", choices=["train", "dev", "test"])
    parser.add_argument("--model", default="sst-treelstm")
    args = parser.parse_args(argv)

    from keras_seqmodels import zoo
    from keras_seqmodels.trees import read_ptb_file
    from keras_seqmodels.trees.serving import root_probabilities
    from keras_seqmodels.trees.text import text_to_tree

    trees = read_ptb_file(os.path.join(args.data_dir, "sst", f"{args.split}.txt"))
    gold = np.array([t.labels[t.root] for t in trees])
    sentences = [" ".join(t.tokens[i] for i in t.leaves) for t in trees]
    balanced = [text_to_tree(s, input_format="text") for s in sentences]
    model = zoo.load(args.model).model
    for name, batch in (("treebank parse", trees), ("balanced tree (plain text)", balanced)):
        fine, binary = root_accuracy(root_probabilities(model, batch), gold)
        print(f"{args.split} {name}: fine-grained {100 * fine:.1f}%, binary {100 * binary:.1f}% "
              f"({len(trees)} roots, {int((gold != 2).sum())} non-neutral)")


if __name__ == "__main__":
    main()
