"""Tag ids back to tag strings, with empty strings at padding."""

import keras


@keras.saving.register_keras_serializable(package="keras_seqmodels")
class TagLookup(keras.layers.Layer):
    """Maps tag ids to tag names; padded positions become ``""``.

    out[b, t] = tags[ids[b, t]] where ``token_ids[b, t] != 0``, else ``""``.

    A preprocessing layer (string output: TensorFlow backend), the inverse
    end of ``SentenceVectorizer``. New relative to Keras: ``StringLookup(
    invert=True)`` cannot tell a padded position from tag id 0.

    Args:
        tags: list of tag names, id i ↦ ``tags[i]``.
        **kwargs: base layer arguments.

    Call arguments:
        inputs: ``[ids, token_ids]``, int ``(batch, words)`` each; a
            ``token_ids`` entry of 0 marks padding.

    Returns:
        string ``(batch, words)``.

    Example:

    >>> import numpy as np, keras_seqmodels as ks
    >>> ks.tagging.TagLookup(["NOUN", "VERB"])([np.array([[1, 0]]), np.array([[5, 0]])]).numpy()
    array([[b'VERB', b'']], dtype=object)

    Reference:
        Keras ``StringLookup(invert=True)``.
    """

    def __init__(self, tags, **kwargs):
        kwargs.setdefault("dtype", "int32")
        super().__init__(**kwargs)
        if isinstance(tags, str) or not tags or not all(isinstance(t, str) and t for t in tags):
            raise ValueError(
                f"{self.name}: `tags` must be a non-empty list of non-empty "
                f"strings. Received: tags={tags!r:.80}"
            )
        self.tags = list(tags)
        # A mask on the ids (e.g. from CRFTagger) is accepted and dropped:
        # padding is already in the output, as "".
        self.supports_masking = True
        self.built = True

    def call(self, inputs):
        import tensorflow as tf  # string output needs TF

        ids, token_ids = inputs
        ids = tf.cast(ids, tf.int32)
        table = tf.constant(self.tags + [""])
        ids = tf.where(tf.not_equal(token_ids, 0), ids, len(self.tags))
        return tf.gather(table, ids)

    def compute_mask(self, inputs, mask=None):
        return None

    def compute_output_spec(self, inputs):
        return keras.KerasTensor(tuple(inputs[0].shape), dtype="string")

    def get_config(self):
        return {**super().get_config(), "tags": self.tags}
