"""The errors a user reads: one line each, raised by the library below the
command line, which turns every ``UserError`` into its one-line usage error
(exit status 2)."""


class UserError(Exception):
    """A mistake of the user's (a bad path, an unknown model, an unreadable
    file, options that do not go together): one line naming what is wrong and
    what to give instead."""


class ModelFileError(UserError, ValueError):
    """A user's model file that cannot be opened: over a size bound, corrupt,
    or not a Keras model (``keras_seqmodels.utils.loading.load_model_file``)."""


class ModelFileNotFoundError(ModelFileError, FileNotFoundError):
    """A user's model file that does not exist."""


__all__ = ["ModelFileError", "ModelFileNotFoundError", "UserError"]
