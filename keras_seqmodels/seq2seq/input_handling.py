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

- ``carry_through``: after the search, numbers (``10:30``, ``3.5`` and
  ``1,000`` as one unit, ``source_units``) and names are copied from the
  source into the output words that attend to them; every number and name
  that the output still lacks is named as not carried, and the model's
  confidence is measured.
- ``carry_best``: of the beam's candidates within a margin of the best
  score, the one that loses the fewest numbers and names is kept.

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
# Inside a number these do not end a unit ("10:30", "3.5", "1,000" are one
# unit to carry, though the tokenizer splits them off): each becomes a
# private-use character while the units are split.
_NUMBER_PUNCTUATION = (("\\.", "\ue000"), (",", "\ue001"), (":", "\ue002"))
# German number words that carry a number written in digits.
NUMBER_WORDS = (
    ("0", "null"), ("1", "ein"), ("1", "eine"), ("1", "einen"), ("1", "einem"),
    ("1", "einer"), ("1", "eines"), ("1", "eins"), ("2", "zwei"), ("3", "drei"),
    ("4", "vier"), ("5", "fünf"), ("6", "sechs"), ("7", "sieben"), ("8", "acht"),
    ("9", "neun"), ("10", "zehn"), ("11", "elf"), ("12", "zwölf"), ("100", "hundert"),
    ("1000", "tausend"),
)  # fmt: skip
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
        words: ragged ``(n, None)``, the words of ``sentences``
            (``text.split_words(sentences)``).
        vocabulary_id: function from a flat string tensor to int ids
            (``> 1``: a word of the vocabulary).

    Returns:
        ``(sentences, changed)``: ``(n,)`` strings (re-cased ones with their
        words joined by spaces, but a number's parts as they were, so the
        tokenizer and ``source_units`` split them the same way) and
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
    # Words joined by spaces, but a number's parts as they were ("10:30").
    units, unit_of_word = source_units(sentences)
    joined = tf.strings.reduce_join(
        tf.RaggedTensor.from_value_rowids(
            chosen, unit_of_word, nrows=tf.size(units.flat_values, out_type=tf.int64)
        ),
        axis=1,
    )
    recased = tf.strings.reduce_join(units.with_flat_values(joined), axis=1, separator=" ")
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


def source_units(sentences):
    """The units of ``(n,)`` sentences that ``carry_through`` carries.

    A unit is a word of ``text.split_words``, except that a number with
    ``. , :`` between digits (``10:30``, ``3.5``, ``1,000``, ``1.2.3``) is
    one unit, though the tokenizer (and so the model) sees its parts.

    Returns:
        ``(units, unit_of_word)``: ragged ``(n, None)`` strings, and int64
        ``(words,)``: the index in ``units.flat_values`` of each word of
        ``text.split_words(sentences).flat_values``.

    Example:

    >>> units, unit_of_word = source_units(["At 10:30, 3 men."])
    >>> units.to_list(), unit_of_word.numpy().tolist()
    ([[b'At', b'10:30', b',', b'3', b'men', b'.']], [0, 1, 1, 1, 2, 3, 4, 5])
    """
    tf = _tf()
    marked = tf.convert_to_tensor(sentences, tf.string)
    # Twice: in "1,2,3" one pass consumes the "2" that the second match needs.
    for _ in range(2):
        for mark, private in _NUMBER_PUNCTUATION:
            marked = tf.strings.regex_replace(
                marked, "([0-9])" + mark + "([0-9])", "\\1" + private + "\\2"
            )
    units = pieces_text.split_words(marked)
    flat = units.flat_values
    for mark, private in _NUMBER_PUNCTUATION:
        flat = tf.strings.regex_replace(flat, private, mark.lstrip("\\"))
    words_per_unit = pieces_text.split_words(flat).row_lengths()
    unit_of_word = tf.repeat(tf.range(tf.size(flat, out_type=tf.int64)), words_per_unit)
    return units.with_flat_values(flat), unit_of_word


def _output_words(pieces):
    """Ragged ``(n, None)`` words that ``(n, None)`` output pieces spell."""
    tf = _tf()
    joined = tf.strings.reduce_join(pieces, axis=1, separator=" ")
    return tf.strings.split(tf.strings.regex_replace(joined, " " + pieces_text.CONTINUATION, ""))


def _appears(values, rows, words):
    """Bool ``(k,)``: ``values[i]`` is one of the words of row ``rows[i]`` of ``words``."""
    return _count(values, rows, words) > 0


def _count(values, rows, words):
    """Int32 ``(k,)``: how many words of row ``rows[i]`` of ``words`` equal ``values[i]``."""
    tf = _tf()
    candidates = tf.gather(words, rows)
    repeated = tf.repeat(values, candidates.row_lengths())
    equal = tf.cast(tf.equal(candidates.flat_values, repeated), tf.int32)
    return tf.reduce_sum(candidates.with_flat_values(equal), axis=1)


def _rank(ragged, counted):
    """Int32 ``(k,)`` for the ``k`` string flat values of ``ragged``: how many
    of the ``counted`` values of its row, up to and including itself, equal
    it (its occurrence number among them: 1 for the first). By a stable sort
    on (row, value), so a row of many units costs ``k log k``, not ``k**2``."""
    tf = _tf()
    values, rows = ragged.flat_values, ragged.value_rowids()
    key = tf.strings.join([tf.strings.as_string(rows), values], separator="\x1f")
    _, group = tf.unique(key, out_idx=tf.int64)
    order = tf.argsort(group, stable=True)  # by group, in flat order inside each
    grouped = tf.gather(group, order)
    count = tf.cast(tf.gather(counted, order), tf.int32)
    total = tf.cumsum(count)
    before_group = tf.math.segment_min(total - count, grouped)
    rank = total - tf.gather(before_group, grouped)
    return tf.gather(rank, tf.math.invert_permutation(tf.cast(order, tf.int32)))


def _number_key(strings):
    """What a unit or output word is matched by: an ordinal by its digits
    (``5th`` -> ``5``, German writes ``5.``), any other string as itself."""
    tf = _tf()
    return tf.strings.regex_replace(strings, "^([0-9]+)(?:st|nd|rd|th)$", "\\1")


def _as_digits(words):
    """``words`` (ragged strings) with German number words as digits, others ``""``."""
    tf = _tf()
    lower = tf.strings.lower(words.flat_values, encoding="utf-8")
    match = tf.equal(lower[:, None], tf.constant([w for _, w in NUMBER_WORDS])[None, :])
    digits = tf.gather(
        tf.constant([d for d, _ in NUMBER_WORDS]), tf.argmax(tf.cast(match, tf.int32), axis=1)
    )
    return words.with_flat_values(tf.where(tf.reduce_any(match, axis=1), digits, ""))


def _pad(values, value):
    """``values`` with one more entry, read by the index ``size(values)``."""
    tf = _tf()
    return tf.concat([values, tf.fill([1], tf.constant(value, values.dtype))], 0)


def _unit_kinds(translator, units, unit_of_word, known):
    """``(number, name, protected, digit)``, bool ``(units,)`` of
    ``source_units``' units (see ``carry_through``)."""
    tf = _tf()
    flat_units = units.flat_values
    n_units = tf.size(flat_units, out_type=tf.int64)
    n_words = tf.size(unit_of_word, out_type=tf.int64)
    word_index = tf.range(n_words)
    first_word = tf.math.unsorted_segment_min(word_index, unit_of_word, n_units)
    single = tf.equal(tf.math.unsorted_segment_sum(tf.ones_like(word_index), unit_of_word,
                                                   n_units), 1)  # fmt: skip
    unit_known = single & tf.gather(_pad(known, False), tf.minimum(first_word, n_words))
    chars = tf.strings.unicode_split(flat_units, "UTF-8")
    unknown_char = tf.reduce_any(translator.source_lookup(chars) <= 1, axis=1)
    first_char = tf.strings.substr(flat_units, 0, 1, unit="UTF8_CHAR")
    capital = tf.not_equal(first_char, tf.strings.lower(first_char, encoding="utf-8"))
    not_first = tf.range(n_units) > tf.gather(units.row_starts(), units.value_rowids())
    digit = tf.strings.regex_full_match(flat_units, ".*[0-9].*")
    number = digit & tf.logical_not(unit_known)
    # A name the vocabulary knows: the English training text has the word
    # only capitalised (its lower-case form is no word of the source
    # vocabulary) and the German text has it too (John, Boston; not A, The,
    # Two, American, Christmas), wherever it stands in the sentence.
    lower_known = translator.source_lookup(tf.strings.lower(flat_units, encoding="utf-8")) > 1
    in_target = translator.target_lookup(flat_units) > 1
    known_name = capital & unit_known & in_target & tf.logical_not(lower_known | digit)
    name = (capital & not_first & tf.logical_not(unit_known | digit)) | known_name
    protected = number | name | (unknown_char & tf.logical_not(unit_known))
    return number, name, protected, digit


# Rows of one teacher-forced pass in ``carry_through``: its logits are
# ``(rows, output steps, target vocabulary)`` floats, so a request's rows
# (up to 256 sentences, times the beam's candidates in ``carry_best``) go
# through a few at a time.
ROWS_PER_PASS = 16


def _teacher_forced(model, source_ids, decoder_in, targets):
    """``(log-probabilities of targets, source position attended most)``,
    both ``(n, T)``, from ``model`` fed ``decoder_in``, ``ROWS_PER_PASS`` rows
    at a time (the memory of one pass, not of the whole request)."""
    tf = _tf()
    n = tf.shape(decoder_in)[0]
    passes = (n + ROWS_PER_PASS - 1) // ROWS_PER_PASS
    shape = tf.TensorShape([None, None])

    def one_pass(i, log_ps, attended):
        rows = slice(i * ROWS_PER_PASS, tf.minimum(n, (i + 1) * ROWS_PER_PASS))
        logits, attention = model((source_ids[rows], decoder_in[rows]), return_attention=True)
        log_p = tf.nn.log_softmax(tf.cast(logits, tf.float32))
        log_ps = log_ps.write(i, tf.gather(log_p, targets[rows], batch_dims=2))
        attended = attended.write(i, tf.argmax(attention, axis=-1))
        return i + 1, log_ps, attended

    arrays = (
        tf.TensorArray(tf.float32, size=passes, infer_shape=False, element_shape=shape),
        tf.TensorArray(tf.int64, size=passes, infer_shape=False, element_shape=shape),
    )
    _, log_ps, attended = tf.while_loop(lambda i, *_: i < passes, one_pass, (0, *arrays))
    return log_ps.concat(), attended.concat()


def carry_through(translator, source_ids, source_word, out_ids, words, known, sentences):
    """The output pieces with numbers and names copied from the source, the
    model's confidence in the output, and the numbers and names it lost.

    One teacher-forced pass over the chosen output gives its attention over
    the source and each token's log-probability. The source is read in
    units (``source_units``: words, but ``10:30`` or ``3.5`` is one). A unit
    is *protected* when it is not one word of the vocabulary and it has a
    digit, a character the vocabulary lacks, or starts with a capital and
    is not the sentence's first unit (a name), or when it is a name the
    vocabulary knows: a capitalised word, anywhere in the sentence, whose
    lower-case form is no word of the source vocabulary (the English
    training text writes it only capitalised) and which the target
    vocabulary has too (``John``, ``Boston``; not ``The``, ``Two``,
    ``Christmas``, ``American``). An output word (a piece and
    its ``##`` continuations) whose first piece attends most to a protected
    unit is replaced by that unit when it is spelled out (more than one
    piece), has a digit or is unknown (the unknown-word replacement of
    Luong et al. 2015, applied to the character spellings that this model
    writes for words it cannot translate); for a number, ``. , :`` between
    two such words too (the model's ``10 : 30``); for a name that the
    output does not have, the first capitalised output word on it (the
    German word the model chose for the name). A run of replaced words on
    one unit becomes one copy.

    Then every protected unit and every number (any unit with a digit)
    needs an output word of its own that carries it: the unit as written,
    an ordinal (``5th``) by its digits (German ``5.``), or a German number
    word of its value (``2``: ``zwei``; ``1``: ``ein``, ``eine``, ...;
    ``NUMBER_WORDS``) that attends most to a source unit of that value (so
    the article ``Ein`` of ``A man`` does not carry a ``1``). Of ``n``
    equal units in a sentence, the ``n``-th is carried only when ``n``
    output words carry that value (``2 dogs and 2 cats`` -> ``2 Hunde und
    Katzen`` loses one ``2``). The others are returned as not carried.

    Args:
        translator: the ``Translator``.
        source_ids: int ``(n, S)`` source ids (end id last).
        source_word: int64 ``(n, S)``: the index in ``words.flat_values`` of
            the word each source piece spells, ``-1`` for the end and padding.
        out_ids: int ``(n, T)`` output ids of the search.
        words: ragged ``(n, None)`` source words (``text.split_words`` of
            ``sentences``).
        known: bool ``(words,)``: the flat words in the source vocabulary.
        sentences: ``(n,)`` the source sentences as tokenized.

    Returns:
        ``(pieces, confidence, not_carried, lost_count)``: ragged
        ``(n, None)`` string pieces for ``text.detokenize``, float32
        ``(n,)`` the mean log-probability per output token (end token
        included), ``(n,)`` strings, the units not carried, space-separated,
        and int32 ``(n,)``, how many they are.

    Reference:
        Luong, Sutskever, Le, Vinyals & Zaremba 2015, "Addressing the rare
        word problem in neural machine translation" (copying aligned source
        words into the output).
    """
    tf = _tf()
    model = translator.model
    ended = tf.cumsum(tf.cast(tf.equal(out_ids, model.end_id), tf.int32), axis=1)
    tokens = tf.ragged.boolean_mask(out_ids, tf.logical_and(tf.equal(ended, 0), out_ids > 3))
    n = tf.shape(out_ids)[0]
    start = tf.RaggedTensor.from_tensor(tf.fill([n, 1], model.start_id))
    end = tf.RaggedTensor.from_tensor(tf.fill([n, 1], model.end_id))
    decoder_in = tf.concat([start, tokens], axis=1).to_tensor(0)
    targets = tf.concat([tokens, end], axis=1).to_tensor(0)
    token_log_p, attended = _teacher_forced(model, source_ids, decoder_in, targets)
    lengths = tokens.row_lengths() + 1
    valid = tf.sequence_mask(lengths, tf.shape(targets)[1])
    confidence = tf.reduce_sum(tf.where(valid, token_log_p, 0.0), axis=1) / tf.cast(
        lengths, tf.float32
    )

    # Units, and which are protected.
    units, unit_of_word = source_units(sentences)
    flat_units = units.flat_values
    unit_rows = units.value_rowids()
    n_units = tf.size(flat_units, out_type=tf.int64)
    n_words = tf.size(unit_of_word, out_type=tf.int64)
    number, name, protected, digit = _unit_kinds(translator, units, unit_of_word, known)

    # The unit each output piece attends to most (-1: the end token).
    aligned = tf.gather(source_word, attended, batch_dims=1)
    aligned = tf.RaggedTensor.from_tensor(aligned, lengths=tokens.row_lengths()).flat_values
    aligned = tf.gather(_pad(unit_of_word, -1), tf.where(aligned >= 0, aligned, n_words))

    pieces = translator.target_inverse(tokens)
    flat = pieces.flat_values
    first_in_row = tf.equal(
        tf.range(tf.size(flat, out_type=tf.int64)),
        tf.gather(pieces.row_starts(), pieces.value_rowids()),
    )
    starts = tf.logical_or(first_in_row, tf.logical_not(tf.strings.regex_full_match(flat, "##.*")))
    group = tf.cumsum(tf.cast(starts, tf.int64)) - 1
    group_unit = tf.boolean_mask(aligned, starts)
    group_size = tf.math.segment_sum(tf.ones_like(group), group)
    group_text = tf.boolean_mask(flat, starts)
    group_row = tf.boolean_mask(pieces.value_rowids(), starts)
    # -1 (the end token, or no source unit at all) reads the padding entry.
    safe_unit = tf.where(group_unit >= 0, group_unit, n_units)
    spelled_out = (
        (group_size > 1)
        | tf.strings.regex_full_match(group_text, ".*[0-9].*")
        | tf.equal(group_text, pieces_text.UNK)
    )
    replace = tf.gather(_pad(protected, False), safe_unit) & spelled_out
    # A name the output lacks: its first capitalised output word.
    missing_name = name & tf.logical_not(_appears(flat_units, unit_rows, _output_words(pieces)))
    group_first = tf.strings.substr(group_text, 0, 1, unit="UTF8_CHAR")
    candidate = tf.gather(_pad(missing_name, False), safe_unit) & tf.not_equal(
        group_first, tf.strings.lower(group_first, encoding="utf-8")
    )
    group_index = tf.range(tf.size(group_text, out_type=tf.int64))
    first_candidate = tf.math.unsorted_segment_min(
        tf.where(candidate, group_index, tf.size(group_text, out_type=tf.int64)),
        safe_unit, n_units + 1,
    )  # fmt: skip
    replace |= candidate & tf.equal(group_index, tf.gather(first_candidate, safe_unit))
    # ". , :" between two replaced words of one number ("10 : 30").
    same_as_previous = tf.concat(
        [[False], tf.equal(group_unit[1:], group_unit[:-1])
         & tf.equal(group_row[1:], group_row[:-1])],
        0,
    )  # fmt: skip
    same_as_next = tf.concat([same_as_previous[1:], [False]], 0)
    inner = (
        tf.strings.regex_full_match(group_text, "[.,:]")
        & tf.gather(_pad(number, False), safe_unit)
        & same_as_previous & tf.concat([[False], replace[:-1]], 0)
        & same_as_next & tf.concat([replace[1:], [False]], 0)
    )  # fmt: skip
    replace |= inner
    # A run of replaced words on one unit (in one row) is one copy.
    previous = tf.concat([[False], replace[:-1]], 0) & same_as_previous
    copy = tf.gather(replace & tf.logical_not(previous), group)
    drop = tf.gather(replace, group) & tf.logical_not(copy & starts)
    originals = tf.gather(_pad(flat_units, ""), tf.gather(safe_unit, group))
    flat = tf.where(copy & starts, originals, flat)
    pieces = tf.ragged.boolean_mask(
        pieces.with_flat_values(flat), pieces.with_flat_values(tf.logical_not(drop))
    )

    # Each protected unit and number needs an output word of its own (the
    # n-th of equal units of a sentence is carried when n output words carry
    # it): the unit as written, an ordinal by its digits, or a German number
    # word of its value that attends most to a unit of that value.
    kept_piece = tf.logical_not(drop)
    piece_text = tf.where(copy & starts, originals, tf.strings.regex_replace(flat, "^##", ""))
    n_groups = tf.size(group_text, out_type=tf.int64)
    word_text = tf.strings.unsorted_segment_join(
        tf.boolean_mask(piece_text, kept_piece), tf.boolean_mask(group, kept_piece), n_groups
    )
    kept = tf.logical_not(tf.boolean_mask(drop, starts))
    out_words = tf.RaggedTensor.from_value_rowids(
        tf.boolean_mask(word_text, kept), tf.boolean_mask(group_row, kept),
        nrows=tf.cast(n, tf.int64),
    )  # fmt: skip
    unit_key = _number_key(flat_units)
    spoken = _as_digits(out_words).flat_values
    aligned_key = tf.gather(_pad(unit_key, ""), tf.boolean_mask(safe_unit, kept))
    word_key = tf.where(
        tf.not_equal(spoken, "") & tf.equal(spoken, aligned_key),
        spoken,
        _number_key(out_words.flat_values),
    )
    checked = protected | digit
    available = _count(unit_key, unit_rows, out_words.with_flat_values(word_key))
    needed = _rank(units.with_flat_values(unit_key), checked)
    lost = units.with_flat_values(checked & (available < needed))
    lost_count = tf.reduce_sum(tf.cast(lost, tf.int32), axis=1)
    lost = tf.ragged.boolean_mask(units, lost)
    lost = tf.strings.reduce_join(lost, axis=1, separator=" ")
    return pieces, confidence, lost, lost_count


def within_margin(scores, finished, margin):
    """Bool ``(n, k)``: the beam candidates that ``carry_best`` may choose.

    The best (column 0) always; another when it is finished (it has the end
    token) and its score is at least the best's minus ``margin``.
    """
    tf = _tf()
    scores = tf.convert_to_tensor(scores, tf.float32)
    close = tf.logical_and(finished, scores >= scores[:, :1] - margin)
    return tf.logical_or(close, tf.equal(tf.range(tf.shape(scores)[1]), 0)[None, :])


def carry_best(translator, source_ids, source_word, candidates, scores, words, known,
               sentences, margin):  # fmt: skip
    """``carry_through`` of the beam candidate that carries the most.

    A sentence with a number or name to carry (see ``carry_through``) and a
    candidate other than the best within ``margin`` of the best score
    (``within_margin``: finished, beam score, the length-normalised
    log-probability, at least the best's minus ``margin``) has each such
    candidate carried through, and the one that loses the fewest numbers
    and names (``not_carried``) is kept (ties: the best score, as the beam
    orders them); other sentences keep the best candidate. One
    ``carry_through`` pass serves all. Nothing is added to a translation:
    when no candidate has a unit, the unit stays not carried.

    Args:
        translator, source_ids, source_word, words, known, sentences: as
            for ``carry_through``.
        candidates: int ``(n, k, T)`` output ids of the search, best first.
        scores: float ``(n, k)`` their beam scores.
        margin: float, how far below the best a chosen candidate may score
            (0: only ties with the best).

    Returns:
        ``(translations, confidence, not_carried)``: ``(n,)`` detokenized
        strings, float32 mean log-probabilities per output token and
        strings of the units not carried (see ``carry_through``).
    """
    tf = _tf()
    candidates = tf.convert_to_tensor(candidates)
    k = candidates.shape[1]
    if k == 1:
        pieces, confidence, lost, _ = carry_through(
            translator, source_ids, source_word, candidates[:, 0], words, known, sentences
        )
        return pieces_text.detokenize(pieces), confidence, lost
    finished = tf.reduce_any(tf.equal(candidates, translator.model.end_id), axis=2)
    eligible = within_margin(scores, finished, margin)
    units, unit_of_word = source_units(sentences)
    _, _, protected, digit = _unit_kinds(translator, units, unit_of_word, known)
    to_carry = tf.reduce_any(units.with_flat_values(protected | digit), axis=1)
    # Each row's candidates to carry through: all k or the best alone.
    per_row = tf.where(to_carry & tf.reduce_any(eligible[:, 1:], axis=1), k, 1)
    row = tf.repeat(tf.range(tf.size(per_row, out_type=tf.int64)), per_row)
    index = tf.ragged.range(per_row).flat_values
    at = tf.stack([row, tf.cast(index, tf.int64)], axis=1)
    sub_words = tf.gather(words, row)
    # Word indices into the gathered rows' words.
    shift = sub_words.row_starts() - tf.gather(words.row_starts(), row)
    sub_word = tf.gather(source_word, row)
    sub_word = tf.where(sub_word >= 0, sub_word + shift[:, None], sub_word)
    pieces, confidence, lost, count = carry_through(
        translator, tf.gather(source_ids, row), sub_word, tf.gather_nd(candidates, at),
        sub_words, tf.gather(words.with_flat_values(known), row).flat_values,
        tf.gather(sentences, row),
    )  # fmt: skip
    # Per row the eligible candidate of fewest losses, then best score.
    key = tf.cast(count, tf.int64) * k + tf.cast(index, tf.int64)
    key = tf.where(tf.gather_nd(eligible, at), key, tf.reduce_max(key) + k)
    best = tf.math.unsorted_segment_min(key, row, tf.size(per_row))
    pick = tf.where(tf.equal(key, tf.gather(best, row)))[:, 0]
    return (
        tf.gather(pieces_text.detokenize(pieces), pick),
        tf.gather(confidence, pick),
        tf.gather(lost, pick),
    )
