"""How closely `seqmodels tag`'s tokenizer matches UD English EWT's tokens.

    python benchmarks/tokenizer_ewt.py [--data-dir ../shared/data] [--split dev]
    python benchmarks/tokenizer_ewt.py --tag [--split dev] [--served DIR] [--out FILE]
    python benchmarks/tokenizer_ewt.py --coverage [--split train] [--show N]

Tokenises the raw text of each sentence (its ``# text =`` line) with
``keras_seqmodels.data.tokenize.tokenize`` and with a whitespace split, and
compares the tokens with the treebank's syntactic words (the integer-id rows):
the share of sentences split exactly as the treebank does, and token precision,
recall and F1 (a token is right when its character span, spaces removed,
matches a word's). Use dev: the test split is kept for the tagger's card.

With ``--tag``, the zoo's UPOS tagger end to end: the gold words joined by
spaces go in as raw text (``ud-ewt-upos``'s task, which tokenises them), and a
gold word counts as right when one token covers it exactly and that token's
tag is the gold UPOS; printed with the share of words no token covers and the
accuracy on gold tokens (``pretokenized=True``) for comparison. ``--served
DIR`` scores a SavedModel written by ``seqmodels export ud-ewt-upos DIR``
instead of the task (its in-graph tokenizer). ``--out FILE`` also writes the
figures, with the raw-text token scores, the command, the date, the machine
and its load average, as JSON (``benchmarks/results/tokenizer_ewt_*.json``).

With ``--coverage``, the tokenizer alone (no tagger, seconds): the gold words
joined by spaces are tokenised as ``--tag`` does, and the gold words that no
token covers exactly are counted and listed (``--show N``: the N most frequent,
each with a sentence it is in), for finding conventions on train and dev.
"""

import argparse
import collections
import datetime
import json
import os
import sys

from machine import machine  # noqa: E402 (beside this script)

from keras_seqmodels.data.tokenize import tokenize


def sentences(path, with_tags=False):
    """``(raw text, [words])`` of each sentence of a CoNLL-U file
    (``(raw text, [words], [UPOS])`` with ``with_tags``)."""
    text, words, tags = None, [], []
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("# text = "):
                text = line[len("# text = "):]
            elif not line:
                if text is not None:
                    yield (text, words, tags) if with_tags else (text, words)
                text, words, tags = None, [], []
            elif not line.startswith("#"):
                cols = line.split("\t")
                if cols[0].isdigit():
                    words.append(cols[1])
                    tags.append(cols[3])


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


def covered(tokens, words):
    """For each word, the index of the token spanning exactly it, else None
    (spans counted without spaces)."""
    starts, pos = {}, 0
    for i, t in enumerate(tokens):
        starts[(pos, pos + len(t))] = i
        pos += len(t)
    out, pos = [], 0
    for w in words:
        out.append(starts.get((pos, pos + len(w))))
        pos += len(w)
    return out


def uncovered_words(pairs, split=tokenize):
    """``(words, [(gold word, tokens of its sentence, sentence)])`` for the
    gold words of ``pairs`` that no token of ``split`` applied to the words
    joined by spaces covers exactly."""
    total, missed = 0, []
    for _, words in pairs:
        text = " ".join(words)
        tokens = split(text)
        total += len(words)
        for w, index in zip(words, covered(tokens, words)):
            if index is None:
                missed.append((w, tokens, text))
    return total, missed


def tag_end_to_end(triples, served=None, batch=64):
    """``(right, uncovered, gold_right, words)`` for the zoo tagger on
    whitespace-joined gold words (see the module docstring)."""
    from keras_seqmodels import zoo

    task = zoo.load("ud-ewt-upos")
    texts = [" ".join(words) for _, words, _ in triples]
    if served is None:
        rows = []
        for i in range(0, len(texts), batch):
            part = texts[i : i + batch]
            rows += list(zip([task.tokenize(t) for t in part], task.predict(part)))
    else:
        import tensorflow as tf

        serve = tf.saved_model.load(served).signatures["serving_default"]
        rows = []
        for i in range(0, len(texts), batch):
            out = serve(text=tf.constant(texts[i : i + batch]))
            for toks, tags in zip(out["tokens"].numpy(), out["tags"].numpy()):
                toks = [t.decode("utf-8") for t in toks if t]
                rows.append((toks, [t.decode("utf-8") for t in tags[: len(toks)]]))
    gold_tags = []
    for i in range(0, len(texts), batch):
        gold_tags += task.predict(texts[i : i + batch], pretokenized=True)
    right = uncovered = gold_right = total = 0
    for (_, words, gold), (tokens, tags), on_gold in zip(triples, rows, gold_tags):
        for g, index, t in zip(gold, covered(tokens, words), on_gold):
            total += 1
            uncovered += index is None
            right += index is not None and tags[index] == g
            gold_right += t == g
    return right, uncovered, gold_right, total



def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default="../shared/data")
    parser.add_argument("--split", default="dev", choices=["train", "dev", "test"])
    parser.add_argument("--tag", action="store_true",
                        help="score the zoo's UPOS tagger end to end (see above)")
    parser.add_argument("--served", help="with --tag: a SavedModel of ud-ewt-upos to score")
    parser.add_argument("--out", help="with --tag: also write the figures to this JSON file")
    parser.add_argument("--coverage", action="store_true",
                        help="the tokenizer alone: gold words no token covers (see above)")
    parser.add_argument("--show", type=int, default=40,
                        help="with --coverage: list this many uncovered words (default 40)")
    args = parser.parse_args(argv)
    if args.out and not args.tag:
        parser.error("--out needs --tag")
    if args.coverage and args.tag:
        parser.error("--coverage and --tag are separate modes")
    load_start = os.getloadavg()[0]
    path = os.path.join(args.data_dir, "ud_english_ewt", f"en_ewt-ud-{args.split}.conllu")
    if args.tag:
        right, uncovered, gold_right, total = tag_end_to_end(
            list(sentences(path, with_tags=True)), args.served
        )
        source = f"served {args.served}" if args.served else "task"
        print(f"UD English EWT {args.split}: {total} words, tagger from raw text ({source})")
        print(f"UPOS end to end {right / total:.2%}  words no token covers {uncovered} "
              f"({uncovered / total:.2%})  UPOS on gold tokens {gold_right / total:.2%}")
        if args.out:
            exact, p, r, f1 = score(list(sentences(path)), tokenize)
            record = {
                "split": args.split,
                "source": source,
                "words": total,
                "upos_end_to_end": right / total,
                "words_uncovered": uncovered,
                "upos_gold_tokens": gold_right / total,
                "raw_text_tokens": {"sentences_exact": exact, "precision": p, "recall": r,
                                    "f1": f1},
                "command": "python benchmarks/tokenizer_ewt.py " + " ".join(sys.argv[1:]),
                "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
                "machine": machine(),
                "load_average_start_end": [round(load_start, 2), round(os.getloadavg()[0], 2)],
            }
            with open(args.out, "w", encoding="utf-8") as f:
                json.dump(record, f, indent=2)
                f.write("\n")
        return
    pairs = list(sentences(path))
    if args.coverage:
        total, missed = uncovered_words(pairs)
        print(f"UD English EWT {args.split}: {len(pairs)} sentences, {total} words; "
              f"{len(missed)} ({len(missed) / total:.2%}) no token covers "
              "(gold words joined by spaces)")
        counts = collections.Counter(w for w, _, _ in missed)
        example = {}
        for w, tokens, text in missed:
            example.setdefault(w, (tokens, text))
        for w, n in counts.most_common(args.show):
            tokens, text = example[w]
            near = [t for t in tokens if t in w or w in t][:6]
            print(f"{n:4d}  {w!r:30s} tokens near it: {near}")
        return
    print(f"UD English EWT {args.split}: {len(pairs)} sentences")
    for name, split in (("tokenize", tokenize), ("whitespace", str.split)):
        exact, p, r, f1 = score(pairs, split)
        print(f"{name:10s}  exact sentences {exact:.1%}  precision {p:.2%}  "
              f"recall {r:.2%}  F1 {f1:.2%}")


if __name__ == "__main__":
    main()
