"""``seqmodels export NAME DIR``: write a zoo model as a SavedModel."""


def _export(args):
    from keras_seqmodels import export
    from keras_seqmodels.cli.main import UserError

    options = {}
    if args.beam is not None:
        options["beam_size"] = args.beam
    try:
        export.export(args.name, args.directory, **options)
    except FileExistsError as err:
        raise UserError(str(err)) from err
    print(f"wrote {args.directory} (SavedModel; signature 'serving_default')")
    return 0


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
        "ptb-lstm 'text' strings -> 'next_word', 'next_word_logits', "
        "'log_likelihood'. "
        "Any other model (ud-ewt-upos, a .keras file) gets the generic export: "
        "the model's named inputs -> 'output_0', ...",
    )
    p.add_argument(
        "name", help="zoo model name (see `seqmodels zoo list`) or a path to a .keras file"
    )
    p.add_argument("directory", help="output folder (new or empty)")
    p.add_argument(
        "--beam",
        type=int,
        default=None,
        help="beam size of the exported search (translation models)",
    )
    p.set_defaults(func=_export)
