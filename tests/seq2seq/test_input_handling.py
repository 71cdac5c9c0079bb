"""The translator's input handling: sentence splitting, re-casing, numbers and
names carried through, the signal of unfamiliar input, and the served
signature doing what the task does.

TensorFlow only (string tensors, SavedModel).
"""

import os
import re
from collections import Counter

import keras
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytestmark = pytest.mark.tf_only
if keras.backend.backend() != "tensorflow":
    pytest.skip("string models need the TensorFlow backend", allow_module_level=True)

import tensorflow as tf  # noqa: E402

from keras_seqmodels.seq2seq import EncoderDecoder, Translator, input_handling, text  # noqa: E402

FIXTURES = os.path.join(os.path.dirname(os.path.dirname(__file__)), "fixtures", "multi30k")

SPLITS = [
    ("A man rides. Two dogs play! Is it? Yes.",
     ["A man rides.", "Two dogs play!", "Is it?", "Yes."]),
    ('He said "Stop." Then he left...  (Really.) OK',
     ['He said "Stop."', "Then he left...", "(Really.)", "OK"]),
    ("Mr. Smith and Dr. J. Lee live on 5th St. near the U.S. border. It is 3.5 km away.",
     ["Mr. Smith and Dr. J. Lee live on 5th St. near the U.S. border.", "It is 3.5 km away."]),
    ("a man rides. two dogs play.", ["a man rides.", "two dogs play."]),
    ("no end mark", ["no end mark"]),
    ("  spaced\tout\n\ntext.  ", ["spaced out text."]),
    ("", [""]),
    ("   ", [""]),
    ("🐶🐶🐶", ["🐶🐶🐶"]),
]


def _decode(ragged):
    return [[s.decode("utf-8") for s in row] for row in ragged.to_list()]


@pytest.mark.parametrize("text_in, expected", SPLITS)
def test_split_sentences_cases(text_in, expected):
    assert _decode(input_handling.split_sentences([text_in])) == [expected]


@settings(max_examples=60, deadline=None, derandomize=True, database=None)
@given(
    rows=st.lists(st.lists(st.tuples(st.sampled_from("125x"), st.booleans()), max_size=8),
                  max_size=4),
)  # fmt: skip
def test_rank_is_each_values_occurrence_number_among_the_counted(rows):
    """``_rank`` (a sort, ``k log k``: a 16 KB sentence has thousands of
    units) equals counting the row's earlier counted equal values."""
    values = tf.RaggedTensor.from_row_lengths(
        tf.constant([v for row in rows for v, _ in row], tf.string),
        tf.constant([len(row) for row in rows], tf.int64),
    )
    counted = tf.constant([c for row in rows for _, c in row], tf.bool)
    expected = [
        sum(1 for v, c in row[: i + 1] if c and v == row[i][0])
        for row in rows
        for i in range(len(row))
    ]
    assert input_handling._rank(values, counted).numpy().tolist() == expected


def test_split_sentences_batch_keeps_rows():
    got = _decode(input_handling.split_sentences([t for t, _ in SPLITS]))
    assert got == [e for _, e in SPLITS]
    assert input_handling.split_sentences(tf.constant([], tf.string)).shape[0] == 0


_PIECES = st.sampled_from([
    "A", "man", "rides", ".", "!", "?", "...", " ", "  ", "\t", "\n", "\u00a0", "\u2003",
    "Mr.", "Dr", "J.", "e.g.", '"', "'", ")", "(", "]", "”", "3.5", "é", "😀", "x",
])
_TEXT = st.one_of(st.lists(_PIECES, max_size=30).map("".join), st.text(max_size=60))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_TEXT, min_size=1, max_size=5))
def test_split_sentences_on_arbitrary_text(texts):
    """Joining a row's sentences gives its text back (spaces normalised), no
    sentence is empty unless the text is blank, and splitting a sentence
    again gives it alone."""
    rows = _decode(input_handling.split_sentences(tf.constant([t.encode() for t in texts])))
    assert len(rows) == len(texts)
    for original, sentences in zip(texts, rows):
        normalised = " ".join(original.split())
        assert " ".join(sentences) == normalised
        assert all(sentences) or sentences == [""]
    flat = [s for row in rows for s in row]
    again = _decode(input_handling.split_sentences(tf.constant([s.encode() for s in flat])))
    assert again == [[s] for s in flat]


# By count, as a training vocabulary: sentence-initial "A" before "a".
VOCABULARY = ["A", "a", "man", "is", "riding", "bicycle", ".", "John", "New", "new", "York",
              "IBM", "the", "in"]


def _recase(sentences):
    lookup = keras.layers.StringLookup(vocabulary=VOCABULARY, mask_token="")
    sentences = tf.constant(sentences)
    out, changed = input_handling.normalise_case(
        sentences, text.split_words(sentences), lambda w: tf.cast(lookup(w), tf.int32)
    )
    return [s.decode("utf-8") for s in out.numpy()], changed.numpy().tolist()


def test_shouted_and_uncased_sentences_take_the_vocabularys_casing():
    out, changed = _recase([
        "A MAN IS RIDING A BICYCLE.",  # shouted: lower-case, vocabulary casing
        "JOHN IS IN NEW YORK WITH XAVIER.",  # lower-case first where the vocabulary has it
        "a man is riding in the ibm bicycle.",  # uncased: first capital, IBM
        "A man is riding a BICYCLE with IBM.",  # ordinary: left alone
        "",
    ])
    assert out == [
        "A man is riding a bicycle .",
        "John is in new York With Xavier .",  # unknown words capitalised when shouted
        "A man is riding in the IBM bicycle .",
        "A man is riding a BICYCLE with IBM.",
        "",
    ]
    assert changed == [True, True, True, False, False]


def test_casing_counts_capitals_of_any_script():
    shouted, uncased = input_handling.casing(tf.constant(["ÄRGER ÜBER ÖL", "ärger", "Ok", "42"]))
    assert shouted.numpy().tolist() == [True, False, False, False]
    assert uncased.numpy().tolist() == [False, True, False, False]


def _lines(lang):
    with open(os.path.join(FIXTURES, f"test2016_sample.{lang}"), encoding="utf-8") as f:
        return f.read().splitlines()


@pytest.fixture(scope="module")
def tiny():
    keras.utils.set_random_seed(0)
    en, de = _lines("en"), _lines("de")
    src = text.build_vocabulary(en, min_count=2)
    tgt = text.build_vocabulary(de, min_count=2)
    core = EncoderDecoder(len(src) + 2, len(tgt) + 2, 8, 8, 8, start_id=2, end_id=3)
    return Translator(core, src, tgt, beam_size=2, max_source_length=64,
                      max_output_length=12)


TEXTS = [
    "A man is riding a bicycle. Two dogs play in the snow.",
    "A MAN IS RIDING A BICYCLE.",
    "3 children are playing with 2 dogs on 5th Street at 10:30 in 2017.",
    "🐶🐶🐶",
    "",
    "Un homme fait du vélo. Deux chiens jouent dans la neige.",
]


def test_a_text_translates_as_its_sentences_joined(tiny):
    whole = tiny.translate(TEXTS[:1])[0]
    parts = tiny.translate(["A man is riding a bicycle.", "Two dogs play in the snow."])
    assert whole == " ".join(p for p in parts if p)


def test_details_of_the_python_path_equal_the_graph(tiny):
    graph = tiny.translate_details(tf.constant(TEXTS))
    python = tiny.translate(TEXTS, details=True, batch_size=3)
    assert [d["translation"] for d in python] == [
        s.decode("utf-8") for s in graph["translations"].numpy()
    ]
    np.testing.assert_allclose([d["unknown_rate"] for d in python],
                               graph["unknown_rate"].numpy(), rtol=1e-6)
    np.testing.assert_allclose([d["confidence"] for d in python],
                               graph["confidence"].numpy(), rtol=1e-4, atol=1e-5)
    assert [d["unfamiliar"] for d in python] == graph["unfamiliar"].numpy().tolist()
    # Blank text: nothing to translate, nothing unknown, not flagged.
    assert python[4] == {"translation": "", "unknown_rate": 0.0, "confidence": 0.0,
                         "unfamiliar": False, "not_carried": []}
    assert python[3]["unknown_rate"] == 1.0 and python[3]["unfamiliar"]


def test_invalid_utf8_bytes_are_translated_as_one_piece_each(tiny):
    # A stray continuation byte is a character to unicode_split (one spelled
    # piece) but not to tf.strings.length(unit="UTF8_CHAR"): counting pieces
    # by the latter failed the graph with "indices[n] = n is not in [0, n)".
    texts = [b"\x80", b"a \x80\x80 b", b"\xff\xfe caf\xe9 \xc3\x28 \x80", b"A man."]
    words = text.split_words(tf.constant(texts))
    known = tiny.source_lookup(words.flat_values) > 1
    ids, word = tiny._encode_words(words, known)
    pieces = text.to_pieces(words, lambda w: tiny.source_lookup(w) > 1)
    np.testing.assert_array_equal((word >= 0).numpy().sum(1), pieces.row_lengths().numpy())
    out = tiny.translate_details(tf.constant(texts))["translations"]
    assert out.shape == (4,)


@pytest.mark.slow
def test_served_signature_gives_what_the_translator_gives(tiny, tmp_path):
    from keras_seqmodels.export.translation import export_translator

    directory = str(tmp_path / "served")
    export_translator(tiny, directory)
    serve = tf.saved_model.load(directory).signatures["serving_default"]
    served = serve(inputs=tf.constant(TEXTS))
    python = tiny.translate(TEXTS, details=True)
    assert sorted(served) == ["confidence", "not_carried", "translations", "unfamiliar",
                              "unknown_rate"]
    assert [s.decode("utf-8") for s in served["translations"].numpy()] == [
        d["translation"] for d in python
    ]
    assert served["unfamiliar"].numpy().tolist() == [d["unfamiliar"] for d in python]
    assert [s.decode("utf-8").split() for s in served["not_carried"].numpy()] == [
        d["not_carried"] for d in python
    ]
    np.testing.assert_allclose(served["unknown_rate"].numpy(),
                               [d["unknown_rate"] for d in python], rtol=1e-6)
    with pytest.raises(tf.errors.InvalidArgumentError, match="at most 256 sentences in all"):
        serve(inputs=tf.constant([" ".join(["A dog runs."] * 300)]))


UNITS = [
    ("At 10:30, 3 men.", ["At", "10:30", ",", "3", "men", "."]),
    ("It is 3.5 km, 1,000 m or 1,2,3.",
     ["It", "is", "3.5", "km", ",", "1,000", "m", "or", "1,2,3", "."]),
    ("On 5th Street in 2017. 10 : 30", ["On", "5th", "Street", "in", "2017", ".", "10", ":", "30"]),
    ("Ends with 7.", ["Ends", "with", "7", "."]),
    ("", []),
]


@pytest.mark.parametrize("sentence, expected", UNITS)
def test_source_units_keep_numbers_whole(sentence, expected):
    units, unit_of_word = input_handling.source_units(tf.constant([sentence]))
    assert _decode(units) == [expected]
    words = text.split_words(tf.constant([sentence])).flat_values.numpy()
    # Each unit's words, in order, are the tokenizer's words of the sentence.
    regrouped = [b"".join(words[unit_of_word.numpy() == i]).decode() for i in range(len(expected))]
    assert regrouped == [u.replace(" ", "") for u in expected]


_NUMBER_PIECES = st.sampled_from(
    ["1", "10", ":", "30", ".", ",", "5th", " ", "a", "A", "(", "é", "2017", "\u00a0"]
)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.lists(_NUMBER_PIECES, max_size=20).map("".join), min_size=1, max_size=4))
def test_source_units_cover_the_tokenizers_words(sentences):
    units, unit_of_word = input_handling.source_units(tf.constant(sentences))
    words = text.split_words(tf.constant(sentences))
    assert unit_of_word.shape[0] == words.flat_values.shape[0]
    np.testing.assert_array_equal(np.diff(unit_of_word.numpy()) >= 0, True)
    flat_units = units.flat_values.numpy()
    for i, unit in enumerate(flat_units):
        parts = words.flat_values.numpy()[unit_of_word.numpy() == i]
        assert b"".join(parts) == unit.replace(b" ", b"")


# Numbers as users write them, put into an in-domain sentence.
_NUMBERS = st.one_of(
    st.integers(0, 3000).map(str),
    st.tuples(st.integers(0, 23), st.integers(0, 59)).map(lambda t: f"{t[0]}:{t[1]:02d}"),
    st.tuples(st.integers(0, 99), st.integers(0, 99)).map(lambda t: f"{t[0]}.{t[1]}"),
    st.integers(1000, 99_999).map(lambda n: f"{n:,}"),
    st.tuples(st.integers(1, 30), st.sampled_from(["st", "nd", "rd", "th"])).map(
        lambda t: f"{t[0]}{t[1]}"),
)
_TEMPLATES = [
    "A man is riding a bicycle at {} with {} dogs.",
    "{} children play in the snow near {}.",
    "Two dogs play in the snow, {} and {} times.",
]


def _number_key(number):
    return re.sub(r"^([0-9]+)(st|nd|rd|th)$", r"\1", number)


def _carried(numbers, translation, lost):
    """Each number is in the translation (as itself, its German word, or an
    ordinal's digits), one appearance for each number of the same value, or
    reported as not carried."""
    for key, needed in Counter(_number_key(n) for n in numbers).items():
        forms = {key} | {word for digits, word in input_handling.NUMBER_WORDS if digits == key}
        found = sum(
            len(re.findall(r"(?<![0-9])" + re.escape(form) + r"(?![0-9])", translation,
                           re.IGNORECASE))
            for form in forms
        )  # fmt: skip
        reported = sum(_number_key(unit) == key for unit in lost)
        if found + reported < needed:
            return False
    return True


def test_the_oracle_counts_each_number():
    assert _carried(["2", "2"], "2 Hunde und zwei Katzen.", [])
    assert not _carried(["2", "2"], "2 Hunde und Katzen.", [])
    assert _carried(["2", "2"], "2 Hunde und Katzen.", ["2"])
    assert not _carried(["5th", "5"], "5 Hunde.", [])


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.sampled_from(_TEMPLATES), _NUMBERS, _NUMBERS, st.booleans()),
                min_size=1, max_size=3))
def test_every_number_is_carried_or_reported(tiny, cases):
    # Sometimes the same number twice: each needs a word of its own.
    cases = [(template, a, a if same else b) for template, a, b, same in cases]
    texts = [template.format(a, b) for template, a, b in cases]
    out = tiny.translate(texts, details=True)
    for (_, a, b), result in zip(cases, out):
        assert _carried([a, b], result["translation"], result["not_carried"]), ((a, b), result)


# A translator whose vocabularies say which capitalised words are names:
# "John" is written only capitalised on both sides; "The", "Two" and
# "Christmas" also in lower case.
_NAMED_EN = [
    "John and the dog play .", "The dog and John play .", "two dogs play at christmas .",
    "Two dogs and 2 cats play at Christmas .", "the 5th dog and 5 cats .",
]
_NAMED_DE = [
    "John und der hund spielen .", "der hund und John spielen .",
    "zwei hunde spielen an weihnachten .", "zwei hunde und 2 katzen spielen .",
    "der 5 hund und 5 katzen .",
]


@pytest.fixture(scope="module")
def named():
    keras.utils.set_random_seed(0)
    src = text.build_vocabulary(_NAMED_EN, min_count=1)
    tgt = text.build_vocabulary(_NAMED_DE, min_count=1)
    core = EncoderDecoder(len(src) + 2, len(tgt) + 2, 8, 8, 8, start_id=2, end_id=3)
    return Translator(core, src, tgt, beam_size=3, max_output_length=12)


def _source(translator, sources):
    sentences = tf.constant(sources)
    words = text.split_words(sentences)
    known = translator.source_lookup(words.flat_values) > 1
    ids, word = translator._encode_words(words, known)
    return ids, word, words, known, sentences


def _output_ids(translator, outputs, end=True):
    ids = translator.encode_target(tf.constant(outputs))
    if end:
        ids = tf.concat([ids, tf.fill([len(outputs), 1], translator.model.end_id)], axis=1)
    return ids.to_tensor(0)


def _lost(translator, sources, outputs):
    """What ``carry_through`` reports lost when the search gave ``outputs``
    (words the target vocabulary has, no name to replace)."""
    ids, word, words, known, sentences = _source(translator, sources)
    out = _output_ids(translator, outputs)
    _, _, lost, count = input_handling.carry_through(
        translator, ids, word, out, words, known, sentences
    )
    lost = [s.decode("utf-8").split() for s in lost.numpy()]
    assert count.numpy().tolist() == [len(units) for units in lost]
    return lost


def test_a_name_the_vocabulary_knows_is_checked(named):
    lost = _lost(named, [
        "The dog and John play .", "John and the dog play at Christmas .",
        "Two dogs play .", "John and the dog play .",
    ], ["der hund spielen .", "der hund spielen .", "hunde spielen .", "John und der hund ."])
    # John anywhere, the first word too; not the ordinary words that a
    # sentence starts with, nor a capitalised word also written in lower case.
    assert lost == [["John"], ["John"], [], []]


def test_each_equal_number_needs_a_word_of_its_own(named):
    lost = _lost(named, [
        "Two dogs and 2 cats play .", "2 dogs and 2 cats play .", "2 dogs and 2 cats play .",
        "the 5th dog and 5 cats .", "the 5th dog and 5 cats .",
    ], [
        "zwei hunde und 2 katzen .", "2 hunde und katzen .", "2 hunde und 2 katzen .",
        "der 5 hund und katzen .", "der 5 hund und 5 katzen .",
    ])  # fmt: skip
    # One "2" in the output carries one "2" of the source, not both; "5th"
    # and "5" are both carried by "5" (German writes the ordinal "5.").
    assert lost == [[], ["2"], [], ["5"], []]


def _carry_best(translator, source, outputs, scores, margin, finished=None):
    """``carry_best`` of one source whose beam gave ``outputs`` (best first)."""
    ids, word, words, known, sentences = _source(translator, [source, "the dog and John ."])
    ends = [True] * len(outputs) if finished is None else finished
    rows = [_output_ids(translator, [o], end) for o, end in zip(outputs, ends)]
    width = max(r.shape[1] for r in rows)
    first = tf.stack([tf.pad(r[0], [[0, width - r.shape[1]]]) for r in rows])
    # A second sentence that loses nothing: its best candidate stays.
    second = tf.stack([_output_ids(translator, ["der hund und John ."])[0]] * len(outputs))
    second = tf.pad(second, [[0, 0], [0, max(0, width - second.shape[1])]])
    first = tf.pad(first, [[0, 0], [0, max(0, second.shape[1] - width)]])
    candidates = tf.stack([first, second])
    scores = tf.constant([scores, [-0.1] * len(outputs)], tf.float32)
    out, confidence, lost = input_handling.carry_best(
        translator, ids, word, candidates, scores, words, known, sentences, margin
    )
    assert out.numpy()[1] == b"der hund und John."
    return out.numpy()[0].decode("utf-8"), lost.numpy()[0].decode("utf-8"), confidence


def test_a_candidate_within_the_margin_that_carries_more_wins(named):
    outputs = ["der hund spielen .", "John und der hund spielen .", "John und der hund ."]
    # Within the margin, the candidate that keeps "John" (of two, the better).
    assert _carry_best(named, "John and the dog play .", outputs, [-1.0, -1.4, -1.6],
                       0.5)[:2] == ("John und der hund spielen.", "")
    # Beyond it, the best score, and "John" reported.
    assert _carry_best(named, "John and the dog play .", outputs, [-1.0, -1.6, -1.7],
                       0.5)[:2] == ("der hund spielen.", "John")
    # An unfinished candidate is not chosen however close it scores.
    assert _carry_best(named, "John and the dog play .", outputs, [-1.0, -1.1, -1.4], 0.5,
                       finished=[True, False, True])[:2] == ("John und der hund.", "")
    # No candidate keeps it: the best, with the unit reported.
    same = ["der hund spielen ."] * 3
    assert _carry_best(named, "John and the dog play .", same, [-1.0, -1.1, -1.2],
                       5.0)[:2] == ("der hund spielen.", "John")


def test_carry_margin_is_checked_and_saved(named, tmp_path):
    with pytest.raises(ValueError, match="Translator: `carry_margin` must be a finite number"):
        Translator(named.model, named.source_vocabulary, named.target_vocabulary,
                   carry_margin=-1)
    t = Translator(named.model, named.source_vocabulary, named.target_vocabulary,
                   carry_margin=0.25)
    t.build()
    path = str(tmp_path / "t.keras")
    t.save(path)
    assert keras.saving.load_model(path).carry_margin == 0.25


@pytest.fixture(scope="module")
def shipped():
    from keras_seqmodels import zoo

    return zoo.load("multi30k-en-de")


@pytest.mark.slow
def test_shipped_translator_on_the_inputs_users_give(shipped):
    out = shipped.predict(TEXTS, details=True)
    german = [d["translation"] for d in out]
    # Three sentences in, three out, each as alone.
    alone = shipped.predict(["A man is riding a bicycle.", "Two dogs play in the snow."])
    assert german[0] == " ".join(alone)
    # Shouted text reads as the ordinary sentence does.
    assert german[1] == shipped.predict("A man is riding a bicycle.")
    # Unknown numbers are copied, not spelled anew; what the model left out
    # is named, a time whose parts the vocabulary knows too.
    assert "5th" in german[2] and german[2].startswith("3 Kinder")
    assert out[2]["not_carried"] == ["10:30", "2017"]
    # In-domain text is familiar; emoji and French are not.
    assert [d["unfamiliar"] for d in out] == [False, False, False, True, False, True]
    assert out[5]["unknown_rate"] > 0.5 and out[0]["unknown_rate"] == 0.0
    with pytest.warns(UserWarning, match="text 0: unlike the training data"):
        shipped.predict(["🐶🐶🐶"])


@pytest.mark.slow
def test_shipped_translator_carries_times_decimals_and_names(shipped):
    texts = [
        "Two men are playing at 10:30.",
        "A man is holding 3.5 kg of fish at 1,000 meters.",
        "John and Mary are sitting on a bench in Paris.",
        "Peter and Anna are walking through Hamburg with their dog Rex.",
        "Football players on the field as a Sooner tries to tackle a player",
    ]
    out = shipped.predict(texts, details=True)
    german = [d["translation"] for d in out]
    # Times and decimals are one unit, copied whole (the model writes "10 : 30").
    assert "10:30" in german[0] and out[0]["not_carried"] == []
    assert "3.5" in german[1] and "1,000" in german[1]
    # A name the model turned into a German word ("Mütter") is the name again;
    # so is a name the vocabulary knows ("John", which it wrote "Schwarz").
    assert german[2].startswith("John und Mary") and "Paris" in german[2]
    assert out[2]["not_carried"] == []
    # Names: in the output or reported.
    for name in ("Anna", "Hamburg", "Rex"):
        assert name in german[3] or name in out[3]["not_carried"]
    assert out[3]["not_carried"]
    # The beam's best candidate leaves "Sooner" out; one within the margin
    # keeps it ("ein Sooner versucht ...") and is chosen.
    assert "Sooner" in german[4] and out[4]["not_carried"] == []


@pytest.mark.slow
def test_shipped_translator_checks_numbers_one_word_each(shipped):
    # The outputs a search might give, carried through: the article "Ein"
    # of "A man" carries no "1", nor one "zwei" or "3" two numbers.
    translator = shipped.model
    lost = _lost(translator, [
        "A man holds 1 dog.", "A man holds 1 dog.", "Two dogs and 2 cats play.",
        "Two dogs and 2 cats play.", "3 men and 3 women.", "3 men and 3 women.",
    ], [
        "Ein Mann hält Hunde.", "Ein Mann hält einen Hund.", "Zwei Hunde und Katzen spielen.",
        "Zwei Hunde und zwei Katzen spielen.", "3 Männer und Frauen.", "3 Männer und 3 Frauen.",
    ])  # fmt: skip
    assert lost == [["1"], [], ["2"], [], ["3"], []]
