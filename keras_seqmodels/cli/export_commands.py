"""``seqmodels export NAME DIR``: write a zoo model as a SavedModel."""

import os

from keras_seqmodels.cli import options


def _export(args):
    from keras_seqmodels import export
    from keras_seqmodels.cli.main import UserError

    export_options = {}
    if args.beam is not None:
        export_options["beam_size"] = args.beam
    source = args.name
    exporter = export.export
    if source.endswith(".keras"):
        path, source = source, _load_keras_file(source)
        exporter = _keras_file_exporter(path, source) or exporter
    if os.path.isdir(args.directory) and os.listdir(args.directory):
        raise UserError(f"{args.directory} is not empty; give a new or empty folder")
    try:
        exporter(source, args.directory, **export_options)
    except FileExistsError as err:
        raise UserError(str(err)) from err
    print(f"wrote {args.directory} (SavedModel; signature 'serving_default')")
    return 0


def _keras_file_exporter(path, model):
    """The exporter a loaded .keras model needs (None: the generic one), or one line."""
    from keras_seqmodels import export
    from keras_seqmodels.cli.main import UserError

    try:
        exporter, kind = export.exporter_for_model(model)
    except ValueError as err:
        raise UserError(f"{path} holds {err}") from None
    if kind is None:
        return None
    if kind == "a translator":
        return exporter
    return _without_beam(path, kind, exporter)


def _without_beam(path, kind, exporter):
    """``exporter(model, directory, served_name=model.name)``; ``--beam`` is one line."""
    from keras_seqmodels.cli.main import UserError

    def export_file(model, directory, beam_size=None):
        if beam_size is not None:
            raise UserError(f"{path} holds {kind}; --beam is for translation models")
        return exporter(model, directory, served_name=model.name)

    return export_file


def _load_keras_file(path):
    import keras

    from keras_seqmodels.cli.main import UserError

    if not os.path.isfile(path):
        raise UserError(f"no such .keras file: {path}")
    try:
        return keras.saving.load_model(path, compile=False, safe_mode=True)
    except Exception as err:  # a corrupt or foreign file: one line
        first = str(err).splitlines()[0] if str(err) else ""
        raise UserError(
            f"cannot load {path} as a Keras model ({type(err).__name__}: {first}); "
            "give a model saved with model.save"
        ) from None


def register(subparsers):
    p = subparsers.add_parser(
        "export",
        help="export a zoo model as a TensorFlow SavedModel for serving",
        description="Export a zoo model (or a .keras file) as a TensorFlow "
        "SavedModel whose 'serving_default' signature takes the model's natural "
        "input: multi30k-en-de 'inputs' (batch,) strings -> 'translations'; "
        "sst-treelstm 'trees' bracketed strings -> 'root_class'; mnist-renet "
        "'pixels' float32 (batch, 28, 28) of 0-255 -> 'scores', 'class_id'; "
        "babi-memn2n 'story' and 'question' strings -> 'answer', 'scores'; "
        "ntm-copy 'bits' float32 (batch, length, 8) -> 'copy', 'logits'; "
        "ptb-lstm and a .keras WordLanguageModel (train_language_model) 'text' "
        "strings -> 'next_word', 'next_word_logits', 'log_likelihood'; ud-ewt-upos "
        "'text' raw strings -> 'tokens', 'tags' (tokenised as `seqmodels tag` does). "
        "Any other model (a .keras file) gets the generic export: "
        "the model's named inputs -> 'output_0', ... The folder must be new or empty.",
    )
    p.add_argument(
        "name", help="zoo model name (see `seqmodels zoo list`) or a path to a .keras file"
    )
    p.add_argument("directory", help="output folder (new or empty)")
    p.add_argument(
        "--beam",
        type=options.beam_size,
        default=None,
        help=f"beam size of the exported search, 1 to {options.MAX_BEAM} "
        "(translation models)",
    )
    p.set_defaults(func=_export)
