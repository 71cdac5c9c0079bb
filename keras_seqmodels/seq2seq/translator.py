"""Strings in, strings out: tokenizer, encoder-decoder and search in one model."""

import keras

from keras_seqmodels.seq2seq import input_handling, parallel_text, text
from keras_seqmodels.seq2seq.encoder_decoder import EncoderDecoder
from keras_seqmodels.training import loop
from keras_seqmodels.utils import bounds, serialization, validation
from keras_seqmodels.utils import validation as checks

# How far below the best beam score (length-normalised log-probability) a
# candidate that carries more numbers and names may score and still be chosen
# (``Translator(carry_margin=...)``); chosen for the zoo's English-German
# translator (its card: validation BLEU is the same for any margin, and on
# training sentences with numbers and names BLEU peaks at 1.0).
CARRY_MARGIN = 1.0


@keras.saving.register_keras_serializable(package="keras_seqmodels")
class Translator(keras.Model):
    """A translation model whose inputs and outputs are raw text.

    ``Translator(strings) -> strings``: the text is split into words and
    characters (``seq2seq.text``), looked up with ``keras.layers.StringLookup``,
    an end token is appended, the ``EncoderDecoder`` decodes with beam search
    (or greedily with ``beam_size=1``), and the best hypothesis is looked up
    back into pieces and detokenized. The vocabularies are part of the
    model's config, so a saved ``.keras`` file or an exported SavedModel
    needs nothing else.

    New relative to Keras: Keras's text layers map strings to ids only; this
    model also decodes ids to text, in the graph.

    String tensors exist on the TensorFlow backend only, so this model runs
    there; the ``EncoderDecoder`` it wraps runs on any backend.

    ``translate`` (Python strings in and out) and ``translation_function``
    (the compiled search behind it) trace the search once per beam size and
    keep it on the model, so only the first call of a beam size pays for the
    tracing; the zoo task's ``predict`` and ``seqmodels translate`` use them.

    Input handling (``translate_details``, which ``call`` and the exported
    signature run): each string is split into sentences, translated
    sentence by sentence and joined back; shouted or uncased sentences are
    re-cased to the training data's casing; numbers and names are copied
    from the source into the output words that attend to them
    (``input_handling.carry_through``), and of the beam's candidates within
    ``carry_margin`` of the best score the one that loses the fewest is
    kept (``input_handling.carry_best``); and each text gets an
    unknown-word rate, a confidence and an ``unfamiliar`` flag.

    Robustness: an empty (or blank) string translates to ""; sentences are
    cut to ``max_source_length`` pieces; outputs stop at ``max_output_length``
    tokens; characters never seen in training become the unknown token,
    which is dropped from the output.

    Args:
        model: an ``EncoderDecoder`` (ids 0 = padding, 1 = unknown, and its
            ``start_id``/``end_id`` must be those of ``<s>``/``</s>``).
        source_vocabulary, target_vocabulary: lists of pieces, from
            ``text.build_vocabulary`` (without the padding/unknown tokens).
        beam_size: 1 for greedy decoding, more for beam search.
        alpha: length-normalisation exponent of the beam search.
        max_source_length: source pieces kept (longer inputs are cut).
        max_output_length: most output tokens.
        max_unknown_rate, min_confidence: a text is flagged ``unfamiliar``
            by ``translate_details`` when more of its words than
            ``max_unknown_rate`` are unknown, or when a sentence's mean
            log-probability per output token is below ``min_confidence``.
            The defaults were chosen on the validation set of the zoo's
            English-German translator: just beyond the most extreme of its
            1,014 sentences (unknown rate 0.30, confidence -1.18), so that
            none of them is flagged; calibrate them on your own data.
        carry_margin: a finished beam candidate whose score (the beam's
            length-normalised log-probability) is at most this far below
            the best one's may be chosen when it loses fewer numbers and
            names (0: only ties). The default was chosen on the zoo's
            English-German translator (see its card).

    Call arguments:
        strings: string tensor ``(batch,)``.

    Returns:
        string tensor ``(batch,)``.

    Example:

    >>> from keras_seqmodels.seq2seq import EncoderDecoder
    >>> from keras_seqmodels.seq2seq.translator import Translator
    >>> from keras_seqmodels.seq2seq import input_handling, parallel_text, text
    >>> vocab = text.build_vocabulary(["a b c", "a b"], min_count=1)
    >>> core = EncoderDecoder(len(vocab) + 2, len(vocab) + 2, 8, 8, 8,
    ...                       start_id=2, end_id=3)
    >>> t = Translator(core, vocab, vocab, beam_size=2, max_output_length=5)
    >>> import numpy as np
    >>> t(np.array(["a b", ""])).shape  # untrained: the strings are arbitrary
    TensorShape([2])

    Reference:
        Sennrich, Haddow & Birch 2016 (open vocabularies through sub-word
        units; here the simplest: characters for rare words).
    """

    def __init__(
        self,
        model,
        source_vocabulary,
        target_vocabulary,
        beam_size=5,
        alpha=0.6,
        max_source_length=256,
        max_output_length=200,
        max_unknown_rate=0.3,
        min_confidence=-1.2,
        carry_margin=CARRY_MARGIN,
        **kwargs,
    ):
        super().__init__(**kwargs)
        name = type(self).__name__
        if not isinstance(model, EncoderDecoder):
            raise ValueError(
                f"{name}: `model` must be a keras_seqmodels.seq2seq."
                f"EncoderDecoder. Received: {type(model).__name__}"
            )
        self.model = model
        self.source_vocabulary = list(source_vocabulary)
        self.target_vocabulary = list(target_vocabulary)
        self.beam_size = validation.check_positive_int(name, "beam_size", beam_size)
        self.alpha = float(alpha)
        self.max_source_length = validation.check_positive_int(
            name, "max_source_length", max_source_length
        )
        self.max_output_length = validation.check_positive_int(
            name, "max_output_length", max_output_length
        )
        self.max_unknown_rate = float(max_unknown_rate)
        self.min_confidence = float(min_confidence)
        if not validation.is_real(carry_margin) or not 0 <= carry_margin < float("inf"):
            raise ValueError(
                f"{name}: `carry_margin` must be a finite number >= 0. "
                f"Received: carry_margin={carry_margin!r}"
            )
        self.carry_margin = float(carry_margin)
        for side, vocab, size in (
            ("source", self.source_vocabulary, model.encoder.vocabulary_size),
            ("target", self.target_vocabulary, model.decoder.vocabulary_size),
        ):
            if len(vocab) + 2 != size:
                raise ValueError(
                    f"{name}: the {side} vocabulary has {len(vocab)} pieces, "
                    f"so the model's {side} vocabulary size must be "
                    f"{len(vocab) + 2} (with padding and unknown). Received "
                    f"{size}"
                )
        start = self.target_vocabulary.index(text.START) + 2
        end = self.target_vocabulary.index(text.END) + 2
        if (model.start_id, model.end_id) != (start, end):
            raise ValueError(
                f"{name}: the model's start_id/end_id ({model.start_id}, "
                f"{model.end_id}) must be the ids of {text.START!r} and "
                f"{text.END!r} in the target vocabulary ({start}, {end})."
            )
        self.source_end_id = self.source_vocabulary.index(text.END) + 2
        self.source_lookup = keras.layers.StringLookup(
            vocabulary=self.source_vocabulary, mask_token=text.PAD,
            oov_token=text.UNK, name="source_lookup",
        )
        self.target_lookup = keras.layers.StringLookup(
            vocabulary=self.target_vocabulary, mask_token=text.PAD,
            oov_token=text.UNK, name="target_lookup",
        )
        self.target_inverse = keras.layers.StringLookup(
            vocabulary=self.target_vocabulary, mask_token=text.PAD,
            oov_token=text.UNK, invert=True, name="target_inverse",
        )
        self._searches = _CompiledSearches()

    @classmethod
    def from_parallel_text(cls, source_path, target_path, validation=None, **options):
        """Train a translator on two aligned plain-text files.

        The same as ``keras_seqmodels.seq2seq.train_translator`` (see there
        for ``options``): vocabularies from the text, an ``EncoderDecoder``
        trained by teacher forcing, returned wrapped in a ``Translator``.
        """
        return train_translator(source_path, target_path, validation, **options)

    def build(self, input_shape=None):
        if not self.model.built:
            self.model.build(((None, None), (None, None)))
        self.built = True

    @property
    def _default_save_signature(self):
        # Keras's TensorFlow layer derives a default signature from the
        # shapes of the first call with float inputs, which a model of
        # strings cannot trace; exports declare their string signature
        # explicitly (keras_seqmodels.export.translation).
        return None

    # Text <-> ids (TensorFlow) -------------------------------------------

    def encode_source(self, strings):
        """``(batch,)`` strings to int32 ids ``(batch, S)``, end id appended."""
        import tensorflow as tf

        strings = tf.convert_to_tensor(strings, tf.string)
        pieces = text.to_pieces(
            text.split_words(strings),
            lambda words: self.source_lookup(words) > 1,
        )
        ids = tf.cast(self.source_lookup(pieces), tf.int32)
        ids = ids[:, : self.max_source_length - 1]
        end = tf.fill([tf.shape(strings)[0], 1], self.source_end_id)
        ids = tf.concat([ids, tf.RaggedTensor.from_tensor(end)], axis=1)
        return ids.to_tensor(0)

    def _encode_words(self, words, known):
        """``encode_source`` of split words, and the word of each piece.

        Returns ``(ids, word)``: int32 ``(n, S)`` as ``encode_source`` gives,
        and int64 ``(n, S)``, the index in ``words.flat_values`` of the word
        each piece spells (``-1`` for the end token and padding).
        """
        import tensorflow as tf

        pieces = text.to_pieces(words, lambda w: self.source_lookup(w) > 1)
        # Counted as ``to_pieces`` spells them: ``unicode_split`` makes each
        # invalid UTF-8 byte a character of its own, which
        # ``tf.strings.length(unit="UTF8_CHAR")`` does not count.
        chars = tf.strings.unicode_split(words.flat_values, "UTF-8").row_lengths()
        per_word = tf.where(known, tf.ones_like(chars), chars)
        word = tf.repeat(tf.range(tf.size(chars, out_type=tf.int64)), per_word)
        word = pieces.with_flat_values(word)[:, : self.max_source_length - 1]
        ids = tf.cast(self.source_lookup(pieces), tf.int32)[:, : self.max_source_length - 1]
        n = tf.shape(ids.row_splits)[0] - 1
        end = tf.RaggedTensor.from_tensor(tf.fill([n, 1], self.source_end_id))
        no_word = tf.RaggedTensor.from_tensor(tf.fill([n, 1], tf.constant(-1, tf.int64)))
        return (
            tf.concat([ids, end], axis=1).to_tensor(0),
            tf.concat([word, no_word], axis=1).to_tensor(-1),
        )

    def encode_target(self, strings):
        """Target text to ragged piece ids (no start/end), for training data."""
        import tensorflow as tf

        pieces = text.to_pieces(
            text.split_words(tf.convert_to_tensor(strings, tf.string)),
            lambda words: self.target_lookup(words) > 1,
        )
        return tf.cast(self.target_lookup(pieces), tf.int32)

    def decode_target(self, ids):
        """Int ids ``(batch, T)`` to text, stopping at the end id."""
        import tensorflow as tf

        ids = tf.convert_to_tensor(ids)
        ended = tf.cumsum(tf.cast(tf.equal(ids, self.model.end_id), tf.int32), axis=1)
        keep = tf.logical_and(tf.equal(ended, 0), ids > 3)
        pieces = self.target_inverse(tf.ragged.boolean_mask(ids, keep))
        return text.detokenize(pieces)

    # Translation ---------------------------------------------------------

    def translate_ids(self, source_ids, beam_size=None):
        """Best output ids ``(batch, T)`` for source ids."""
        return self.translate_candidates(source_ids, beam_size)[0][:, 0]

    def translate_candidates(self, source_ids, beam_size=None):
        """Every hypothesis of the search: ``(tokens, scores)``.

        ``tokens``: int32 ``(batch, beam, T)``, best first; ``scores``:
        float32 ``(batch, beam)``, the beam's length-normalised
        log-probabilities (greedy decoding: one hypothesis, score 0).
        """
        from keras import ops

        beam_size = self.beam_size if beam_size is None else beam_size
        max_length = ops.minimum(
            2 * ops.shape(source_ids)[1] + 10, self.max_output_length
        )
        if beam_size == 1:
            tokens, _ = self.model.greedy(source_ids, max_length=max_length)
            return tokens[:, None], ops.zeros((ops.shape(tokens)[0], 1), "float32")
        tokens, scores, _ = self.model.beam(
            source_ids, beam_size=beam_size, alpha=self.alpha, max_length=max_length
        )
        return tokens, scores

    def call(self, strings, beam_size=None):
        return self.translate_details(strings, beam_size)["translations"]

    def translate_details(self, strings, beam_size=None):
        """Translations of raw texts and how familiar each text looked.

        Each text is split into sentences (``input_handling.split_sentences``),
        each sentence re-cased if it is shouted or uncased
        (``input_handling.normalise_case``), translated, its numbers and
        names carried through (``input_handling.carry_best``), and the translations
        joined back, one per text.

        Args:
            strings: string tensor ``(batch,)``.
            beam_size: 1 for greedy decoding (default: the model's).

        Returns:
            Dict of ``(batch,)`` tensors: ``translations`` (string),
            ``unknown_rate`` (float32: the share of the text's words that
            are neither in the source vocabulary nor numbers),
            ``confidence`` (float32: the lowest, over the text's sentences,
            of the model's mean log-probability per output token) and
            ``unfamiliar`` (bool: ``unknown_rate > max_unknown_rate`` or
            ``confidence < min_confidence``).
        """
        import tensorflow as tf

        sentences = input_handling.split_sentences(tf.convert_to_tensor(strings, tf.string))
        details = self.translate_sentences(sentences.flat_values, beam_size)
        return input_handling.join_rows(
            sentences.row_splits, details, self.max_unknown_rate, self.min_confidence
        )

    def translate_sentences(self, sentences, beam_size=None):
        """Per-sentence ``translations``, ``words``, ``unknown_words`` and
        ``confidence`` (``(n,)`` tensors) of ``(n,)`` single sentences; see
        ``translate_details``, which joins them per text."""
        import tensorflow as tf

        sentences = tf.convert_to_tensor(sentences, tf.string)

        def translate():
            return self._translate_sentences(sentences, beam_size)

        def empty():  # the encoder's gathers fail on a (0, 0) id tensor at run time
            return {
                "translations": tf.zeros([0], tf.string),
                "words": tf.zeros([0], tf.int32),
                "unknown_words": tf.zeros([0], tf.int32),
                "confidence": tf.zeros([0], tf.float32),
                "not_carried": tf.zeros([0], tf.string),
            }

        return tf.cond(tf.shape(sentences)[0] > 0, translate, empty)

    def _vocabulary_id(self, words):
        import tensorflow as tf

        return tf.cast(self.source_lookup(words), tf.int32)

    def _translate_sentences(self, sentences, beam_size):
        import tensorflow as tf

        sentences = input_handling.normalise_spaces(sentences)
        sentences, _ = input_handling.normalise_case(
            sentences, text.split_words(sentences), self._vocabulary_id
        )
        words = text.split_words(sentences)
        flat = words.flat_values
        known = self._vocabulary_id(flat) > 1
        has_digit = tf.strings.regex_full_match(flat, ".*[0-9].*")
        has_letter = tf.strings.regex_full_match(flat, ".*[^.,!?;:()].*")
        # Unknown words: not in the vocabulary, not numbers, not punctuation.
        unknown = tf.logical_not(known | has_digit | tf.logical_not(has_letter))
        counts = {
            "words": tf.reduce_sum(tf.cast(words.with_flat_values(has_letter), tf.int32), 1),
            "unknown_words": tf.reduce_sum(tf.cast(words.with_flat_values(unknown), tf.int32), 1),
        }
        source_ids, source_word = self._encode_words(words, known)
        candidates, scores = self.translate_candidates(source_ids, beam_size=beam_size)
        out, confidence, lost = input_handling.carry_best(
            self, source_ids, source_word, candidates, scores, words, known, sentences,
            self.carry_margin,
        )  # fmt: skip
        # Nothing to translate gives nothing, not a guess from the end token.
        blank = tf.equal(tf.strings.length(sentences), 0)
        return {
            "translations": tf.where(blank, tf.constant(""), out),
            "confidence": tf.where(blank, 0.0, confidence),
            "not_carried": lost,
            **counts,
        }

    def translation_function(self, beam_size=None):
        """The compiled search: a ``tf.function`` of ``translate_sentences``.

        It maps single sentences ``(n,)`` to their per-sentence details
        (``translations``, ``words``, ``unknown_words``, ``confidence``,
        ``not_carried``, each ``(n,)``); ``translate`` splits texts into
        sentences, runs it on them ``batch_size`` at a time and joins the
        results (``input_handling.join_rows``). Traced once for its input
        signature, a string vector of any length; the sentences' lengths
        are tensor values inside it, so no batch or length needs a trace of
        its own (sources are not padded to a length bucket: the output limit
        2 S + 10 follows from the source width S, and padding would change
        it). The function is kept on this object, one per beam size and per
        value of the settings the trace reads (``alpha``,
        ``max_source_length``, ``max_output_length``, ``carry_margin``): changing one of them
        gives a new function rather than a stale one. It is not saved with
        the model.

        Args:
            beam_size: 1 for greedy decoding (default: the model's).

        Returns:
            The ``tf.function``.
        """
        import tensorflow as tf

        beam = self._beam(beam_size)
        key = (beam, self.alpha, self.max_source_length, self.max_output_length,
               self.carry_margin)
        function = self._searches.functions.get(key)
        if function is None:
            function = tf.function(
                lambda sentences: self.translate_sentences(sentences, beam_size=beam),
                input_signature=[tf.TensorSpec([None], tf.string, name="sentences")],
                # Traced as written, as the SavedModel signature is (Keras's
                # export traces without AutoGraph): converting the search's
                # ~100 functions took 13 of the trace's 21 s.
                autograph=False,
            )
            self._searches.functions[key] = function
        return function

    def _beam(self, beam_size):
        if beam_size is None:
            return self.beam_size
        return validation.check_positive_int(type(self).__name__, "beam_size", beam_size)

    def translate(self, sentences, beam_size=None, batch_size=32, progress=None, details=False):
        """Translations of Python strings, ``batch_size`` sentences at a time.

        Each string is split into sentences (as ``translate_details`` does);
        the sentences of all strings are translated ``batch_size`` at a time
        by the compiled ``translation_function`` and joined back per string, so
        the result is what ``translate_details`` gives.

        Args:
            sentences: a list of ``str`` (each a sentence or a longer text).
            beam_size: 1 for greedy decoding (default: the model's).
            batch_size: sentences per call of the compiled search; at most
                ``4096 // beam_size`` (``bounds.MAX_HYPOTHESES``).
            progress: optional callable, given the number of strings
                finished after each batch.
            details: return dicts (``translation``, ``unknown_rate``,
                ``confidence``, ``unfamiliar``; see ``translate_details``)
                instead of strings.

        Returns:
            A list of ``str`` (or of dicts), in input order.
        """
        import numpy as np
        import tensorflow as tf

        search = self.translation_function(beam_size)
        name = type(self).__name__
        batch_size = validation.check_positive_int(name, "batch_size", batch_size)
        beam = self._beam(beam_size)
        # Memory of one call grows with sentences x hypotheses x output length.
        bounds.check_size(
            f"{name}.translate (beam_size={beam})", "batch_size", batch_size,
            bounds.MAX_HYPOTHESES // beam, "sentences x beam hypotheses per call",
        )
        if not len(sentences):
            return []
        split = input_handling.split_sentences(
            tf.constant([str(s) for s in sentences], tf.string)
        )
        flat, row_ends = split.flat_values, split.row_splits.numpy()[1:]
        parts, finished = [], 0
        for i in range(0, int(tf.size(flat)), batch_size):
            parts.append(search(flat[i : i + batch_size]))
            if progress is not None:
                done = int(np.searchsorted(row_ends, i + batch_size, side="right"))
                progress(done - finished)
                finished = done
        joined = input_handling.join_rows(
            split.row_splits,
            {k: tf.concat([p[k] for p in parts], 0) for k in parts[0]},
            self.max_unknown_rate,
            self.min_confidence,
        )
        out = [t.decode("utf-8") for t in joined["translations"].numpy()]
        if not details:
            return out
        rate, confidence = joined["unknown_rate"].numpy(), joined["confidence"].numpy()
        return [
            {"translation": t, "unknown_rate": float(r), "confidence": float(c),
             "unfamiliar": bool(u), "not_carried": n.decode("utf-8").split()}
            for t, r, c, u, n in zip(out, rate, confidence, joined["unfamiliar"].numpy(),
                                     joined["not_carried"].numpy())
        ]

    def attention_weights(self, source, translation):
        """Attention of the decoder over the source for one given output.

        Returns ``(weights, source_pieces, target_pieces)`` for a single pair
        of strings: ``weights`` is a NumPy ``(target, source)`` array.
        """
        import numpy as np
        import tensorflow as tf

        src = self.encode_source([source])
        tgt = self.encode_target([translation]).to_tensor(0)
        end = tf.fill([1, 1], self.model.end_id)
        start = tf.fill([1, 1], self.model.start_id)
        decoder_in = tf.concat([start, tgt], axis=1)
        _, weights = self.model((src, decoder_in), return_attention=True)
        src_pieces = self.source_lookup.get_vocabulary()
        tgt_pieces = self.target_lookup.get_vocabulary()
        src_ids = src.numpy()[0]
        tgt_ids = tf.concat([tgt, end], axis=1).numpy()[0]
        return (
            np.asarray(weights)[0],
            [src_pieces[i] for i in src_ids],
            [tgt_pieces[i] for i in tgt_ids],
        )

    def get_config(self):
        config = {
            "model": keras.saving.serialize_keras_object(self.model),
            "source_vocabulary": self.source_vocabulary,
            "target_vocabulary": self.target_vocabulary,
            "beam_size": self.beam_size,
            "alpha": self.alpha,
            "max_source_length": self.max_source_length,
            "max_output_length": self.max_output_length,
            "max_unknown_rate": self.max_unknown_rate,
            "min_confidence": self.min_confidence,
            "carry_margin": self.carry_margin,
        }
        return {**super().get_config(), **config}

    @classmethod
    def from_config(cls, config):
        bounds.check_config(cls.__name__, config)
        return cls(**serialization.deserialize_nested(config, ("model",)))


def train_translator(
    source_path,
    target_path,
    validation=None,
    *,
    min_count=2,
    max_words=None,
    embedding_dim=64,
    encoder_units=64,
    decoder_units=128,
    epochs=10,
    batch_size=32,
    learning_rate=2e-3,
    beam_size=5,
    max_length=64,
    callbacks=None,
    seed=0,
    verbose="auto",
    work_dir=None,
    **model_options,
):
    """Train a ``Translator`` on two aligned plain-text files.

    Args:
        source_path, target_path: UTF-8 files, one sentence per line, line i
            of ``target_path`` the translation of line i of ``source_path``
            (``read_parallel_text``).
        validation: optional ``(source_path, target_path)`` of held-out
            pairs; their loss is reported as ``val_loss`` each epoch.
        min_count: a word needs this many occurrences in the training text
            to be one token; rarer words are spelled in characters.
        max_words: most word tokens per side (None: no cap).
        embedding_dim, encoder_units, decoder_units: model widths.
        epochs, batch_size, learning_rate: training (Adam, gradient norm
            clipped to 1).
        beam_size: beam of the returned translator (1: greedy).
        max_length: training pairs whose target has more pieces are left
            out; sources are cut to ``4 * max_length`` pieces when
            translating.
        callbacks: Keras callbacks for ``fit`` (e.g. TensorBoard).
        seed: seed of the weights and the batch order.
        verbose: ``fit``'s verbosity.
        work_dir: optional folder for the run's files
            (``keras_seqmodels.training.loop.fit``, as ``seqmodels train``
            keeps them): ``best.keras``, the trained ``EncoderDecoder``
            (``translator.model``) at its best ``val_loss`` (``loss``
            without ``validation``), ``history.csv``, and a backup from which the
            same call, rerun after a kill, resumes at the interrupted epoch.
        **model_options: more ``EncoderDecoder`` arguments (``dropout``,
            ``encoder_layers``, ``attention``, ``cell_type``, ...).

    Returns:
        A built ``Translator``; ``translator.model.history`` is the Keras
        ``History`` of the training. Save it with ``translator.save(path)``
        (a ``.keras`` file), export it with
        ``keras_seqmodels.export.translation.export_translator``.

    Example (TensorFlow backend):

    >>> import os, tempfile
    >>> from keras_seqmodels.seq2seq import train_translator
    >>> d = tempfile.mkdtemp()
    >>> _ = open(os.path.join(d, "src.txt"), "w").write("a dog\\na cat\\n" * 4)
    >>> _ = open(os.path.join(d, "tgt.txt"), "w").write("ein Hund\\neine Katze\\n" * 4)
    >>> t = train_translator(os.path.join(d, "src.txt"), os.path.join(d, "tgt.txt"),
    ...                      epochs=1, embedding_dim=8, encoder_units=8,
    ...                      decoder_units=8, verbose=0)
    >>> import numpy as np
    >>> t(np.array(["a dog"])).shape
    TensorShape([1])
    """
    from keras_seqmodels.seq2seq.masked_accuracy import MaskedAccuracy
    from keras_seqmodels.seq2seq.masked_sparse_crossentropy import MaskedSparseCrossentropy

    name = "train_translator"
    checks.check_positive_ints(
        name, min_count=min_count, embedding_dim=embedding_dim, encoder_units=encoder_units,
        decoder_units=decoder_units, epochs=epochs, batch_size=batch_size, beam_size=beam_size,
        max_length=max_length,
    )  # fmt: skip
    # Sources are cut to 4 * max_length pieces when translating.
    bounds.check_size(name, "max_length", max_length, bounds.LENGTH // 4, "sequence lengths")
    if max_words is not None:
        checks.check_positive_int(name, "max_words", max_words)
    checks.check_positive_float(name, "learning_rate", learning_rate)
    source, target = parallel_text.read_parallel_text(source_path, target_path)
    src_vocab = text.build_vocabulary(source, min_count=min_count, max_words=max_words)
    tgt_vocab = text.build_vocabulary(target, min_count=min_count, max_words=max_words)
    keras.utils.set_random_seed(seed)
    core = EncoderDecoder(
        len(src_vocab) + 2, len(tgt_vocab) + 2, embedding_dim, encoder_units, decoder_units,
        start_id=tgt_vocab.index(text.START) + 2, end_id=tgt_vocab.index(text.END) + 2,
        **model_options,
    )
    translator = Translator(
        core, src_vocab, tgt_vocab, beam_size=beam_size,
        max_source_length=4 * max_length, max_output_length=2 * max_length,
    )
    # The training arrays come from the translator's own tokenizer, so the
    # ids seen in training are the ids the saved model computes from text.
    train_src, train_tgt = parallel_text.encode_pairs(translator, source, target, max_length)
    val = None
    if validation is not None:
        held_out = parallel_text.read_parallel_text(*validation)
        val_src, val_tgt = parallel_text.encode_pairs(translator, *held_out, max_length)
        val = parallel_text.Batches(val_src, val_tgt, batch_size)
    core.build(((None, None), (None, None)))
    core.compile(
        optimizer=keras.optimizers.Adam(learning_rate, clipnorm=1.0),
        loss=MaskedSparseCrossentropy(),
        metrics=[MaskedAccuracy()],
    )
    loop.fit(
        core,
        parallel_text.Batches(train_src, train_tgt, batch_size, seed=seed),
        validation_data=val,
        epochs=epochs,
        callbacks=callbacks,
        verbose=verbose,
        work_dir=work_dir,
        monitor=("val_loss" if val is not None else "loss", "min"),
    )
    translator.build()
    return translator


class _CompiledSearches:
    """A ``Translator``'s compiled searches, by beam size and settings.

    A plain holder, so that neither Keras nor TensorFlow tracks the
    functions: they are a cache, and an exported model traces its own
    signature (``keras_seqmodels.export.translation``).
    """

    def __init__(self):
        self.functions = {}
