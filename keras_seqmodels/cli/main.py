"""``seqmodels``: run, train, evaluate and export the zoo's models.

Each sub-command lives in its own module of this package that defines
``register(subparsers)``; add new modules to ``COMMAND_MODULES``.
"""

import argparse
import importlib
import os
import sys

COMMAND_MODULES = [
    "keras_seqmodels.cli.zoo_commands",
    "keras_seqmodels.cli.recipe_commands",
    "keras_seqmodels.cli.tag_commands",
    "keras_seqmodels.cli.generate_commands",
    "keras_seqmodels.cli.translate_commands",
    "keras_seqmodels.cli.sentiment_commands",
    "keras_seqmodels.cli.plot_commands",
    "keras_seqmodels.cli.export_commands",
]


class UserError(Exception):
    """A mistake of the user's (bad path, unknown model): one line, exit 2."""


def build_parser():
    parser = argparse.ArgumentParser(
        prog="seqmodels",
        description="Recurrent and recursive sequence models: the zoo's models "
        "from the command line.",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    subparsers.required = True
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(subparsers)
    return parser


def main(argv=None):
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    parser = build_parser()
    args = parser.parse_args(argv)
    # "plot curves", "zoo info": name the sub-command in messages too.
    command = " ".join(
        str(v) for v in (args.command, getattr(args, "zoo_command", None),
                         getattr(args, "plot_command", None)) if v
    )
    try:
        result = args.func(args)
    except (UserError, FileNotFoundError, KeyError, NotADirectoryError) as err:
        message = err.args[0] if err.args else str(err)
        print(f"seqmodels {command}: error: {message}", file=sys.stderr)
        return 2
    except ModuleNotFoundError as err:  # an optional package removed after install
        package = (err.name or str(err)).split(".")[0]
        print(f"seqmodels {command}: error: this command needs the Python package "
              f"'{package}': pip install {package}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"seqmodels {command}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `seqmodels zoo list | head`: the reader left
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # no second error at exit
        return 1
    return 0 if result is None else int(result)


if __name__ == "__main__":
    sys.exit(main())
