"""``seqmodels train NAME ...`` and ``seqmodels evaluate NAME ...``.

Both run the model's recipe (``zoo/<name>/recipe.py`` in a source checkout),
whose ``main(argv)`` takes ``train`` or ``evaluate`` followed by its options
(``--data-dir``, ``--epochs``, ``--strategy``, ``--split``, ...).
"""

import importlib.util


def load_recipe(name):
    from keras_seqmodels import zoo

    path = zoo.recipe_path(name)
    spec = importlib.util.spec_from_file_location(
        f"seqmodels_recipe_{name.replace('-', '_')}", path
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _run(action):
    def run(args):
        recipe = load_recipe(args.name)
        return recipe.main([action, *args.recipe_args])

    return run


def register(subparsers):
    for action, text in (
        ("train", "re-train a zoo model with its recipe (--data-dir, --epochs, --strategy)"),
        ("evaluate", "print a zoo model's card metrics (--data-dir, --split)"),
    ):
        parser = subparsers.add_parser(action, help=text, description=text)
        parser.add_argument("name", help="zoo model name (see `seqmodels zoo list`)")
        parser.add_argument("recipe_args", nargs="...", help="options passed to the recipe")
        parser.set_defaults(func=_run(action))
