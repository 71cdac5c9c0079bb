"""``seqmodels``: run, train, evaluate and export the zoo's models.

Each sub-command lives in its own module of this package that defines
``register(subparsers)``; add new modules to ``COMMAND_MODULES``. Commands
import Keras and TensorFlow only when they need them (inside the function
that runs), so ``--help``, ``zoo list`` and mistakes in the arguments or input
files answer at once; the frameworks' native start-up log is hidden.

Every failure ends the same way: one line ``seqmodels COMMAND: error: ...`` on
standard error (what failed, on what input, what to do) and a non-zero exit
status, 2 for a usage mistake (bad option, missing file, an output folder that
is not empty, unknown model, unreadable input, a missing optional package) and 1
for anything else;
``--debug`` adds the traceback.
"""

import argparse
import importlib
import os
import sys
import traceback

from keras_seqmodels import _import_hooks
from keras_seqmodels.utils.errors import UserError
from keras_seqmodels.version import __version__

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
_MAX_MESSAGE = 400  # characters of an error message shown on the one line
# Option values that name files: shown as "the input" of an unexpected error.
_PATH_OPTIONS = ("file", "model_path", "input", "log", "name", "model", "directory")
_NOT_INPUTS = ("output", "func")


class _Parser(argparse.ArgumentParser):
    """``argparse`` with a one-line usage error (the usage is in ``--help``)."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message} (see '{self.prog} --help')\n")


def _add_debug(parser, top=False):
    parser.add_argument(
        "--debug",
        action="store_true",
        # Given after a sub-command, it must not reset the top-level value.
        default=False if top else argparse.SUPPRESS,
        help="on an error, also print the Python traceback",
    )
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                _add_debug(sub)


def build_parser():
    parser = _Parser(
        prog="seqmodels",
        description="Recurrent and recursive sequence models: the zoo's models "
        "from the command line.",
    )
    parser.add_argument("--version", action="version", version=f"seqmodels {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    subparsers.required = True
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(subparsers)
    _add_debug(parser, top=True)
    return parser


_FRAMEWORKS = ("keras", "tensorflow", "jax")


def _execute_quietly(exec_module, module):
    """Runs a framework's loader with file descriptor 2 pointing to /dev/null."""
    saved = None
    try:
        sys.stderr.flush()
        saved = os.dup(2)
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 2)
        os.close(devnull)
    except (OSError, ValueError):
        saved = None
    try:
        exec_module(module)
    finally:
        if saved is not None:
            os.dup2(saved, 2)
            os.close(saved)


def quiet_framework_imports():
    """Import Keras, TensorFlow and JAX, when a command first needs them,
    without their native start-up lines on standard error: TensorFlow and XLA
    write absl lines on file descriptor 2 while loading, before any log level
    is read. Commands import them only when they run a model, so a usage
    error is reported at once."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    _import_hooks.install(
        "quiet", lambda name: name in _FRAMEWORKS and name not in sys.modules, _execute_quietly
    )


# Python loggers of the libraries a command runs (TensorFlow Datasets logs
# through absl): their warnings go to standard error before the command's own
# one-line error (e.g. "Variant folder ... has no dataset_info.json" when a
# data file is refused). Hidden while a command runs, unless --debug; a
# library user's process is left alone.
_LIBRARY_LOGGERS = ("absl", "tensorflow", "tensorflow_datasets")


def _quiet_library_logs():
    """Raise the library loggers to ERROR; returns a function undoing it."""
    import logging

    loggers = [logging.getLogger(name) for name in _LIBRARY_LOGGERS]
    levels = [logger.level for logger in loggers]
    for logger in loggers:
        logger.setLevel(logging.ERROR)

    def restore():
        for logger, level in zip(loggers, levels):
            logger.setLevel(level)

    return restore


def _inputs(args):
    """The existing files named on the command line (options, then the rest,
    e.g. a recipe's ``--model FILE``), for "on what input" in the error line."""
    seen = []
    values = [getattr(args, option, None) for option in _PATH_OPTIONS]
    values += [v for k, v in sorted(vars(args).items()) if k not in _PATH_OPTIONS + _NOT_INPUTS]
    for value in values:
        for item in value if isinstance(value, (list, tuple)) else [value]:
            if isinstance(item, str) and item and os.path.isfile(item) and item not in seen:
                seen.append(item)
    return seen


def _first_line(err):
    text = " ".join(str(err).split()) if str(err) else ""
    if len(text) > _MAX_MESSAGE:
        text = text[: _MAX_MESSAGE - 3] + "..."
    return text


def describe_error(err, args=None):
    """``(exit status, message)`` of an exception for the one error line."""
    from keras_seqmodels.zoo.task import InputError

    if isinstance(err, (UserError, InputError)):
        return 2, _first_line(err)
    if isinstance(err, KeyError):  # the zoo's unknown-model error
        return 2, _first_line(err.args[0] if err.args else err)
    if isinstance(err, (FileNotFoundError, FileExistsError, NotADirectoryError, IsADirectoryError)):
        if err.filename is not None:
            return 2, f"{err.strerror or type(err).__name__}: {err.filename}"
        return 2, _first_line(err)
    if isinstance(err, UnicodeDecodeError):
        where = ", ".join(_inputs(args)) if args is not None else ""
        return 2, (
            f"{where or 'the input'} is not UTF-8 text (byte 0x{err.object[err.start]:02x} "
            f"at offset {err.start}); give a UTF-8 text file"
        )
    if isinstance(err, ModuleNotFoundError):  # an optional package not installed
        module = (err.name or str(err)).split(".")[0]
        return 2, f"this command needs the Python package {module!r}: pip install {module}"
    if isinstance(err, MemoryError):
        return 1, "out of memory; try a smaller --batch-size or shorter inputs"
    inputs = _inputs(args) if args is not None else []
    on = f" (input: {', '.join(inputs)})" if inputs else ""
    message = _first_line(err)
    return 1, (
        f"{type(err).__name__}{': ' + message if message else ''}{on}; "
        "run again with --debug for the traceback"
    )


def _take_debug(argv):
    """``(argv without --debug, whether it was given)``: ``--debug`` works in
    any position, also after a recipe's own options (``seqmodels train NAME
    ... --debug``), which its sub-command hands on unparsed. Words after a
    ``--`` are input, not options."""
    end = argv.index("--") if "--" in argv else len(argv)
    debug = "--debug" in argv[:end]
    return [a for a in argv[:end] if a != "--debug"] + argv[end:], debug


def main(argv=None):
    parser = build_parser()
    argv, debug = _take_debug(list(sys.argv[1:] if argv is None else argv))
    if not debug:  # also for a --help that reads the frameworks (train --help)
        quiet_framework_imports()
    args = parser.parse_args(argv)
    args.debug = debug
    # "plot curves", "zoo info": name the sub-command in messages too.
    command = " ".join(
        str(v) for v in (args.command, getattr(args, "zoo_command", None),
                         getattr(args, "plot_command", None)) if v
    )
    restore = (lambda: None) if debug else _quiet_library_logs()
    try:
        result = args.func(args)
    except KeyboardInterrupt:
        print(f"seqmodels {command}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `seqmodels zoo list | head`: the reader left
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # no second error at exit
        return 1
    except Exception as err:  # one line for every failure; details with --debug
        if args.debug:
            traceback.print_exc()
        code, message = describe_error(err, args)
        print(f"seqmodels {command}: error: {message}", file=sys.stderr)
        return code
    finally:
        restore()
    return 0 if result is None else int(result)


if __name__ == "__main__":
    sys.exit(main())
