"""Sentences and bracketed trees as the sentiment tree models read them.

``text_to_tree`` turns one input (a bracketed PTB/SST tree, or plain text
given PTB-style tokens and a balanced binary tree) into a ``Tree``;
``label_names`` names a tree classifier's classes. The zoo's sentiment
task, ``TreeClassifier`` and ``seqmodels sentiment`` all read input through
these.
"""

import re

SST_LABELS = ("very negative", "negative", "neutral", "positive", "very positive")

# PTB-style tokens: "don't" -> "do n't", "film's" -> "film 's", punctuation
# on its own, hyphenated words kept whole, -LRB- style brackets kept.
_TOKEN = re.compile(
    r"-[LR][RSC]B-|\w+(?=n't\b)|n't\b|'(?:s|re|ve|ll|d|m)\b|\w+(?:[-.]\w+)*|\.\.\.|--"
    r"|[^\w\s]",
    re.IGNORECASE,
)
_PTB_BRACKETS = {"(": "-LRB-", ")": "-RRB-", "[": "-LSB-", "]": "-RSB-",
                 "{": "-LCB-", "}": "-RCB-"}


def tokenize(text):
    """PTB-style tokens of plain text (the Stanford Sentiment Treebank's form).

    Clitics split off (``"don't"`` -> ``["do", "n't"]``), punctuation becomes
    its own token and brackets become ``-LRB-`` / ``-RRB-`` as in the treebank.

    Args:
        text: a sentence.

    Returns:
        A list of token strings (empty for blank text).

    Example:

    >>> tokenize("It isn't (really) bad.")
    ['It', 'is', "n't", '-LRB-', 'really', '-RRB-', 'bad', '.']
    """
    return [_PTB_BRACKETS.get(t, t) for t in _TOKEN.findall(text)]


def text_to_tree(text, input_format="auto"):
    """The tree the sentiment model reads for one input line.

    Args:
        text: a bracketed tree (``"(3 (2 good) (4 fun))"``) or plain text.
        input_format: ``"auto"`` (a line starting with ``(`` is a tree),
            ``"tree"`` or ``"text"``.

    Returns:
        A ``keras_seqmodels.trees.Tree``: the parsed tree, or a balanced binary
        tree over the tokens of plain text.

    Raises:
        keras_seqmodels.trees.TreeError: a malformed tree (with the character
            position) or text with no token.

    Example:

    >>> len(text_to_tree("a fine , funny film").leaves)
    5
    """
    from keras_seqmodels.trees.balanced import balanced_tree
    from keras_seqmodels.trees.ptb import parse_ptb
    from keras_seqmodels.trees.tree import TreeError

    stripped = text.strip()
    if input_format == "tree" or (input_format == "auto" and stripped.startswith("(")):
        return parse_ptb(stripped)
    tokens = tokenize(stripped)
    if not tokens:
        raise TreeError("no word in the text")
    return balanced_tree(len(tokens), tokens)


def label_names(classes):
    """Names of a tree classifier's classes: SST's five, else ``"0"``, ``"1"``, ...

    Args:
        classes: number of classes of the model's output.

    Returns:
        A list of ``classes`` strings.

    Example:

    >>> label_names(5)[0], label_names(2), label_names(3)
    ('very negative', ['negative', 'positive'], ['0', '1', '2'])
    """
    if classes == len(SST_LABELS):
        return list(SST_LABELS)
    if classes == 2:
        return ["negative", "positive"]
    return [str(i) for i in range(classes)]
