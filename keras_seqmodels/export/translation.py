"""SavedModel export of a ``Translator``: strings in, strings out."""

from keras_seqmodels.export.generic import check_empty_directory, write_archive
from keras_seqmodels.export.limits import (
    at_most,
    checked_shape,
    guard,
    merge_limits,
    string_checks,
)
from keras_seqmodels.utils import bounds, validation

# Documented request limits of the signature, checked in the graph.
LIMITS = {
    "max_batch": 64,  # sentences per request
    "max_bytes": 16_384,  # bytes per sentence (pieces beyond the model's
    # max_source_length are cut; outputs stop at max_output_length tokens)
    "max_total_bytes": 262_144,  # bytes of all sentences
    "max_sentences": 256,  # sentences of all texts, after splitting
}


def export_translator(model, directory, beam_size=None, limits=None, served_name="translator"):
    """Write a SavedModel whose ``serving_default`` translates strings.

    The signature takes ``inputs``, a string tensor ``(batch,)`` of texts,
    and returns what ``Translator.translate_details`` gives, each ``(batch,)``:
    ``translations`` (string: each text split into sentences, re-cased when
    shouted or uncased, translated with its numbers and names copied
    through, of the beam's candidates within the model's ``carry_margin``
    the one that carries the most, joined back), ``unknown_rate`` (float32),
    ``confidence`` (float32), ``unfamiliar`` (bool: the text looks unlike
    the training data) and ``not_carried`` (string: the numbers and names
    the translation lost). Sentence splitting, tokenization, beam search
    (stock TensorFlow ops only) and detokenization all run inside, so a
    plain TensorFlow (or TensorFlow Serving) loads and runs it without
    keras_seqmodels:

        import tensorflow as tf
        served = tf.saved_model.load(directory)
        served.signatures["serving_default"](
            inputs=tf.constant(["A man is riding a bicycle."]))["translations"]

    Request limits (``LIMITS``), checked in the graph before the search
    (an ``InvalidArgumentError`` names the one exceeded): 64 texts,
    16,384 bytes per text, 256 KiB in all, 256 sentences in all (after
    splitting); ``inputs`` of another shape
    than ``(batch,)`` is refused the same way. Empty and blank sentences
    translate to ``""``; an empty batch gives an empty output.

    Args:
        model: a ``keras_seqmodels.seq2seq.Translator``.
        directory: output folder (must not exist or be empty).
        beam_size: beam size of the export (default: the model's).
        limits: optional dict overriding some of ``LIMITS``.
        served_name: the start of the limit messages (``export`` passes the
            zoo name).
    """
    import tensorflow as tf

    from keras_seqmodels.seq2seq.input_handling import split_sentences

    check_empty_directory(directory)
    limits = merge_limits("export_translator", LIMITS, limits)
    if beam_size is None:
        beam = model.beam_size
    else:
        beam = validation.check_positive_int("export_translator", "beam_size", beam_size)
    # A request of max_sentences sentences searches max_sentences x beam hypotheses.
    bounds.check_size(f"export_translator (beam_size={beam})", "max_sentences",
                      limits["max_sentences"], bounds.MAX_HYPOTHESES // beam,
                      "sentences x beam hypotheses per request")  # fmt: skip
    if not model.built:
        model.build()

    def translate(inputs):
        inputs = checked_shape(served_name, "inputs", inputs, [None],
                               "(batch,), one string per sentence")  # fmt: skip
        inputs = guard([inputs], string_checks(
            served_name, inputs, limits["max_batch"], limits["max_bytes"], noun="sentences"
        ) + [at_most(served_name, "bytes in all", tf.reduce_sum(tf.strings.length(inputs)),
                     limits["max_total_bytes"])])[0]
        sentences = tf.size(split_sentences(inputs).flat_values)
        inputs = guard([inputs], [at_most(served_name, "sentences in all", sentences,
                                          limits["max_sentences"])])[0]  # fmt: skip
        return model.translate_details(inputs, beam_size=beam)

    endpoint = (translate, [tf.TensorSpec([None], tf.string, name="inputs")])
    return write_archive(directory, model, {"serving_default": endpoint})
