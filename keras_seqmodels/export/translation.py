"""SavedModel export of a ``Translator``: strings in, strings out."""

import os


def export_translator(model, directory, beam_size=None):
    """Write a SavedModel whose ``serving_default`` translates strings.

    The signature takes ``inputs``, a string tensor ``(batch,)``, and returns
    ``{"translations": string tensor (batch,)}``. Tokenization, beam search
    (stock TensorFlow ops only) and detokenization all run inside, so a
    plain TensorFlow (or TensorFlow Serving) loads and runs it without
    keras_seqmodels:

        import tensorflow as tf
        served = tf.saved_model.load(directory)
        served.signatures["serving_default"](
            inputs=tf.constant(["A man is riding a bicycle."]))["translations"]

    Args:
        model: a ``keras_seqmodels.seq2seq.Translator``.
        directory: output folder (must not exist or be empty).
        beam_size: beam size of the export (default: the model's).
    """
    import keras
    import tensorflow as tf

    if os.path.isdir(directory) and os.listdir(directory):
        raise FileExistsError(
            f"export: {directory} is not empty; give a new or empty folder"
        )
    beam = model.beam_size if beam_size is None else int(beam_size)
    if not model.built:
        model.build()

    def translate(inputs):
        return {"translations": model(inputs, beam_size=beam)}

    archive = keras.export.ExportArchive()
    archive.track(model)
    archive.add_endpoint(
        name="serving_default",
        fn=translate,
        input_signature=[tf.TensorSpec([None], tf.string, name="inputs")],
    )
    archive.write_out(directory, verbose=False)
    return directory
