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
        description="Export a zoo model as a TensorFlow SavedModel. For "
        "multi30k-en-de the 'serving_default' signature maps a (batch,) string "
        "tensor 'inputs' to {'translations': (batch,) strings}.",
    )
    p.add_argument("name", help="zoo model name (see `seqmodels zoo list`)")
    p.add_argument("directory", help="output folder (new or empty)")
    p.add_argument("--beam", type=int, default=None,
                   help="beam size of the exported search (translation models)")
    p.set_defaults(func=_export)
