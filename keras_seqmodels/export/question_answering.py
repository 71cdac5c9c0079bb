"""SavedModel export of a bAbI memory network: story and question text in, answer out."""


from keras_seqmodels.export.generic import check_empty_directory, write_archive
from keras_seqmodels.export.limits import (
    at_most,
    checked_shape,
    guard,
    merge_limits,
    string_checks,
)

# Statements of a story end at a newline or at sentence-final punctuation.
STATEMENT_END = r"[.!?\r\n]+"
# Tokens as keras_seqmodels.data.babi.tokenize: lower-cased runs of [a-z0-9].
NOT_A_TOKEN = r"[^a-z0-9]+"
UNK = 2  # keras_seqmodels.data.babi.UNK

# Documented request limits of the signatures, checked in the graph.
LIMITS = {
    "max_batch": 256,  # (story, question) pairs per request
    "max_story_bytes": 20_000,  # bytes per story
    "max_question_bytes": 1_000,  # bytes per question
    "max_total_bytes": 1_048_576,  # bytes of all stories and questions
}


def export_memory_qa(
    model, directory, vocabulary=None, memory_size=None, limits=None, served_name="memory QA"
):
    """Write a SavedModel that answers questions about a story, as text.

    ``serving_default`` takes two string tensors ``(batch,)``: ``story``, the
    statements (each ending with ``.``, ``!``, ``?`` or a newline, oldest
    first, e.g. ``"Mary moved to the bathroom. John went to the hallway."``)
    and ``question`` (``"Where is Mary?"``), and returns ``{"answer": string
    (batch,), "scores": float32 (batch, vocabulary)}``. Inside, in stock
    TensorFlow string ops, it does what ``keras_seqmodels.data.babi``
    does in Python: lower-case (UTF-8), tokens are runs of ``[a-z0-9]``,
    words not in the vocabulary become ``<unk>``, the most recent
    ``memory_size`` statements are kept newest first, each cut to the
    model's sentence length, the question to its query length. A second
    signature, ``serve_ids``, takes the integer arrays the Keras model takes
    (``stories`` ``(batch, slots, sentence_length)``, ``queries``
    ``(batch, query_length)``) and returns the same outputs.

        import tensorflow as tf
        served = tf.saved_model.load(directory)
        served.signatures["serving_default"](
            story=tf.constant(["Mary moved to the bathroom. John went to the hallway."]),
            question=tf.constant(["Where is Mary?"]))["answer"]          # [b"bathroom"]

    Request limits (``LIMITS``), checked in the graph (an
    ``InvalidArgumentError`` names the one exceeded): 256 pairs, 20,000
    bytes per story, 1,000 per question, 1 MiB in all. ``serve_ids`` checks
    the shapes (``stories (batch, slots <= memory_size, sentence_length)``,
    ``queries (batch, query_length)``, one batch size), the batch limit and
    that every id is in ``[0, vocabulary size)``. Bytes that are not UTF-8
    are replaced before lower-casing; an empty story or question is answered
    (from no statements / no words), an empty batch gives empty outputs.

    Args:
        model: a Keras model ``[stories, queries] -> scores`` over the
            vocabulary (e.g. an ensemble of ``MemoryNetwork`` s).
        directory: output folder (must not exist or be empty).
        vocabulary: the word list (index = id); required (a zoo task's
            ``export`` passes the shipped one).
        memory_size: statements kept; default: the model's ``MemoryNetwork``
            ``memory_size``.
        limits: optional dict overriding some of ``LIMITS``.
        served_name: the start of the limit messages (``export`` passes the
            zoo name).
    """
    import tensorflow as tf

    check_empty_directory(directory)
    limits = merge_limits("export_memory_qa", LIMITS, limits)
    if vocabulary is None:
        raise ValueError(
            "export_memory_qa: give `vocabulary`, the model's word list (a zoo task's "
            "export passes its shipped one)"
        )
    vocabulary = [str(w) for w in vocabulary]
    if len(model.inputs) != 2:
        raise ValueError(
            "export_memory_qa: the model must take [stories, queries]. "
            f"Received a model with {len(model.inputs)} inputs"
        )
    sentence_length = model.inputs[0].shape[-1]
    query_length = model.inputs[1].shape[-1]
    if memory_size is None:
        sizes = [getattr(layer, "memory_size", None) for layer in model.layers]
        sizes = [s for s in sizes if s]
        if not sizes:
            raise ValueError(
                "export_memory_qa: give `memory_size`; the model has no layer with one"
            )
        memory_size = sizes[0]
    scores_width = model.outputs[0].shape[-1]
    if scores_width != len(vocabulary):
        raise ValueError(
            f"export_memory_qa: the model scores {scores_width} words but the "
            f"vocabulary has {len(vocabulary)}"
        )

    table = tf.lookup.StaticHashTable(
        tf.lookup.KeyValueTensorInitializer(
            tf.constant(vocabulary), tf.range(len(vocabulary), dtype=tf.int64)
        ),
        default_value=UNK,
    )
    words = tf.constant(vocabulary)

    def tokens_of(text):
        text = tf.strings.lower(text, encoding="utf-8")
        return tf.strings.split(tf.strings.regex_replace(text, NOT_A_TOKEN, " "))

    def ids_of(tokens, length):
        return tf.cast(tf.ragged.map_flat_values(table.lookup, tokens[..., :length]), tf.int32)

    def encode(story, question):
        story = checked_shape(served_name, "story", story, [None], "(batch,), one string per story")
        question = checked_shape(
            served_name, "question", question, [None], "(batch,), one string per question"
        )
        story, question = guard([story, question], [
            *string_checks(served_name, story, limits["max_batch"],
                           limits["max_story_bytes"], noun="stories"),
            *string_checks(served_name, question, limits["max_batch"],
                           limits["max_question_bytes"], noun="questions"),
            tf.debugging.assert_equal(
                tf.size(story), tf.size(question),
                message=f"{served_name}: give one question per story",
            ),
            at_most(served_name, "bytes in all", tf.reduce_sum(tf.strings.length(story))
                    + tf.reduce_sum(tf.strings.length(question)), limits["max_total_bytes"]),
        ])
        lowered = tf.strings.lower(story, encoding="utf-8")
        statements = tf.strings.split(tf.strings.regex_replace(lowered, STATEMENT_END, "\n"), "\n")
        tokens = tokens_of(statements)  # (batch, [statements], [tokens])
        tokens = tf.ragged.boolean_mask(tokens, tokens.row_lengths(axis=2) > 0)
        dense = ids_of(tokens, sentence_length).to_tensor(0, shape=[None, None, sentence_length])
        dense = tf.pad(dense, [[0, 0], [0, 1], [0, 0]])  # a row to gather when empty
        # Slot j holds statement count-1-j (newest first); older ones drop out.
        index = tf.cast(tokens.row_lengths(), tf.int32)[:, None] - 1 - tf.range(memory_size)
        stories = tf.gather(dense, tf.maximum(index, 0), batch_dims=1)
        stories = stories * tf.cast(index >= 0, tf.int32)[:, :, None]
        queries = ids_of(tokens_of(question), query_length).to_tensor(0, shape=[None, query_length])
        return stories, queries

    def check_ids(stories, queries):
        stories = checked_shape(served_name, "stories", stories, [None, None, sentence_length])
        queries = checked_shape(served_name, "queries", queries, [None, query_length])
        low = tf.minimum(tf.reduce_min(tf.concat([[0], tf.reshape(stories, [-1])], 0)),
                         tf.reduce_min(tf.concat([[0], tf.reshape(queries, [-1])], 0)))
        high = tf.maximum(tf.reduce_max(tf.concat([[0], tf.reshape(stories, [-1])], 0)),
                          tf.reduce_max(tf.concat([[0], tf.reshape(queries, [-1])], 0)))
        return guard([stories, queries], [
            at_most(served_name, "stories per request", tf.shape(stories)[0],
                    limits["max_batch"]),
            tf.debugging.assert_equal(
                tf.shape(stories)[0], tf.shape(queries)[0],
                message=f"{served_name}: `stories` and `queries` must have one batch size",
            ),
            at_most(served_name, "statement slots (the memory size)", tf.shape(stories)[1],
                    memory_size),
            tf.debugging.assert_greater_equal(
                low, 0, message=f"{served_name}: word ids must be >= 0"),
            tf.debugging.assert_less(
                high, len(vocabulary),
                message=f"{served_name}: word ids must be < {len(vocabulary)} (the vocabulary)",
            ),
        ])

    def answer(stories, queries):
        scores = model([stories, queries], training=False)
        best = tf.argmax(scores, axis=-1, output_type=tf.int32)
        return {"answer": tf.gather(words, best), "scores": scores}

    endpoints = {
        "serving_default": (
            lambda story, question: answer(*encode(story, question)),
            [
                tf.TensorSpec([None], tf.string, name="story"),
                tf.TensorSpec([None], tf.string, name="question"),
            ],
        ),
        "serve_ids": (
            lambda stories, queries: answer(*check_ids(stories, queries)),
            [
                tf.TensorSpec([None, None, sentence_length], tf.int32, name="stories"),
                tf.TensorSpec([None, query_length], tf.int32, name="queries"),
            ],
        ),
    }
    return write_archive(directory, model, endpoints, track=[table])
