"""The package's one training loop: ``fit``, a compiled model's ``model.fit``
with the run's callbacks.

Every training path calls it: the zoo's recipe framework (``seqmodels train
NAME``, ``keras_seqmodels.zoo.framework``) and the task libraries' training
functions (``train_language_model``, ``train_translator``, ``train_tagger``,
``train_tree_classifier`` and the ``from_*`` constructors that call them).
Each builds its model and data, seeds and compiles it, and hands it here;
with a ``work_dir`` the run keeps the best checkpoint on ``monitor``
(``best.keras``, with ``best.json``), its history (``history.csv``) and a
backup that a rerun of the same call resumes from after a kill, stops on a
non-finite loss, and ends after ``time_budget`` seconds.
"""

import os

import keras

from keras_seqmodels.training.fault_tolerance import AtomicBackupAndRestore
from keras_seqmodels.training.run_callbacks import BestCheckpoint, Clock, ProgressLines


def fit(model, x=None, *, epochs, callbacks=None, verbose="auto", work_dir=None,
        monitor=("val_loss", "min"), time_budget=0.0, progress_lines=False, tensorboard=None,
        **fit_options):  # fmt: skip
    """Train a compiled ``model``: ``model.fit`` with the run's callbacks.

    Args:
        model: a compiled Keras model.
        x: the training data (``model.fit``'s ``x``).
        epochs: number of epochs.
        callbacks: callbacks run first (a task's own: one that puts the
            monitored value into the logs comes here).
        verbose: ``model.fit``'s verbosity.
        work_dir: a folder for the run's files, or None for none: the best
            checkpoint ``best.keras`` and its record ``best.json``,
            ``history.csv``, and ``backup/``, from which the same call
            resumes at the interrupted epoch (the folder must then hold a run
            of the same model and options).
        monitor: ``(log key, "min" or "max")`` that selects the checkpoint.
        time_budget: with ``work_dir``, stop after this many seconds of the
            process (0: never).
        progress_lines: a plain line every 30 s within an epoch (for output
            to a file or pipe, with ``verbose=2``).
        tensorboard: a TensorBoard log folder, or None.
        **fit_options: more ``model.fit`` arguments (``y``,
            ``validation_data``, ``shuffle``, ``batch_size``, ...).

    Returns:
        The Keras ``History`` (also ``model.history``).
    """
    run = list(callbacks or [])
    if work_dir is not None:
        os.makedirs(work_dir, exist_ok=True)
        key, mode = monitor
        run += [
            # A diverged run (NaN or infinite loss) stops at once; its best
            # checkpoint, from before, stays the run's result.
            keras.callbacks.TerminateOnNaN(),
            Clock(time_budget),
            BestCheckpoint(os.path.join(work_dir, "best.keras"), key, mode),
            AtomicBackupAndRestore(os.path.join(work_dir, "backup"), delete_checkpoint=False),
            keras.callbacks.CSVLogger(os.path.join(work_dir, "history.csv"), append=True),
        ]
    if progress_lines:
        run.append(ProgressLines())
    if tensorboard:
        run.append(keras.callbacks.TensorBoard(log_dir=tensorboard))
    return model.fit(x, epochs=epochs, callbacks=run, verbose=verbose, **fit_options)
