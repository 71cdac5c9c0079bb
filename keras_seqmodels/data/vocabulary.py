"""One way to turn training tokens into a word list: count, filter, order, cut.

Every vocabulary of the package (trees, seq2seq, language model, bAbI, the
zoo's models) is this count with its own settings; the word list's index
of a word is its id, so the order is part of a saved model.
"""

import collections
import numbers

ORDERS = ("count", "count_first_seen", "alphabetical")


def build_vocabulary(tokens, *, min_count=1, max_size=None, reserved=(), order="count"):
    """``reserved``, then the tokens seen at least ``min_count`` times, in ``order``.

    A token equal to a reserved one is not counted as a word: each reserved
    token appears once, where ``reserved`` puts it.

    Args:
        tokens: an iterable of hashable tokens (strings), read once.
        min_count: fewest occurrences of a kept token.
        max_size: most entries in all, ``reserved`` included (the rarest
            words are cut); ``None`` for no limit.
        reserved: tokens that come first, in this order (padding, ``<unk>``,
            the empty token of tree nodes...).
        order: ``"count"``: decreasing count, ties alphabetically;
            ``"count_first_seen"``: decreasing count, ties in the order
            they first appear (``collections.Counter.most_common``);
            ``"alphabetical"``: sorted, the counts only filter.

    Returns:
        A new list: ``reserved`` then the kept words.

    Raises:
        ValueError: ``order`` unknown, ``min_count`` not a number, or
            ``max_size`` not an integer at least ``len(reserved)``.

    Example:

    >>> build_vocabulary("b a c a b d".split(), min_count=2, reserved=("<unk>",))
    ['<unk>', 'a', 'b']
    >>> build_vocabulary("b a c a b d".split(), order="count_first_seen")
    ['b', 'a', 'c', 'd']
    """
    reserved = list(reserved)
    if order not in ORDERS:
        raise ValueError(
            f"build_vocabulary: `order` must be one of {list(ORDERS)}. Received: order={order!r}"
        )
    if not isinstance(min_count, numbers.Real):
        raise ValueError(
            f"build_vocabulary: `min_count` must be a number. Received: min_count={min_count!r}"
        )
    if max_size is not None and (
        not isinstance(max_size, numbers.Integral) or max_size < len(reserved)
    ):
        raise ValueError(
            "build_vocabulary: `max_size` must be None or an integer >= "
            f"len(reserved) = {len(reserved)}. Received: max_size={max_size!r}"
        )
    counts = collections.Counter(tokens)
    skip = set(reserved)
    kept = [w for w, c in counts.items() if c >= min_count and w not in skip]
    if order == "count":
        kept.sort(key=lambda w: (-counts[w], w))
    elif order == "count_first_seen":
        kept.sort(key=lambda w: -counts[w])  # stable: ties keep first-seen order
    else:
        kept.sort()
    if max_size is not None:
        kept = kept[: max_size - len(reserved)]
    return reserved + kept
