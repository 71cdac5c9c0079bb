"""``seqmodels train NAME ...`` and ``seqmodels evaluate NAME ...``.

Both import the recipe module that the model's folder declares
(``ModelSpec.recipe``, ``keras_seqmodels.zoo.models``) and hand its hooks
(``Recipe.from_module``) to the recipe framework
(``keras_seqmodels.zoo.framework``), which parses the options
(``seqmodels train NAME --help`` lists them).
"""


def load_recipe(name):
    """The ``Recipe`` of zoo model ``name``, or ``None`` if it has none yet."""
    from keras_seqmodels.zoo.models import specs

    spec = specs().get(name)
    module = None if spec is None else spec.recipe_module()
    if module is None:
        return None
    from keras_seqmodels.zoo.framework import Recipe

    return Recipe.from_module(module, spec)


def _run(action):
    def run(args):
        from keras_seqmodels.zoo import framework

        recipe = load_recipe(args.name)
        if recipe is None:
            raise KeyError(f"no recipe for zoo model {args.name!r}: see `seqmodels zoo list`")
        return framework.main(recipe, action, args.recipe_args)

    return run


def _help_with_models_and_options(parser, action):
    """``parser``'s help followed by the zoo models that have a recipe and the
    options every recipe takes (computed when asked: ``--help`` only)."""
    plain = parser.format_help

    def format_help():
        from keras_seqmodels.zoo.framework import Recipe, arguments
        from keras_seqmodels.zoo.models import specs

        names = sorted(name for name, spec in specs().items() if spec.recipe)
        any_model = Recipe("NAME", {}, None, None, None, None)
        common = arguments.parser_for(any_model, action).format_help()
        options = common[common.index("options:") :].replace("options:", "", 1)
        options = "\n".join(line for line in options.split("\n") if "--help" not in line)
        return (
            f"{plain()}\nmodels: {', '.join(names)}\n\n"
            f"options of every model (`seqmodels {action} NAME --help` adds its own):"
            f"{options}"
        )

    parser.format_help = format_help


def register(subparsers):
    for action, text in (
        ("train", "train a zoo model (selection on validation; rerun to resume)"),
        ("evaluate", "evaluate a zoo model on --split validation or test"),
    ):
        parser = subparsers.add_parser(action, help=text, description=text)
        parser.add_argument("name", help="zoo model name (listed below)")
        parser.add_argument("recipe_args", nargs="...", help="options (listed below)")
        parser.set_defaults(func=_run(action))
        _help_with_models_and_options(parser, action)
