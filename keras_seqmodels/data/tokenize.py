"""Raw English text to UD-English-style tokens, in Python and in TensorFlow.

``tokenize(text)`` (Python) and ``tf_tokenize(strings)`` (TensorFlow string
ops, for a served model's graph) give the same tokens, split the way the
Universal Dependencies English EWT treebank is tokenised, which is what the
zoo's tagger was trained on:

- punctuation is split off words (``"butter!"`` -> ``butter``, ``!``), one
  token per mark except runs of dots, dashes and ``!``/``?``
  (``...``, ``--``, ``?!``); hyphens and slashes inside words are split too
  (``long-term`` -> ``long``, ``-``, ``term``), as in EWT;
- clitics are split: ``can't`` -> ``ca``, ``n't``; ``don't`` -> ``do``,
  ``n't``; ``I'm`` -> ``I``, ``'m`` (also ``'s 're 've 'll 'd``; straight or
  curly apostrophe, or a backquote: `` `s``); ``cannot``, ``gonna``,
  ``wanna``, ``gotta``, ``outta`` become two words (``can not``, ``gon na``,
  ...), and so do contractions written without their apostrophe (``dont`` ->
  ``do``, ``nt``; ``cant`` -> ``ca``, ``nt``; ``im`` -> ``i``, ``m``;
  ``thats`` -> ``that``, ``s``; ``youre``, ``ive``, ``dunno`` -> ``du``,
  ``n``, ``no``), a closed list (``its``, ``were``, ``ill`` stay whole),
  and ``I'ma`` becomes ``I``, ``'m``, ``a``; but ``'em`` and ``'n`` (``tell
  'em``, ``rock 'n roll``) are one token, and so are a dropped g
  (``cookin'``, ``nothin'``) and a word with one or two letters after an
  inner apostrophe that are no clitic (``Gu'ud``, ``Purus'a``, ``ma'am``);
- kept whole: numbers with separators (``3.5``, ``1,000``, ``10:30``,
  ``12/31/2020``), phone numbers (``713-853-3989``, ``1-800-991-9019``,
  ``+1``, an extension ``x3-9890``), dates (``01-Feb-02``, ``11-20-2000``;
  a range such as ``3-4`` is split), decades (``'80s``, ``80's``), decimals
  (``.15``), abbreviations of single letters (``U.S.``, ``e.g.``, ``U.S``,
  ``i.e``; ``U.S.A``, ``a.k.a`` before a space) and capital initials before
  a space (``J. Smith``; not ``I.``), common titles and short forms
  (``Mr.``, ``Dr.``, ``Gen.``, ``Sat.``, ``Inc.``, ``etc.``, ``Calif.``,
  ``hrs.``, ``Vol.``, ``Maj.``, ``Fax.``, ``eg.``); but an abbreviation that
  ends the text gives its period to the sentence (``... etc.`` -> ``etc``,
  ``.``; ``at 5 p.m.`` -> ``p.m``, ``.``), as EWT does; URLs
  (``http://...``, ``www....``; closing punctuation is split off), e-mail
  addresses and user names (``bob@ENRON``, ``Perry@ENRON_DEVELOPMENT``,
  ``@example.com``, ``@Ryan``, ``mailto:...``), dotted names and files
  (``alt.animals.cat``, ``Space.com``, ``misc.consumers.frugal-living``,
  ``TEXT.htm``, ``.doc``, ``ld2d-#69366-1.DOC``, ``02-05-02.doc``),
  words after the prefixes that EWT keeps hyphenated (``e-mail``,
  ``non-Microsoft``, ``anti-war``, ``re-read``; other hyphenated words are
  split), inner apostrophes (``O'Neill``), ``AT&T``, ``b/c``, ``w/o``,
  hashtags, ``Yahoo!`` and words written with ``*`` or ``$`` for letters
  (``sh*t``, ``b****``, ``co$t``);
- emoticons are one token (``:)``, ``:-(``, ``;-)``, ``:D``, ``(:``, ``^^``,
  ``^_^``, ``-_-``, ``>:(``, ``<3``), and so are runs of marks or symbols
  (``.?``, ``!.``, ``….``, ``,,``, ``:?``, ``**``, ``***``, ``<<``, ``==``,
  ``----==``, ``))``, ``""``) and a double quote written as two apostrophes
  (``''``).

On UD English EWT dev (``benchmarks/tokenizer_ewt.py``) 99.4% token F1
from the raw text, and 15 of 25,147 gold words that no token covers when
the gold words are joined by spaces.

New relative to Keras and TensorFlow: ``keras.layers.TextVectorization`` and
``tf.strings.split`` split on whitespace only. Both versions here are one
regular expression (and a few small ones for the bare contractions, run
over its output), written out for Python's ``re`` and for RE2 (which
TensorFlow uses and which has no look-ahead): the two versions of the
expression use only explicit character ranges (no ``\\w``, ``\\s`` or
case-folding, whose Unicode tables differ between the engines), so they agree
on any text.
"""

import re

# Characters that separate tokens: exactly those of Python's str.isspace().
SPACE_RANGES = (
    (0x09, 0x0D), (0x1C, 0x20), (0x85, 0x85), (0xA0, 0xA0), (0x1680, 0x1680),
    (0x2000, 0x200A), (0x2028, 0x2029), (0x202F, 0x202F), (0x205F, 0x205F),
    (0x3000, 0x3000),
)
# Characters that are tokens of their own (punctuation and symbols): ASCII
# punctuation but "_", Latin-1 punctuation and signs, general punctuation,
# currency, arrows, mathematical operators, dingbats, CJK and full-width
# punctuation, emoji. Every other character is part of a word.
PUNCT_RANGES = (
    (0x21, 0x2F), (0x3A, 0x40), (0x5B, 0x5E), (0x60, 0x60), (0x7B, 0x7E),
    (0xA1, 0xA9), (0xAB, 0xAC), (0xAE, 0xB1), (0xB4, 0xB4), (0xB6, 0xB8),
    (0xBB, 0xBB), (0xBF, 0xBF), (0xD7, 0xD7), (0xF7, 0xF7),
    (0x2010, 0x2027), (0x2030, 0x205E), (0x20A0, 0x20CF), (0x2190, 0x22FF),
    (0x2600, 0x27BF), (0x3001, 0x3003), (0x3008, 0x3011), (0xFF01, 0xFF0F),
    (0xFF1A, 0xFF20), (0x1F300, 0x1FAFF),
)
APOSTROPHES = ((0x27, 0x27), (0x2019, 0x2019))  # ' and ’
# Characters a URL does not end with (they close the sentence or a bracket).
URL_TRAILING = tuple((ord(c), ord(c)) for c in ".,;:!?'\"’”)]}>")
TITLES = (
    "Mr", "Mrs", "Ms", "Dr", "Prof", "Sr", "Jr", "St", "vs", "etc", "Inc", "Ltd",
    "Co", "Corp", "Jan", "Feb", "Aug", "Sept", "Oct", "Nov", "Dec", "Ft", "Mt", "Gen",
    "Lt", "Capt", "Col", "Sgt", "Rev", "Gov", "Sen", "Rep", "Ave", "Blvd", "No", "Ont",
    "ext", "Mon", "Tue", "Tues", "Wed", "Thu", "Thur", "Thurs", "Fri", "Sat", "Attn",
    "Reps", "Sts", "Drs", "Dept", "dept", "approx", "Arrv", "arrv", "lb", "lbs", "INC",
    "LTD", "CORP", "PVT",
    # Other common English abbreviations written with a period: days and
    # months, US states and Canadian provinces, units and reference words.
    "Sun", "Mar", "Apr", "Jun", "Jul", "Sep", "Ala", "Ariz", "Ark", "Calif", "Colo",
    "Conn", "Del", "Fla", "Ga", "Ill", "Kan", "Kans", "Ky", "La", "Md", "Mass", "Mich",
    "Minn", "Mo", "Mont", "Neb", "Nev", "Okla", "Ore", "Pa", "Tenn", "Tex", "Va", "Vt",
    "Wis", "Wyo", "Que", "Alta", "Sask", "oz", "min", "mins", "hr", "hrs", "yr", "yrs",
    "sec", "secs", "sq", "pp", "pg", "est", "vol", "Vol", "fig", "Fig", "ref", "Ref",
    "tel", "Tel", "Ph", "esp", "Esp", "cf", "viz", "al", "Sec", "Sect", "Para",
    "Conf", "Assn", "Assoc", "Bros", "Univ", "Mgr", "Hwy", "Rd", "PS", "ps",
    # Titles and ranks of the common English lists (Moses' non-breaking
    # prefixes), contact labels beside Tel. (Fax., Mob.), and e.g. / i.e.
    # written without their inner period (eg., ie.).
    "Adm", "Asst", "Bldg", "Brig", "Cmdr", "Cpl", "Hon", "Maj", "Messrs", "Mme", "Mlle",
    "Msgr", "Pfc", "Pvt", "Supt", "Nos", "Fax", "Mob", "eg", "ie",
)
# Prefixes that EWT keeps joined to the rest of the word by a hyphen
# (e-mail, non-profit, anti-war, ...), where other hyphenated words are split;
# chosen on EWT train (kept-whole words beginning so outnumber split ones).
PREFIXES = (
    "e", "non", "pre", "anti", "mid", "re", "post", "co", "over", "pro", "multi", "ex",
    "sub", "semi", "cross", "neo", "counter", "mis", "un", "intra", "micro", "socio",
    "psycho", "arch", "vice",
)
MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
# File name endings kept with their dot when written alone (".doc").
EXTENSIONS = (
    "doc", "docx", "pdf", "xls", "xlsx", "ppt", "htm", "html", "txt", "vcf", "jpg", "gif",
    "png", "zip", "exe", "com", "org", "net",
)
# Endings that make a file name of anything before them (ld2d-#69366-1.DOC,
# 02-05-02.doc, ENRONR~1.DOC), in either case.
FILE_EXTENSIONS = (
    "docx", "doc", "pdf", "xlsx", "xls", "pptx", "ppt", "html", "htm", "txt", "rtf", "csv",
    "vcf", "jpeg", "jpg", "gif", "png", "zip", "exe", "wav", "mp3",
)


def _char(code, engine):
    if engine == "re2":
        return f"\\x{{{code:X}}}"
    return f"\\U{code:08X}" if code > 0xFFFF else f"\\u{code:04X}"


def _ranges(ranges, engine):
    return "".join(
        _char(lo, engine) if lo == hi else f"{_char(lo, engine)}-{_char(hi, engine)}"
        for lo, hi in ranges
    )


def _anycase(word):
    return "".join(f"[{c.lower()}{c.upper()}]" for c in word)


def _first_anycase(word):
    return f"[{word[0].lower()}{word[0].upper()}]{word[1:]}"


def _pattern(engine):
    """The tokenising expression for ``engine`` (``"python"`` or ``"re2"``).

    Nine groups, of which one to three take part in each match; replacing
    every match by `` \\1 \\2 ... \\9 `` and splitting on spaces gives the
    tokens: (1, 2) a word and the ``n't`` after it, or a word or letters
    abbreviation and the period that ends the text, (3) a token kept whole
    (URL, e-mail, file name, abbreviation, date, phone number, number,
    dotted name, prefixed word, emoticon...), (4, 5) a clitic (``'s``...),
    a capital initial, ``'em``, ``'n``, a dropped g (``cookin'``) or a word
    with a short ending after an apostrophe (``Gu'ud``), and the space or
    punctuation after it (that check stands in for a look-ahead), (6, 7, 8) ``cannot``, ``gonna``,
    ``wanna``, ``gotta``, ``outta`` as two words (``can not``, ``gon
    na``...), as in EWT, and what follows, (9) a lone ``n't``, a run
    of punctuation, one punctuation mark or a word.
    """
    space = _ranges(SPACE_RANGES, engine)
    punct = _ranges(PUNCT_RANGES, engine)
    apos = f"[{_ranges(APOSTROPHES, engine)}]"
    trailing = _ranges(URL_TRAILING, engine)
    word = f"[^{space}{punct}]"
    alnum = "[A-Za-z0-9_]"
    url = rf"(?:[hH][tT][tT][pP][sS]?://|[wW][wW][wW]\.)[^{space}]*[^{space}{trailing}]"
    email = (
        r"(?:mailto:)?[A-Za-z0-9][A-Za-z0-9._%+\-]*@[A-Za-z0-9_\-]+(?:\.[A-Za-z0-9_\-]+)*"
        r"|@[A-Za-z0-9_\-]+(?:\.[A-Za-z0-9_\-]+)+|@[A-Za-z][A-Za-z0-9_]*"
    )
    abbreviation = r"(?:[A-Za-z]\.){2,}"
    titles = rf"(?:{'|'.join(TITLES)})\."
    # U.S.A, a.k.a, i.e: letters and periods ending in a letter, before a
    # space (taken along, and dropped by the split), so that P.O.Box stays
    # P.O. Box.
    letters = r"(?:[A-Za-z]\.)+[A-Za-z] "
    # Phone numbers (713-853-3989, 1-800-991-9019, 713/853-5025, 3-5213,
    # ZIP+4 codes, dates (11-20-2000, 01-Feb-02); ranges such as 3-4 or
    # 1969-1970 are split, as in EWT.
    # An extension may be written with its x (x3-9890).
    phone = (
        r"(?:\+|[xX])?(?:[0-9]+[-/])*[0-9]{1,3}-[0-9]{4}|[0-9]{5}-[0-9]{4}"
        r"|[0-9]{1,2}-[0-9]{1,2}-[0-9]{2,4}"
    )
    date = rf"[0-9]{{1,2}}-(?:{'|'.join(MONTHS)})[a-z]*-[0-9]{{2,4}}"
    number = (
        r"[0-9]+(?:[.,:/][0-9]+)+|\+[0-9]+|\.[0-9]+|[0-9]+" + apos + "s|" + apos + "[0-9]{2}s?"
    )
    # Dotted names (alt.animals.cat, Space.com, TEXT.htm, U.S, i.e) and ".doc".
    # ... also with hyphens inside their parts (misc.consumers.frugal-living,
    # Get-A-Free-House.com), and file names.
    part = rf"{alnum}+(?:-{alnum}+)*"
    dotted = rf"{part}(?:\.{part})+|\.(?:{'|'.join(EXTENSIONS)})"
    file_name = (
        rf"[A-Za-z0-9][A-Za-z0-9_#~%!.\-]*\.(?:{'|'.join(_anycase(e) for e in FILE_EXTENSIONS)})"
        rf"{alnum}*"
    )
    prefixed = rf"(?:{'|'.join(_first_anycase(p) for p in PREFIXES)})-{word}+"
    inner_apostrophe = rf"[A-Za-z]+{apos}[A-Za-z]{{3,}}"  # O'Neill, Shi'ite, c'est
    emoticon = r">?[:;=]-?[()DPpOo/|\]\[]|\([:;]|<3|\^_?\^|-_-"
    named = r"[A-Za-z]+&[A-Za-z]+|#[A-Za-z][A-Za-z0-9_]*|[wW]/(?:out|o)?|[A-Za-z]/[A-Za-z]|Yahoo!"
    # Words written with * or $ for letters (sh*t, b****, co$t).
    censored = r"[A-Za-z]+(?:[*$]+[A-Za-z]+)+|[A-Za-z]\*{2,}"
    negation = f"[nN]{apos}[tT]"
    # A clitic's apostrophe may also be written as a backquote (`s).
    backquote = ((0x60, 0x60),)
    clitic = f"[{_ranges(APOSTROPHES + backquote, engine)}](?:[sSmMdD]|[rR][eE]|[vV][eE]|[lL][lL])"
    # Runs: dots and marks (..., ?!, .?, ….), symbols (**, <<, ==, ----==, //),
    # quotes written as two apostrophes ('' ’’), ,, and :? or ,?, and runs of
    # one bracket or double quote ((, )), "").
    punct_run = (
        rf"[.!?…]{{2,}}|[-=*+~#<>^$|/\\\\]{{2,}}|''|’’|‘’|‘‘|[,:]\?|,{{2,}}"
        rf"|\(\(+|\)\)+|\[\[+|\]\]+|\{{\{{+|\}}\}}+|\"\"+|[{punct}]"
    )
    fused_head = "|".join(_anycase(w) for w in ("can", "gon", "wan", "got", "out"))
    fused_tail = "|".join(_anycase(w) for w in ("not", "na", "ta"))
    initial = "[A-HJ-Z]\\."  # a capital initial (not I.) before a space
    # Before a space or punctuation too: 'em and 'n ("tell 'em", "rock 'n
    # roll"), a dropped g (cookin', nothin'), and a name with one or two
    # letters after an inner apostrophe that are no clitic (Gu'ud, Purus'a,
    # Hawai'i, ma'am; not it's, I'd, we're, I've, you'll).
    elided = f"{apos}(?:[eE][mM]|[nN])|[a-z]+in{apos}"
    short = "".join(c for c in "abcdefghijklmnopqrstuvwxyz" if c not in "dlmrstv")
    short = f"[{short}{short.upper()}][A-Za-z]?|[rRvV][a-df-zA-DF-Z]?|[lL][a-km-zA-KM-Z]?"
    short_apostrophe = f"[A-Za-z]+{apos}(?:{short})"
    # The period of an abbreviation that ends the text is the sentence's own
    # (etc ., p.m ., U.S .), as in EWT: taken off before the rest is tried.
    final_stem = rf"{word}+?|(?:[A-Za-z]\.)+[A-Za-z]"
    return (
        f"({final_stem})({negation}|\\. *$)"
        f"|({url}|{email}|{file_name}|{letters}|{abbreviation}|{titles}|{date}|{phone}"
        f"|{number}|{dotted}|{prefixed}|{inner_apostrophe}|{emoticon}|{named}|{censored})"
        f"|({clitic}|{initial}|{elided}|{short_apostrophe})([{space}]|{punct_run})"
        f"|({fused_head})({fused_tail})([{space}]|{punct_run})"
        f"|({negation}|{punct_run}|{word}+)"
    )


# Contractions written without their apostrophe, split as EWT splits them
# (dont -> do nt, cant -> ca nt, im -> i m, thats -> that s, dunno -> du n
# no): a second pass over the tokens of the first, each a whole token
# (between spaces, which the first pass's rewrite puts on both sides). In
# any case (DONT -> DO NT), but im and ive only as written in lower case or
# capitalised (IM is instant messaging).
_BARE = (
    (("do", "does", "did", "is", "are", "was", "were", "have", "has", "had", "would",
      "could", "should", "ca", "wo", "ai", "must", "need"), ("nt",)),
    (("[iI]",), ("m|ve",)),
    (("you", "they"), ("re", "ve")),
    (("that", "what", "there", "he", "she"), ("s",)),
    (("du",), ("n",), ("no",)),
)
BARE_PATTERNS = tuple(
    " "
    + "".join(
        "(" + "|".join(w if "[" in w or "|" in w else _anycase(w) for w in part) + ")"
        for part in parts
    )
    + " "
    for parts in _BARE
)
BARE_REWRITES = tuple(
    " " + " ".join(f"\\{i + 1}" for i in range(len(parts))) + " " for parts in _BARE
)
# I'ma is I 'm a in EWT: the first pass gives I ' ma.
BARE_PATTERNS += (" ([iI]) +(['’]) +([mM])([aA]) ",)
BARE_REWRITES += (" \\1 \\2\\3 \\4 ",)


PYTHON_PATTERN = _pattern("python")
RE2_PATTERN = _pattern("re2")
PYTHON_SPACE = f"[{_ranges(SPACE_RANGES, 'python')}]"
RE2_SPACE = f"[{_ranges(SPACE_RANGES, 're2')}]"
_REWRITE = r" \1 \2 \3 \4 \5 \6 \7 \8 \9 "
_TOKEN_RE = re.compile(PYTHON_PATTERN)
_SPACE_RE = re.compile(PYTHON_SPACE)
_BARE_RES = tuple(re.compile(p) for p in BARE_PATTERNS)


def tokenize(text):
    """Split raw English text into UD-English-style tokens.

    Args:
        text: a string (a sentence or any text).

    Returns:
        A list of token strings; ``[]`` for empty or blank text.

    Example:

    >>> tokenize("I can't eat butter!")
    ['I', 'ca', "n't", 'eat', 'butter', '!']
    >>> tokenize("I'm in the U.S. with $3.5 (see www.example.com).")
    ['I', "'m", 'in', 'the', 'U.S.', 'with', '$', '3.5', '(', 'see', 'www.example.com', ')', '.']
    """
    if not isinstance(text, str):
        raise TypeError(f"tokenize: `text` must be a string. Received: {type(text).__name__}")
    # Spaces first become " ", and one is added at the end, so that a clitic
    # at the very end of the text is followed by a space.
    spaced = _TOKEN_RE.sub(_REWRITE, _SPACE_RE.sub(" ", text) + " ")
    for pattern, rewrite in zip(_BARE_RES, BARE_REWRITES):
        spaced = pattern.sub(rewrite, spaced)
    return spaced.split()


def tf_tokenize(strings):
    """``tokenize`` as TensorFlow ops, for a graph (e.g. a served signature).

    Args:
        strings: a string tensor of shape ``(batch,)`` (UTF-8).

    Returns:
        A ``tf.RaggedTensor`` of shape ``(batch, None)``: the tokens of each
        string, the same as ``tokenize`` gives for valid UTF-8 text.

    Example:

    >>> import tensorflow as tf
    >>> tf_tokenize(tf.constant(["I can't eat butter!"])).to_list()
    [[b'I', b'ca', b"n't", b'eat', b'butter', b'!']]
    """
    import tensorflow as tf

    strings = tf.convert_to_tensor(strings, dtype=tf.string)
    spaced = tf.strings.join([tf.strings.regex_replace(strings, RE2_SPACE, " "), " "])
    spaced = tf.strings.regex_replace(spaced, RE2_PATTERN, _REWRITE)
    for pattern, rewrite in zip(BARE_PATTERNS, BARE_REWRITES):
        spaced = tf.strings.regex_replace(spaced, pattern, rewrite)
    return tf.strings.split(spaced)
