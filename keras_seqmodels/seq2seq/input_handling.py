"""What a ``Translator`` does to raw text around the search, in TensorFlow ops.

A translation model trained on single, cased, in-domain sentences meets
paragraphs, shouted text, numbers, names and other languages. These
functions, run inside the ``Translator`` (and so inside its exported
SavedModel, stock TensorFlow string ops only), handle that:

- ``split_sentences``: each input becomes its sentences (split after
  ``. ! ?`` and closing quotes or brackets, followed by a space; not after
  common abbreviations such as ``Mr.``, ``Dr.``, ``St.``, a single letter
  but ``I`` or letters with dots, ``J.``, ``U.S.``, ``e.g.``); each is translated on
  its own and the results joined by a space.
- ``normalise_case``: a sentence the model never saw the like of, shouted
  (mostly capitals) or without any capital, is re-cased: each word takes
  the first of its lower-case, capitalised and upper-case forms that the
  training vocabulary has (``man``, ``John``, ``USA``; the capitalised form
  first for the sentence's first word), and words the vocabulary lacks are
  capitalised in shouted text (most are names) or as the first word, and
  lower-cased otherwise. Other sentences are left as they are.
- ``join_rows``: sentences' translations and signals back to one row per
  input.

- ``carry_through``: after the search, numbers and names the vocabulary
  lacks are copied from the source into the output words that attend to
  them, and the model's confidence and the words it lost are measured.

The ``Translator`` runs them in ``translate_details``.
"""

from keras_seqmodels.data.tokenize import RE2_SPACE
from keras_seqmodels.seq2seq import text as pieces_text

# No sentence ends after these (followed by "."), nor after a single letter
# but I, or letters with dots (J., U.S., e.g.).
ABBREVIATIONS = (
    "Mr", "Mrs", "Ms", "Dr", "Prof", "Sr", "Jr", "St", "Mt", "Ave", "Rd", "No", "vs",
    "etc", "approx", "ca", "Inc", "Ltd", "Co", "Corp",
)  # fmt: skip
# A sentence ends after one of . ! ? (a run of them), optionally closed by
# quotes or brackets, and a space. Spaces are one " " by then, so "\n" is
# free to mark the ends; an end after an abbreviation is unmarked again (RE2
# has no look-behind).
_END = "([.!?]+[\"'”’)\\]]*) "
_NOT_AN_END = "(^| |\n)((?:" + "|".join(ABBREVIATIONS) + "|[A-HJ-Za-z](?:\\.[A-Za-z])*)\\.)\n"
SHOUTED_MIN_CAPITALS = 4  # a shouted sentence has at least this many capitals...
SHOUTED_RATIO = 2  # ... and this many times as many capitals as small letters


def _tf():
    import tensorflow as tf

    return tf


def normalise_spaces(strings):
    """Every run of whitespace (``str.isspace``) to one space; ends stripped."""
    tf = _tf()
    return tf.strings.strip(tf.strings.regex_replace(strings, RE2_SPACE + "+", " "))


def split_sentences(strings):
    """``(batch,)`` texts to ragged ``(batch, None)`` sentences.

    Whitespace is normalised first (``normalise_spaces``), so joining a row's
    sentences with ``" "`` gives the normalised text back. A blank text gives
    one empty sentence, so every row has at least one.

    Example:

    >>> split_sentences(["A man rides. Two dogs play! Mr. Li waves."]).to_list()
    [[b'A man rides.', b'Two dogs play!', b'Mr. Li waves.']]
    """
    tf = _tf()
    text = normalise_spaces(tf.convert_to_tensor(strings, tf.string))
    text = tf.strings.regex_replace(text, _END, "\\1\n")
    # Twice: in "Dr. J. Lee" one pass consumes the mark before "J.".
    for _ in range(2):
        text = tf.strings.regex_replace(text, _NOT_AN_END, "\\1\\2 ")
    return tf.strings.split(text, sep="\n")


def _capitalise(words):
    tf = _tf()
    length = tf.strings.length(words, unit="UTF8_CHAR")
    first = tf.strings.substr(words, tf.zeros_like(length), tf.minimum(length, 1), unit="UTF8_CHAR")
    rest = tf.strings.substr(words, tf.minimum(length, 1), length, unit="UTF8_CHAR")
    return tf.strings.join([tf.strings.upper(first, encoding="utf-8"), rest])


def casing(sentences):
    """``(shouted, uncased)`` bool ``(n,)`` of ``(n,)`` sentences.

    Shouted: at least ``SHOUTED_MIN_CAPITALS`` capital letters and
    ``SHOUTED_RATIO`` times as many capitals as small letters; uncased: some
    letters, no capital (any script with case, through TensorFlow's UTF-8
    ``upper``/``lower``).
    """
    tf = _tf()
    chars = tf.strings.unicode_split(sentences, "UTF-8")
    capitals = tf.reduce_sum(
        tf.cast(tf.not_equal(chars, tf.strings.lower(chars, encoding="utf-8")), tf.int32), axis=1
    )
    small = tf.reduce_sum(
        tf.cast(tf.not_equal(chars, tf.strings.upper(chars, encoding="utf-8")), tf.int32), axis=1
    )
    shouted = tf.logical_and(capitals >= SHOUTED_MIN_CAPITALS, capitals >= SHOUTED_RATIO * small)
    uncased = tf.logical_and(tf.equal(capitals, 0), small > 0)
    return shouted, uncased


def normalise_case(sentences, words, vocabulary_id):
    """Re-case shouted and uncased sentences (see the module docstring).

    Args:
        sentences: ``(n,)`` strings.
        words: ragged ``(n, None)``, the words of ``sentences`` (the
            translator's ``text.split_words``).
        vocabulary_id: function from a flat string tensor to int ids
            (``> 1``: a word of the vocabulary).

    Returns:
        ``(sentences, changed)``: ``(n,)`` strings (re-cased ones with their
        words joined by spaces, which the tokenizer splits the same way) and
        ``(n,)`` bool, which were re-cased.
    """
    tf = _tf()
    shouted, uncased = casing(sentences)
    flat = words.flat_values
    lower = tf.strings.lower(flat, encoding="utf-8")
    forms = tf.stack([lower, _capitalise(lower), tf.strings.upper(flat, encoding="utf-8")], 1)
    first = tf.equal(
        tf.range(tf.size(flat, out_type=tf.int64)),
        tf.gather(words.row_starts(), words.value_rowids()),
    )
    # The first of lower-case, capitalised and upper-case that the vocabulary
    # has (its counts include sentence-initial capitals, so they cannot
    # choose between "a" and "A"); the capitalised form first for a sentence's
    # first word.
    found = tf.reshape(vocabulary_id(tf.reshape(forms, [-1])), [-1, 3]) > 1
    order = tf.where(first[:, None], tf.constant([[1, 0, 2]]), tf.constant([[0, 1, 2]]))
    found = tf.gather(found, order, batch_dims=1)
    choice = tf.gather(order, tf.argmax(tf.cast(found, tf.int32), axis=1), batch_dims=1)
    best = tf.gather(forms, choice, batch_dims=1)
    known = tf.reduce_any(found, axis=1)
    row_shouted = tf.gather(shouted, words.value_rowids())
    unknown_form = tf.where(row_shouted | first, _capitalise(lower), lower)
    chosen = tf.where(known, best, unknown_form)
    recased = tf.strings.reduce_join(words.with_flat_values(chosen), axis=1, separator=" ")
    changed = tf.logical_or(shouted, uncased)
    return tf.where(changed, recased, sentences), changed


def join_rows(row_splits, details, max_unknown_rate, min_confidence):
    """Sentences' results back to one row per input text.

    Args:
        row_splits: the ``split_sentences`` row splits ``(batch + 1,)``.
        details: dict of ``(n,)`` tensors, one entry per sentence:
            ``translations`` (string), ``words`` and ``unknown_words``
            (int32), ``confidence`` (float32: mean log-probability per output
            token; 0 for a blank sentence).
        max_unknown_rate, min_confidence: a text is ``unfamiliar`` when more
            of its words than this are unknown, or when a sentence's
            confidence is below this.

    Returns:
        Dict of ``(batch,)`` tensors: ``translations`` (the sentences'
        translations joined by a space), ``unknown_rate`` (unknown words /
        words, 0 for a blank text), ``confidence`` (the lowest of its
        sentences'; 0 for a blank text), ``unfamiliar`` (bool), ``not_carried``
        (the numbers and names of the text that the translation lost,
        space-separated).
    """
    tf = _tf()

    def rows(values):
        return tf.RaggedTensor.from_row_splits(values, row_splits)

    translations = tf.strings.reduce_join(rows(details["translations"]), axis=1, separator=" ")
    translations = tf.strings.strip(tf.strings.regex_replace(translations, " +", " "))
    lost = tf.strings.reduce_join(rows(details["not_carried"]), axis=1, separator=" ")
    lost = tf.strings.strip(tf.strings.regex_replace(lost, " +", " "))
    words = tf.reduce_sum(rows(details["words"]), axis=1)
    unknown = tf.reduce_sum(rows(details["unknown_words"]), axis=1)
    rate = tf.math.divide_no_nan(tf.cast(unknown, tf.float32), tf.cast(words, tf.float32))
    worded = rows(details["words"]) > 0
    confidence = tf.reduce_min(tf.ragged.boolean_mask(rows(details["confidence"]), worded), axis=1)
    confidence = tf.where(words > 0, confidence, 0.0)
    unfamiliar = tf.logical_or(rate > max_unknown_rate, confidence < min_confidence)
    return {
        "translations": translations,
        "unknown_rate": rate,
        "confidence": confidence,
        "unfamiliar": unfamiliar,
        "not_carried": lost,
    }


def carry_through(translator, source_ids, source_word, out_ids, words, known):
    """The output pieces with unknown numbers and names copied from the source,
    and the model's confidence in the output.

    One teacher-forced pass over the chosen output gives its attention over
    the source and each token's log-probability. An output word (a piece
    and its ``##`` continuations) whose first piece attends most to a
    *protected* source word (one not in the vocabulary that has a digit,
    starts with a capital and is not the sentence's first word, or has a
    character the vocabulary lacks) is replaced by that source word when it
    is itself spelled out (more than one piece), has a digit, or is unknown;
    the unknown-word replacement of Luong et al. 2015, applied to the
    character spellings that this model writes for words it cannot
    translate. A run of such output words on one source word becomes one copy.

    Args:
        translator: the ``Translator``.
        source_ids: int ``(n, S)`` source ids (end id last).
        source_word: int64 ``(n, S)``: the index in ``words.flat_values`` of
            the word each source piece spells, ``-1`` for the end and padding.
        out_ids: int ``(n, T)`` output ids of the search.
        words: ragged ``(n, None)`` source words.
        known: bool ``(words,)``: the flat words in the source vocabulary.

    Returns:
        ``(pieces, confidence)``: ragged ``(n, None)`` string pieces for
        ``text.detokenize`` and float32 ``(n,)``, the mean log-probability
        per output token (end token included).

    Reference:
        Luong, Sutskever, Le, Vinyals & Zaremba 2015, "Addressing the rare
        word problem in neural machine translation" (copying aligned source
        words into the output).
    """
    import tensorflow as tf

    model = translator.model
    ended = tf.cumsum(tf.cast(tf.equal(out_ids, model.end_id), tf.int32), axis=1)
    tokens = tf.ragged.boolean_mask(out_ids, tf.logical_and(tf.equal(ended, 0), out_ids > 3))
    n = tf.shape(out_ids)[0]
    start = tf.RaggedTensor.from_tensor(tf.fill([n, 1], model.start_id))
    end = tf.RaggedTensor.from_tensor(tf.fill([n, 1], model.end_id))
    decoder_in = tf.concat([start, tokens], axis=1).to_tensor(0)
    targets = tf.concat([tokens, end], axis=1).to_tensor(0)
    logits, attention = model((source_ids, decoder_in), return_attention=True)
    log_p = tf.nn.log_softmax(tf.cast(logits, tf.float32))
    token_log_p = tf.gather(log_p, targets, batch_dims=2)
    lengths = tokens.row_lengths() + 1
    valid = tf.sequence_mask(lengths, tf.shape(targets)[1])
    confidence = tf.reduce_sum(tf.where(valid, token_log_p, 0.0), axis=1) / tf.cast(
        lengths, tf.float32
    )

    # The source word each output piece attends to most (-1: the end token).
    aligned = tf.gather(source_word, tf.argmax(attention, axis=-1), batch_dims=1)
    aligned = tf.RaggedTensor.from_tensor(aligned, lengths=tokens.row_lengths()).flat_values
    flat_words = words.flat_values
    lookup = translator.source_lookup
    chars = tf.strings.unicode_split(flat_words, "UTF-8")
    unknown_char = tf.reduce_any(lookup(chars) <= 1, axis=1)
    first_char = tf.strings.substr(flat_words, 0, 1, unit="UTF8_CHAR")
    capital = tf.not_equal(first_char, tf.strings.lower(first_char, encoding="utf-8"))
    not_first = tf.range(tf.size(flat_words, out_type=tf.int64)) > tf.gather(
        words.row_starts(), words.value_rowids()
    )
    protected = tf.logical_and(
        tf.logical_not(known),
        tf.strings.regex_full_match(flat_words, ".*[0-9].*")
        | tf.logical_and(capital, not_first)
        | unknown_char,
    )

    pieces = translator.target_inverse(tokens)
    flat = pieces.flat_values
    first_in_row = tf.equal(
        tf.range(tf.size(flat, out_type=tf.int64)),
        tf.gather(pieces.row_starts(), pieces.value_rowids()),
    )
    starts = tf.logical_or(first_in_row, tf.logical_not(tf.strings.regex_full_match(flat, "##.*")))
    group = tf.cumsum(tf.cast(starts, tf.int64)) - 1
    group_word = tf.boolean_mask(aligned, starts)
    group_size = tf.math.segment_sum(tf.ones_like(group), group)
    group_text = tf.boolean_mask(flat, starts)
    # -1 (the end token, or no source word at all) reads the padding entry.
    words_or_end = tf.size(flat_words, out_type=tf.int64)
    safe_word = tf.where(group_word >= 0, group_word, words_or_end)
    protected_or_end = tf.concat([protected, [False]], 0)
    replace = tf.gather(protected_or_end, safe_word) & (
        (group_size > 1)
        | tf.strings.regex_full_match(group_text, ".*[0-9].*")
        | tf.equal(group_text, pieces_text.UNK)
    )
    # A run of replaced groups on one source word (in one row) is one copy.
    group_row = tf.boolean_mask(pieces.value_rowids(), starts)
    previous = tf.concat([[False], replace[:-1]], 0) & tf.concat(
        [
            [False],
            tf.equal(group_word[1:], group_word[:-1]) & tf.equal(group_row[1:], group_row[:-1]),
        ],
        0,
    )
    copy = tf.gather(replace & tf.logical_not(previous), group)
    drop = tf.gather(replace, group) & tf.logical_not(copy & starts)
    originals = tf.gather(tf.concat([flat_words, [""]], 0), tf.gather(safe_word, group))
    flat = tf.where(copy & starts, originals, flat)
    pieces = tf.ragged.boolean_mask(
        pieces.with_flat_values(flat), pieces.with_flat_values(tf.logical_not(drop))
    )
    # Protected words that no output word spells: "not carried".
    spelled = tf.strings.split(
        tf.strings.regex_replace(
            tf.strings.reduce_join(pieces, axis=1, separator=" "),
            " " + pieces_text.CONTINUATION,
            "",
        )
    )
    wanted = tf.ragged.boolean_mask(words, words.with_flat_values(protected))
    lost = tf.sets.difference(wanted.to_sparse(), spelled.to_sparse())
    lost = tf.sparse.to_dense(lost, default_value="")
    lost = tf.strings.strip(tf.strings.reduce_join(lost, axis=1, separator=" "))
    lost = tf.strings.regex_replace(lost, " +", " ")
    return pieces, confidence, lost
