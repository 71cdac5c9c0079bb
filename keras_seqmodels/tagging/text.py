"""Raw sentences through a string tagger: the tokens and their tags.

A string tagger (``train_tagger``'s model, the zoo's UPOS tagger) takes
a ``(batch,)`` string tensor of space-separated tokens and returns one tag
string per token. ``tag_sentences`` tokenises raw text the way the zoo's
training data is (``keras_seqmodels.data.tokenize``) and pairs each token
with its tag; ``seqmodels tag`` and the zoo task both call it.
"""


def tag_sentences(model, sentences, pretokenized=False):
    """One list of ``(token, tag)`` pairs per non-blank sentence.

    Args:
        model: a string tagger (a Keras model taking a string ``(batch,)``
            of space-separated tokens and returning tag strings).
        sentences: strings of raw text, or of whitespace-separated tokens
            with ``pretokenized``.
        pretokenized: split on whitespace only.

    Returns:
        A list with one entry per non-blank sentence (blank ones are left
        out), each a list of ``(token, tag)`` pairs.

    Raises:
        ValueError: the tagger gave a token no tag (the sentence and token
            named); a tag is never empty.
    """
    import numpy as np

    from keras_seqmodels.data.tokenize import tokenize
    from keras_seqmodels.utils.calling import call_model

    rows = [s.split() if pretokenized else tokenize(s) for s in sentences if s.strip()]
    if not rows:
        return []
    tags = np.asarray(call_model(model, np.array([" ".join(r) for r in rows], dtype=object)))
    out = []
    for number, (tokens, row) in enumerate(zip(rows, tags), 1):
        pairs = list(zip(tokens, [t.decode("utf-8") for t in row[: len(tokens)]]))
        bad = [token for token, tag in pairs if not tag] + tokens[len(pairs) :]
        if bad:  # a tag is never empty: a token the model dropped is an error
            raise ValueError(
                f"tag_sentences: sentence {number} (non-blank): the tagger gave no tag to "
                f"the token {bad[0]!r}; remove control characters from the text"
            )
        out.append(pairs)
    return out
