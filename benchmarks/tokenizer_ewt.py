"""How closely `seqmodels tag`'s tokenizer matches UD English EWT's tokens.

    python benchmarks/tokenizer_ewt.py [--data-dir ../shared/data] [--split dev]

Tokenises the raw text of each sentence (its ``# text =`` line) with
``keras_seqmodels.data.tokenize.tokenize`` and with a whitespace split, and
compares the tokens with the treebank's syntactic words (the integer-id rows):
the share of sentences split exactly as the treebank does, and token precision,
recall and F1 (a token is right when its character span, spaces removed,
matches a word's). Use dev: the test split is kept for the tagger's card.
"""

import argparse
import os

from keras_seqmodels.data.tokenize import tokenize


def sentences(path):
    """``(raw text, [words])`` of each sentence of a CoNLL-U file."""
    text, words = None, []
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("# text = "):
                text = line[len("# text = "):]
            elif not line:
                if text is not None:
                    yield text, words
                text, words = None, []
            elif not line.startswith("#"):
                cols = line.split("\t")
                if cols[0].isdigit():
                    words.append(cols[1])


def spans(tokens):
    out, pos = set(), 0
    for t in tokens:
        out.add((pos, pos + len(t)))
        pos += len(t)
    return out


def score(pairs, split):
    exact = right = predicted = gold_total = 0
    for text, gold in pairs:
        tokens = split(text)
        exact += tokens == gold
        predicted += len(tokens)
        gold_total += len(gold)
        if "".join(tokens) == "".join(gold):  # else (words not in the text) no credit
            right += len(spans(tokens) & spans(gold))
    p, r = right / predicted, right / gold_total
    return exact / len(pairs), p, r, 2 * p * r / (p + r)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default="../shared/data")
    parser.add_argument("--split", default="dev", choices=["train", "dev", "test"])
    args = parser.parse_args(argv)
    path = os.path.join(args.data_dir, "ud_english_ewt", f"en_ewt-ud-{args.split}.conllu")
    pairs = list(sentences(path))
    print(f"UD English EWT {args.split}: {len(pairs)} sentences")
    for name, split in (("tokenize", tokenize), ("whitespace", str.split)):
        exact, p, r, f1 = score(pairs, split)
        print(f"{name:10s}  exact sentences {exact:.1%}  precision {p:.2%}  "
              f"recall {r:.2%}  F1 {f1:.2%}")


if __name__ == "__main__":
    main()
