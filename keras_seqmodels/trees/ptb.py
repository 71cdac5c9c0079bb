"""Penn-Treebank bracket parsing (the Stanford Sentiment Treebank format)."""

import re

from keras_seqmodels.data.lines import iter_lines
from keras_seqmodels.trees.tree import Tree, TreeError

_TOKEN = re.compile(r"\(|\)|[^\s()]+")


def parse_ptb(text):
    """Parse one bracketed tree, ``(label child ...)``, into a ``Tree``.

    Grammar: ``node := "(" [label] (word+ | node+) ")"``. A node whose content
    is words is a leaf carrying them as one token (SST has a few, such as
    ``(2 8 1\\/2)``); otherwise its content is one or more sub-trees. A
    label (the first token after ``(`` when more follows) is kept on the
    node: an ``int`` when it is one (SST: 0-4), else a string. Nodes are
    numbered in pre-order (the root is node 0), which is also the
    order of their opening brackets.

    Args:
        text: one bracketed tree.

    Returns:
        A ``Tree`` with ``tokens`` on the leaves and ``labels`` on every node.

    Raises:
        TreeError: unbalanced brackets (with the character position), an empty
            node ``()`` or a node with a label and nothing else (a missing
            child), words mixed with sub-trees, text outside the brackets.

    Example:

    >>> t = parse_ptb("(3 (2 good) (4 fun))")
    >>> t.labels, t.tokens
    ([3, 2, 4], [None, 'good', 'fun'])
    """
    children, tokens, labels, words = [], [], [], []
    stack = []
    finished = False
    for match in _TOKEN.finditer(text):
        tok, pos = match.group(), match.start()
        if finished:
            raise TreeError(
                f"parse_ptb: unbalanced brackets: text after the closing bracket "
                f"of the root at position {pos}: {text[pos:pos + 20]!r}"
            )
        if tok == "(":
            node = len(children)
            if stack:
                parent = stack[-1]
                if len(words[parent]) > 1:
                    raise TreeError(
                        f"parse_ptb: node at position {pos} follows two words "
                        f"{words[parent]} inside one node; a node holds a label "
                        "and then one word or sub-trees"
                    )
                children[parent].append(node)
            children.append([])
            tokens.append(None)
            labels.append(None)
            words.append([])
            stack.append(node)
        elif tok == ")":
            if not stack:
                raise TreeError(
                    f"parse_ptb: unbalanced brackets: ')' at position {pos} "
                    "closes no open bracket"
                )
            node = stack.pop()
            _close(node, pos, children, tokens, labels, words)
            if not stack:
                finished = True
        else:
            if not stack:
                raise TreeError(
                    f"parse_ptb: text outside brackets at position {pos}: {tok!r}"
                )
            node = stack[-1]
            if children[node]:
                raise TreeError(
                    f"parse_ptb: word {tok!r} at position {pos} follows sub-trees "
                    "in the same node; a node holds one word or sub-trees"
                )
            words[node].append(tok)
    if stack:
        raise TreeError(
            f"parse_ptb: unbalanced brackets: {len(stack)} bracket(s) not closed "
            f"at the end of the text (length {len(text)})"
        )
    if not children:
        raise TreeError("parse_ptb: no tree in the text")
    return Tree(children, tokens=tokens, labels=labels)


def _close(node, pos, children, tokens, labels, words):
    ws = words[node]
    if children[node]:
        if len(ws) > 1:
            raise TreeError(
                f"parse_ptb: node closed at position {pos} has words before its "
                f"sub-trees: {ws}; only one label is allowed"
            )
        if ws:
            labels[node] = _label(ws[0])
        return
    if len(ws) >= 2:
        # SST has a few multi-word leaves such as "(2 8 1\/2)": one token.
        labels[node] = _label(ws[0])
        tokens[node] = " ".join(ws[1:])
    elif len(ws) == 1:
        raise TreeError(
            f"parse_ptb: missing child: node closed at position {pos} has only "
            f"{ws[0]!r} (a label with no word or sub-tree)"
        )
    else:
        raise TreeError(
            f"parse_ptb: missing child: empty node '()' closed at position {pos}"
        )


def _label(text):
    try:
        return int(text)
    except ValueError:
        return text


def read_ptb_file(path, limit=None):
    """Parse a file with one bracketed tree per line (blank lines skipped).

    Errors name the file and line.

    Args:
        path: a UTF-8 text file (e.g. ``sst/dev.txt``).
        limit: read at most this many trees (default all).

    Returns:
        A list of ``Tree``.

    Example:

    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "trees.txt")
    >>> _ = open(path, "w").write("(3 (2 good) (4 fun))\\n\\n(1 (1 dull))\\n")
    >>> [t.labels[t.root] for t in read_ptb_file(path)]
    [3, 1]
    """
    trees = []
    for lineno, line in enumerate(iter_lines(path), 1):  # "\n" ends a line, nothing else
        if not line.strip():
            continue
        try:
            trees.append(parse_ptb(line))
        except TreeError as err:
            raise TreeError(f"{path}:{lineno}: {err}") from None
        if limit is not None and len(trees) >= limit:
            break
    return trees
