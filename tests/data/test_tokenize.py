"""The UD-English-style tokenizer: a table of cases, and its TensorFlow
version equal to the Python one on the table and on random text."""

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from keras_seqmodels.data.tokenize import (
    PUNCT_RANGES,
    SPACE_RANGES,
    tf_tokenize,
    tokenize,
)

CASES = [
    ("I can't eat butter!", ["I", "ca", "n't", "eat", "butter", "!"]),
    ("Don't stop; it isn't over.", ["Do", "n't", "stop", ";", "it", "is", "n't", "over", "."]),
    ("WON'T", ["WO", "N'T"]),
    ("I'm sure they're fine, we've seen he'd go and I'll stay",
     ["I", "'m", "sure", "they", "'re", "fine", ",", "we", "'ve", "seen", "he", "'d", "go",
      "and", "I", "'ll", "stay"]),
    ("John's dog and the dogs' bones", ["John", "'s", "dog", "and", "the", "dogs", "'",
                                        "bones"]),
    ("It’s curly: don’t", ["It", "’s", "curly", ":", "do", "n’t"]),
    ("'Sounds good,' she said.", ["'", "Sounds", "good", ",", "'", "she", "said", "."]),
    ("It costs $3.50, or 1,000 yen at 10:30 on 12/31/2020.",
     ["It", "costs", "$", "3.50", ",", "or", "1,000", "yen", "at", "10:30", "on",
      "12/31/2020", "."]),
    ("The 1990s", ["The", "1990s"]),
    ("Ends with 5.", ["Ends", "with", "5", "."]),
    ("The U.S. and e.g. a.m. today", ["The", "U.S.", "and", "e.g.", "a.m.", "today"]),
    ("Mr. Smith, Dr. Who and Acme Inc. etc. too", ["Mr.", "Smith", ",", "Dr.", "Who", "and",
                                                   "Acme", "Inc.", "etc.", "too"]),
    # An abbreviation ending the text gives its period to the sentence, as in EWT.
    ("Apples, pears etc.", ["Apples", ",", "pears", "etc", "."]),
    ("At 5 p.m.", ["At", "5", "p.m", "."]),
    ("Back in the U.S.  ", ["Back", "in", "the", "U.S", "."]),
    ("I. Did it.", ["I", ".", "Did", "it", "."]),
    ("See http://example.com/a?b=1&c=2.", ["See", "http://example.com/a?b=1&c=2", "."]),
    ("(www.example.org)", ["(", "www.example.org", ")"]),
    ("Mail john.doe+x@mail.example.co.uk now", ["Mail", "john.doe+x@mail.example.co.uk",
                                                "now"]),
    ("Wait... what?! No -- never", ["Wait", "...", "what", "?!", "No", "--", "never"]),
    ("long-term and/or", ["long", "-", "term", "and", "/", "or"]),
    ("I cannot, I'm gonna", ["I", "can", "not", ",", "I", "'m", "gon", "na"]),
    ("Cannon wants", ["Cannon", "wants"]),
    ("“Quoted” «text»", ["“", "Quoted", "”", "«", "text", "»"]),
    ("café's naïve Ünïcödé", ["café", "'s", "naïve", "Ünïcödé"]),
    ("great😀!!", ["great", "😀", "!!"]),
    ("snake_case stays", ["snake_case", "stays"]),
    ("tabs\tand\u00a0no-break\u2003spaces\n", ["tabs", "and", "no", "-", "break",
                                              "spaces"]),
    ("", []),
    (" \t\n ", []),
    # UD English EWT conventions for web and e-mail text.
    ("it's fine, don't worry", ["it", "'s", "fine", ",", "do", "n't", "worry"]),
    ("Send an e-mail or E-Mail to bob@ENRON and @example.com",
     ["Send", "an", "e-mail", "or", "E-Mail", "to", "bob@ENRON", "and", "@example.com"]),
    ("mailto:jo@x.net re-read non-Microsoft anti-war long-term",
     ["mailto:jo@x.net", "re-read", "non-Microsoft", "anti-war", "long", "-", "term"]),
    ("Great :) sad :( wink ;-) grin :D (: ^^ ^_^ <3",
     ["Great", ":)", "sad", ":(", "wink", ";-)", "grin", ":D", "(:", "^^", "^_^", "<3"]),
    ("Posted 01-Feb-02 and 11-20-2000, pages 3-4 in 1969-1970",
     ["Posted", "01-Feb-02", "and", "11-20-2000", ",", "pages", "3", "-", "4", "in", "1969",
      "-", "1970"]),
    ("Call 713-853-3989, 1-800-991-9019, 713/853-5025, x 3-5213 or +1 at 77388-5746",
     ["Call", "713-853-3989", ",", "1-800-991-9019", ",", "713/853-5025", ",", "x",
      "3-5213", "or", "+1", "at", "77388-5746"]),
    ("** Note ** *** === <<quote>> $$$ ----==",
     ["**", "Note", "**", "***", "===", "<<", "quote", ">>", "$$$", "----=="]),
    ("Really.? Yes!. Hm?!", ["Really", ".?", "Yes", "!.", "Hm", "?!"]),
    ("See alt.animals.cat, Space.com and TEXT.htm (a .doc file)",
     ["See", "alt.animals.cat", ",", "Space.com", "and", "TEXT.htm", "(", "a", ".doc",
      "file", ")"]),
    ("J. Smith met Gen. Lee on Sat. at the U.S border, i.e here",
     ["J.", "Smith", "met", "Gen.", "Lee", "on", "Sat.", "at", "the", "U.S", "border", ",",
      "i.e", "here"]),
    ("O'Neill's AT&T b/c w/o #audiobooks Yahoo! in the '80s and 80's",
     ["O'Neill", "'s", "AT&T", "b/c", "w/o", "#audiobooks", "Yahoo!", "in", "the", "'80s",
      "and", "80's"]),
    ("He said ''no'' so I.", ["He", "said", "''", "no", "''", "so", "I", "."]),
    ("ACME PVT. LTD. a // b", ["ACME", "PVT.", "LTD.", "a", "//", "b"]),
    # Letters and periods ending in a letter; P.O.Box is P.O. and Box
    # (before a space: followed by punctuation, the last letter is split off).
    ("the U.S.A and, a.k.a the L.L.C, P.O.Box 5", ["the", "U.S.A", "and", ",", "a.k.a", "the",
                                                   "L.L.", "C", ",", "P.O.", "Box", "5"]),
    # Common abbreviations; but misc.consumers is a dotted name.
    ("Sun. in La. for 2 hrs. and 3 mins. at St. Paul, misc.consumers",
     ["Sun.", "in", "La.", "for", "2", "hrs.", "and", "3", "mins.", "at", "St.", "Paul", ",",
      "misc.consumers"]),
    # User names with underscores, @mentions, dotted names with hyphens, file names.
    ("to Perry@ENRON_DEVELOPMENT and @Ryan_2 of misc.consumers.frugal-living",
     ["to", "Perry@ENRON_DEVELOPMENT", "and", "@Ryan_2", "of",
      "misc.consumers.frugal-living"]),
    ("see Get-A-Free-House.com, ld2d-#69366-1.DOC and 02-05-02.doc.",
     ["see", "Get-A-Free-House.com", ",", "ld2d-#69366-1.DOC", "and", "02-05-02.doc", "."]),
    # Censored or stylised words, decimals without a leading zero, emoticons.
    ("sh*t, b**** and co$t at .15 -_- >:(",
     ["sh*t", ",", "b****", "and", "co$t", "at", ".15", "-_-", ">:("]),
    # A backquote for an apostrophe; runs of commas; a comma or colon before ?.
    ("Bob `s car,, or what:? ok,?", ["Bob", "`s", "car", ",,", "or", "what", ":?", "ok",
                                     ",?"]),
    # Contractions without the apostrophe, as EWT splits them.
    ("I dont know, im sure thats it. DONT! I dunno, cant wont",
     ["I", "do", "nt", "know", ",", "i", "m", "sure", "that", "s", "it", ".", "DO", "NT",
      "!", "I", "du", "n", "no", ",", "ca", "nt", "wo", "nt"]),
    # 'em and 'n, a dropped g, and I'ma (I 'm a), as in EWT.
    ("tell 'em, wash 'n fold; I'ma keep cookin' nothin'.",
     ["tell", "'em", ",", "wash", "'n", "fold", ";", "I", "'m", "a", "keep", "cookin'",
      "nothin'", "."]),
    # One or two letters after an inner apostrophe that are no clitic stay in
    # the word; clitics are still split.
    ("Al-Gu'ud, Purus'a and ma'am in Hawai'i; it's I'd we're I've you'll",
     ["Al", "-", "Gu'ud", ",", "Purus'a", "and", "ma'am", "in", "Hawai'i", ";", "it", "'s",
      "I", "'d", "we", "'re", "I", "'ve", "you", "'ll"]),
    # An extension with its x; runs of one bracket or double quote.
    ("Call x3-9890 (( now )) or \"\" DB", ["Call", "x3-9890", "((", "now", "))", "or", '""',
                                          "DB"]),
    # More abbreviations: ranks, contact labels, e.g. without its inner period.
    ("Maj. Lee, Tel. 1 Fax. 2 Mob. 3, eg. this", ["Maj.", "Lee", ",", "Tel.", "1", "Fax.", "2",
                                                 "Mob.", "3", ",", "eg.", "this"]),
    ("dont dont dont outta here; its fine, were done, Dona",
     ["do", "nt", "do", "nt", "do", "nt", "out", "ta", "here", ";", "its", "fine", ",",
      "were", "done", ",", "Dona"]),
]


@pytest.mark.parametrize("text, expected", CASES)
def test_tokenize_cases(text, expected):
    assert tokenize(text) == expected


def test_tf_tokenize_equals_python_on_the_cases():
    texts = [text for text, _ in CASES]
    got = tf_tokenize(texts).to_list()
    assert [[t.decode("utf-8") for t in row] for row in got] == [e for _, e in CASES]


def test_space_class_is_pythons_whitespace():
    spaces = {c for lo, hi in SPACE_RANGES for c in range(lo, hi + 1)}
    assert spaces == {c for c in range(0x110000) if chr(c).isspace()}
    punct = {c for lo, hi in PUNCT_RANGES for c in range(lo, hi + 1)}
    assert not spaces & punct and ord("_") not in punct


def test_tokens_cover_the_text():
    """No character is lost or added: the tokens are the text minus spaces."""
    text = "He said: \"I can't\" -- e.g. at 3.5% of U.S. GDP (http://x.org)..."
    assert "".join(tokenize(text)) == re.sub(r"\s", "", text)


def test_not_a_string_is_refused():
    with pytest.raises(TypeError, match="tokenize: `text` must be a string"):
        tokenize(b"bytes")


def test_tf_tokenize_batch_shapes():
    import tensorflow as tf

    out = tf_tokenize(tf.constant([], dtype=tf.string))
    assert out.shape[0] == 0
    out = tf_tokenize(tf.constant(["", "a b"]))
    assert out.to_list() == [[], [b"a", b"b"]]


# Text that exercises every branch: letters, digits, spaces of all kinds,
# apostrophes, dots, @, slashes, punctuation, Unicode letters and emoji.
_PIECES = st.sampled_from([
    "n't", "N'T", "'s", "'re", "'ll", "’m", "'", "’", ".", "..", "-", "--", "!", "?",
    "@", "/", ":", ",", "http://", "www.", "U.", "Mr", "can", "not", "gon", "na", "3",
    "dont", "im", "du", "nno", "etc", ".doc", "`s", "*", "$", "_", "#", "~",
    "1,0", "a", "Z", "é", "ß", "😀", " ", "\t", "\u00a0", "\u2003", "\n", "_", "\x00",
    "(", ")", "\"", "“", "…", "%", "$", "'em", "in'", "'n", "ud", "((", "]]", "x3-", "9890",
    "I'ma", "Fax.", "eg", "'a",
])
_TEXT = st.one_of(
    st.lists(_PIECES, max_size=25).map("".join),
    st.text(max_size=40),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_TEXT, min_size=1, max_size=6))
def test_tf_tokenize_equals_python_on_random_text(texts):
    import tensorflow as tf

    got = tf_tokenize(tf.constant([t.encode("utf-8") for t in texts])).to_list()
    assert [[t.decode("utf-8") for t in row] for row in got] == [tokenize(t) for t in texts]
    for text, tokens in zip(texts, got):
        assert "".join(t.decode("utf-8") for t in tokens) == "".join(text.split())
