"""Train, select, resume, evaluate, export and register: written once."""

import argparse
import csv
import itertools
import json
import math
import os
import shutil
import sys
import time

import keras

from keras_seqmodels.training import loop
from keras_seqmodels.training.run_callbacks import read_record
from keras_seqmodels.utils.loading import load_model_file
from keras_seqmodels.utils.weights_dtype import store_weights_as
from keras_seqmodels.zoo.framework import arguments, distribution, ensemble, smoke


def main(recipe, action, argv):
    """Parse ``argv`` for ``action`` (``"train"``/``"evaluate"``) and run it."""
    args = arguments.parse(recipe, action, argv)
    return train(recipe, args) if action == "train" else evaluate(recipe, args)


def _runs(args):
    """``(subfolder, overrides, seed)`` of each run of the seeds x sweep grid."""
    keys = [key for key, _ in args.sweep]
    grid = list(itertools.product(*(values for _, values in args.sweep)))
    seeds = args.seeds or [args.seed]
    runs = []
    for values, seed in itertools.product(grid, seeds):
        parts = [f"{k}={v}" for k, v in zip(keys, values)]
        if len(seeds) > 1 or args.seeds:
            parts.append(f"seed={seed}")
        runs.append(("-".join(parts), dict(zip(keys, values)), seed))
    return runs


def train(recipe, args):
    """Train every run; the best on validation becomes ``<work-dir>/best.keras``
    (a training checkpoint, for ``--init-from``) and ``<work-dir>/NAME.keras``
    (the model to evaluate, export and register: packaged, no optimizer).

    Where the recipe's ``package`` needs TensorFlow and it is not installed
    (a JAX-only machine), the selected network is saved unpackaged, without
    optimizer state, as ``<work-dir>/NAME.unpackaged.keras``;
    ``--init-from FILE --epochs 0`` (on a TensorFlow machine) trains nothing
    and packages FILE as the selected model. ``--epochs 0`` alone loads the
    data and builds the network (the data preparation a recipe caches)."""
    if args.init_from:  # checked before anything runs
        _check_keras_file(args.init_from, "--init-from")
    # First, before any TensorFlow operation: a multi-worker strategy can be
    # made only then (distribution.create).
    strategy = distribution.create(args)
    base = arguments.config_of(recipe, args)
    unknown = [k for k, _ in args.sweep if k not in base]
    if unknown:
        raise ValueError(
            f"{recipe.name}: --sweep keys must be options of the model "
            f"({sorted(recipe.config)}). Received: {unknown}"
        )
    for key, values in args.sweep:  # every value checked before any run trains
        for value in values:
            _typed(key, base[key], value)
    extra = getattr(args, "ensemble_with", None) or []
    if args.ensemble and not (args.seeds or args.sweep or extra):
        raise ValueError(
            f"{recipe.name}: --ensemble K needs several runs (--seeds or --sweep) "
            "or models to add (--ensemble-with FILE)."
        )
    if extra and not args.ensemble:
        raise ValueError(f"{recipe.name}: --ensemble-with FILE needs --ensemble K.")
    for path in extra:
        _check_keras_file(path, "--ensemble-with")
    data_dir = arguments.resolve_data_dir(recipe, args.data_dir, args.smoke)
    base["data_dir"] = data_dir
    if args.epochs == 0 and extra and not args.init_from:
        # Nothing to train: the selection among the --ensemble-with models.
        best, record = ensemble.assemble(recipe, args, [], data_dir, dict(base, seed=args.seed))
        return _finish(recipe, args, best, record)
    if args.epochs == 0 and args.init_from:
        return _package_only(recipe, args, dict(base, seed=args.seed), data_dir)
    results = []
    for folder, overrides, seed in _runs(args):
        config = dict(base, seed=seed)
        for key, value in overrides.items():
            config[key] = _typed(key, base[key], value)
        work_dir = os.path.join(args.work_dir, folder) if folder else args.work_dir
        record = _fit_one(recipe, args, config, data_dir, work_dir, strategy)
        results.append((record, work_dir, config))
    trained = [r for r in results if r[0] is not None]
    if not trained and args.epochs == 0:
        print(f"{recipe.name}: --epochs 0: data loaded and network built; nothing trained.")
        return 0
    if not trained:
        raise RuntimeError(f"{recipe.name}: no run saved a checkpoint ({recipe.monitor[0]}).")
    if args.ensemble:
        best, record = ensemble.assemble(recipe, args, trained, data_dir)
        return _finish(recipe, args, best, record)
    sign = 1 if recipe.monitor[1] == "min" else -1
    record, work_dir, config = min(trained, key=lambda r: sign * r[0]["value"])
    best = os.path.join(args.work_dir, "best.keras")
    if work_dir != args.work_dir:
        shutil.copyfile(os.path.join(work_dir, "best.keras"), best)
        with open(os.path.join(args.work_dir, "best.json"), "w", encoding="utf-8") as f:
            json.dump(dict(record, run=work_dir, config=config), f)
    # What ships: the selected model (packaged, if the recipe packages it)
    # without the optimizer state that best.keras keeps for --init-from.
    model = load_model_file(best)
    return _package_and_save(recipe, args, model, config, record)


def _package_and_save(recipe, args, model, config, record):
    """Save ``<work-dir>/NAME.keras`` (packaged), or where packaging needs
    TensorFlow and it is missing, ``NAME.unpackaged.keras`` and how to
    package it."""
    if recipe.package is not None:
        try:
            model = recipe.package(model, dict(config, work_dir=args.work_dir))
        except ImportError as err:
            if not _lacks_tensorflow(err):
                raise
            path = os.path.join(args.work_dir, f"{recipe.name}.unpackaged.keras")
            model.save(path)
            print(
                f"{recipe.name}: not packaged (TensorFlow is not installed: {err}); "
                f"the selected network, without optimizer state, is {path}. Package "
                f"it on a machine with TensorFlow: seqmodels train {recipe.name} "
                f"--init-from {path} --epochs 0 --work-dir DIR (and the options "
                "of this run), which writes DIR/" + f"{recipe.name}.keras"
            )
            return _finish(recipe, args, path, dict(record, packaged=False))
    best = os.path.join(args.work_dir, f"{recipe.name}.keras")
    model.save(best)
    weights_dtype = getattr(args, "weights_dtype", "float32")
    if weights_dtype != "float32":
        store_weights_as(best, weights_dtype)
        record = dict(record, weights_dtype=weights_dtype)
    return _finish(recipe, args, best, record)


def _lacks_tensorflow(err):
    """Whether ``err`` (an ``ImportError``) says that TensorFlow is missing."""
    while err is not None:
        if "tensorflow" in f"{getattr(err, 'name', '')} {err}".lower():
            return True
        err = err.__cause__ or err.__context__
    return False


def _package_only(recipe, args, config, data_dir):
    """``--init-from FILE --epochs 0``: FILE is the selected model. Its
    monitored value is measured on validation (``model.evaluate``) and,
    with the training record beside FILE (``best.json``, ``history.csv``)
    where there is one, written to ``<work-dir>/best.json``; then FILE is
    packaged as ``<work-dir>/NAME.keras``."""
    if args.seeds or args.sweep or args.ensemble:
        raise ValueError(
            f"{recipe.name}: --init-from with --epochs 0 packages one model; "
            "it takes no --seeds, --sweep or --ensemble."
        )
    os.makedirs(args.work_dir, exist_ok=True)
    monitor, mode = recipe.monitor
    source = os.path.dirname(os.path.abspath(args.init_from))
    record = read_record(os.path.join(source, "best.json")) or {}
    record = dict(record, monitor=monitor, mode=mode, init_from=_shown(args.init_from))
    if "value" in record:
        record["trained_value"] = record.pop("value")
    if os.path.isfile(os.path.join(source, "history.csv")):
        record.setdefault("run", _shown(source))
    # Measured on a copy: what ships is the file as loaded, never compiled.
    measured = load_model_file(args.init_from, option="--init-from")
    measured.compile(**_compile_options(recipe, config))
    data = recipe.load_data(data_dir, "validation", args.smoke, config)
    scored = None
    if data is None and recipe.evaluate is not None:
        # No validation data for fit: the recipe scores validation itself
        # (in a callback during training), as `seqmodels evaluate` does.
        scored = dict(config, split="validation", data_dir=data_dir, model=args.init_from)
        load = recipe.evaluation_data or recipe.load_data
        data = load(data_dir, "validation", args.smoke, scored)
    try:
        if scored is not None:
            metrics = recipe.evaluate(measured, data, scored)
        else:
            metrics = _measure(measured, data, config.get("batch_size", 32))
    except (ValueError, TypeError, KeyError) as err:
        raise ValueError(
            f"{recipe.name}: --init-from {args.init_from} --epochs 0: the file could not "
            f"be scored on validation as the network this recipe trains ({err}). It "
            f"takes the network a run selects (a run's WORK_DIR/best.keras, or the "
            f"{recipe.name}.unpackaged.keras a run without TensorFlow writes), not a "
            "packaged model."
        ) from err
    key = monitor[len("val_") :] if monitor.startswith("val_") else monitor
    record["value"] = float(metrics[key]) if key in metrics else None
    with open(os.path.join(args.work_dir, "best.json"), "w", encoding="utf-8") as f:
        json.dump(record, f)
    model = load_model_file(args.init_from, option="--init-from")
    return _package_and_save(recipe, args, model, config, record)


def _start_from(recipe, model, path):
    """Set ``model``'s weights to those of the ``.keras`` file ``path``,
    which must hold the network this run builds (Keras's ``set_weights``
    checks the count and shapes; its error is given with what the option
    takes)."""
    source = load_model_file(path, option="--init-from")
    try:
        model.set_weights(source.get_weights())
    except ValueError as err:
        packaged = (
            f", not a packaged {recipe.name}.keras such as the shipped one, which holds "
            "more than the network"
            if recipe.package is not None
            else ""
        )
        raise ValueError(
            f"{recipe.name}: --init-from {path}: its weights do not fit the network "
            f"this run builds ({err}). --init-from takes this recipe's network, "
            f"built with the same options (a run's WORK_DIR/best.keras){packaged}."
        ) from err


def _shown(path):
    """``path`` relative to the working folder where it lies below it (as
    the zoo index records runs), else absolute."""
    relative = os.path.relpath(path)
    return os.path.abspath(path) if relative.startswith("..") else relative


def _measure(model, data, batch_size):
    """``model.evaluate``'s metrics on a recipe's data: arrays, a dataset,
    or a ``PyDataset`` batch by batch, as its batches may differ in shape
    (the ``tf.data`` signature Keras infers from the first two does not
    allow it). Batch values are averaged weighted by the batch's rows, as
    ``evaluate`` averages the loss (other metrics: a close average)."""
    if isinstance(data, tuple):
        return model.evaluate(*data, batch_size=batch_size, verbose=0, return_dict=True)
    if not isinstance(data, keras.utils.PyDataset):
        return model.evaluate(data, verbose=0, return_dict=True)
    totals, rows = {}, 0
    for i in range(len(data)):
        batch = data[i]
        n = len(keras.tree.flatten(batch[0])[0])
        logs = model.test_on_batch(*batch, return_dict=True)
        for key, value in logs.items():
            totals[key] = totals.get(key, 0.0) + n * float(value)
        rows += n
    return {key: value / rows for key, value in totals.items()}


def _compile_options(recipe, config):
    """``recipe.compile_options``; with 0 epochs (nothing trained) those of
    1, as a learning-rate schedule over 0 steps is invalid."""
    return recipe.compile_options(dict(config, epochs=max(config.get("epochs", 1), 1)))


def _finish(recipe, args, best, record):
    print(json.dumps({"model": recipe.name, "selected": best, **record}))
    if args.export and record.get("packaged", True):
        from keras_seqmodels import export
        from keras_seqmodels.zoo.models import specs

        model = load_model_file(best)
        spec = specs().get(recipe.name)
        if spec is None:  # a recipe outside the zoo: the lookup by model type
            export.write(model, args.export)
        else:  # what `seqmodels export NAME` writes: its spec's writer and options
            export.write(model, args.export, writer=spec.exporter("savedmodel"),
                         served_name=recipe.name, **spec.default_export_options())  # fmt: skip
        print(f"{recipe.name}: exported to {args.export}")
    return 0


def _check_keras_file(path, option):
    """``path`` names a ``.keras`` file (a zip archive with a config), or one
    error naming the option, the file and what is wrong."""
    import zipfile

    if not os.path.isfile(path):
        raise FileNotFoundError(2, f"{option}: no such file", path)
    if not zipfile.is_zipfile(path):
        raise ValueError(
            f"{option} {path}: not a Keras model file (a .keras file is a zip archive "
            "with config.json and model.weights.h5; this file is not a zip archive); "
            "give a file written by model.save, e.g. a run's best.keras"
        )
    with zipfile.ZipFile(path) as archive:
        missing = {"config.json", "model.weights.h5"} - set(archive.namelist())
    if missing:
        raise ValueError(
            f"{option} {path}: a zip archive without {', '.join(sorted(missing))}; "
            "give a file written by model.save, e.g. a run's best.keras"
        )


def _typed(key, default, text):
    """A ``--sweep`` value as the option's type (and range: ``--KEY`` checks)."""
    if isinstance(default, bool):
        return text.lower() in ("1", "true", "yes")
    if default is None:
        return text
    try:
        return arguments._config_type(key, default)(text)
    except argparse.ArgumentTypeError as err:
        raise ValueError(f"--sweep {key}: {err}") from None


def _verbosity(verbose):
    """``--verbose``, or by default 1 (a progress bar) on a terminal and 2 (a
    line per epoch, with ``ProgressLines`` within it) when piped."""
    if verbose is not None:
        return verbose
    return 1 if sys.stdout.isatty() else 2


def _check_work_dir(recipe, work_dir, config):
    """Refuse a work folder holding a run of another model or of other options.

    Its backup would be restored into this run (a resume); Keras would warn
    about mismatched weights and then fail, or mix two runs. Options that do
    not change the run (``data_dir``) may differ.
    """
    state = [os.path.join(work_dir, "backup"), os.path.join(work_dir, "best.keras")]
    if not any(os.path.isdir(p) and os.listdir(p) or os.path.isfile(p) for p in state):
        return  # nothing to resume: the folder is reused from scratch
    recorded = {}
    for name in ("run.json", "config.json"):
        path = os.path.join(work_dir, name)
        if os.path.isfile(path):
            try:
                with open(path, encoding="utf-8") as f:
                    recorded[name] = json.load(f)
            except (OSError, ValueError):
                recorded[name] = None
    model = (recorded.get("run.json") or {}).get("model")
    again = f"give another --work-dir, or delete {work_dir} to start over"
    if model is not None and model != recipe.name:
        raise ValueError(
            f"{recipe.name}: --work-dir {work_dir} holds a run of the model {model!r}; {again}"
        )
    before = recorded.get("config.json")
    if not isinstance(before, dict):
        return
    ignore = {"data_dir"}
    keys = sorted((set(before) | set(config)) - ignore)
    now = json.loads(json.dumps(config))  # as it would be written
    changed = [k for k in keys if before.get(k, "(none)") != now.get(k, "(none)")]
    if changed:
        shown = ", ".join(
            f"{k}: {before.get(k, '(none)')!r} there, {now.get(k, '(none)')!r} now"
            for k in changed[:5]
        )
        raise ValueError(
            f"{recipe.name}: --work-dir {work_dir} holds a run with other options ({shown}"
            f"{', ...' if len(changed) > 5 else ''}); resuming it would mix the two runs; "
            f"{again}"
        )


def _fit_one(recipe, args, config, data_dir, work_dir, strategy=None):
    _check_work_dir(recipe, work_dir, config)
    os.makedirs(work_dir, exist_ok=True)
    with open(os.path.join(work_dir, "config.json"), "w", encoding="utf-8") as f:
        json.dump(config, f, indent=1, sort_keys=True)
    with open(os.path.join(work_dir, "run.json"), "w", encoding="utf-8") as f:
        json.dump({"model": recipe.name}, f)
    keras.utils.set_random_seed(config["seed"])
    train_data = recipe.load_data(data_dir, "train", args.smoke, config)
    validation = recipe.load_data(data_dir, "validation", args.smoke, config)
    fit_data = train_data
    if args.smoke:  # a few batches, whatever the model's sizes (callbacks see all)
        batch = config.get("batch_size", args.batch_size)
        fit_data = smoke.cut(recipe.name, "train", train_data, batch)
        validation = smoke.cut(recipe.name, "validation", validation, batch)
    with distribution.scope(args, strategy) as setup:
        model = recipe.build_model(config)
        options = _compile_options(recipe, config)
        if args.smoke:  # a few steps: tracing beats compiling with XLA
            options.setdefault("jit_compile", False)
        setup.compile(model, **options)
        if args.init_from:
            _start_from(recipe, model, args.init_from)
        if recipe.prepare is not None:
            recipe.prepare(model, train_data, config, work_dir)
        extra = recipe.callbacks(config, work_dir, train_data) if recipe.callbacks else []
        verbose = _verbosity(args.verbose)
        tensorboard = None
        if getattr(args, "tensorboard", None):
            run = os.path.relpath(work_dir, args.work_dir)
            tensorboard = os.path.join(args.tensorboard, "" if run == "." else run)
        # The package's one training loop, with the run's checkpoint, backup
        # (resume), history, clock and non-finite stop in work_dir.
        loop.fit(
            model,
            **setup.fit_inputs(fit_data, shuffle=True, seed=config["seed"]),
            validation_data=setup.validation_data(validation),
            epochs=args.epochs,
            callbacks=extra,
            verbose=verbose,
            work_dir=work_dir,
            monitor=recipe.monitor,
            time_budget=args.time_budget,
            progress_lines=verbose == 2,
            tensorboard=tensorboard,
        )
    return read_record(os.path.join(work_dir, "best.json"))


def load_model(recipe, path=None):
    """``path`` (a ``.keras`` file), or the shipped artifact (checked)."""
    if path:
        return load_model_file(path, option="--model")
    from keras_seqmodels import zoo

    return zoo.load_model(recipe.name)


def _say(text):
    print(text, file=sys.stderr, flush=True)


def evaluate(recipe, args):
    """Print the metrics of a model on ``--split``; ``--register`` ships it."""
    if args.model is None:  # a recipe-only model says so before reading any data
        from keras_seqmodels.zoo import api

        api.check_shipped(recipe.name)
    data_dir = arguments.resolve_data_dir(recipe, args.data_dir, args.smoke)
    config = dict(
        arguments.config_of(recipe, args), split=args.split, data_dir=data_dir, model=args.model
    )
    # What it is doing, on standard error (standard output ends with the JSON line).
    start = time.monotonic()
    _say(f"{recipe.name}: loading {args.model or 'the shipped model'}...")
    model = load_model(recipe, args.model)
    _say(f"{recipe.name}: reading the {args.split} split...")
    load = recipe.evaluation_data or recipe.load_data
    data = load(data_dir, args.split, args.smoke, config)
    _say(f"{recipe.name}: scoring the {args.split} split...")
    metrics = recipe.evaluate(model, data, config)
    _say(f"{recipe.name}: done in {time.monotonic() - start:.0f} s")
    print(json.dumps({"model": recipe.name, "split": args.split, **metrics}))
    if args.register:
        register(recipe, args.model, args.split, metrics, model)
    return 0


def register(recipe, model_path, split, metrics, model=None):
    """Ship ``model_path`` with its test metrics and its training record.

    The model's assets (a vocabulary file the task reads) ship with it: each
    asset the zoo index records for the model is taken from the file of the
    same name beside ``model_path`` (where the recipe's ``package`` hook
    writes it); a missing one is an error, so a model never ships without
    the vocabulary it was trained with."""
    from keras_seqmodels.zoo.registry import register_model

    if not model_path or split != "test":
        raise ValueError(f"{recipe.name}: --register needs --model PATH and --split test.")
    folder = os.path.dirname(os.path.abspath(model_path))
    assets = {}
    for key, entry in _recorded_assets(recipe.name).items():
        assets[key] = os.path.join(folder, entry["file"])
        if not os.path.isfile(assets[key]):
            raise FileNotFoundError(
                f"{recipe.name}: --register ships the asset {key!r} from "
                f"{assets[key]}, which does not exist; the recipe's package step "
                "writes it beside the selected model."
            )
    extra = {}
    if model is not None:  # the zoo's cards count the trained weights
        extra["parameters"] = sum(math.prod(w.shape) for w in model.trainable_weights)
    record = read_record(os.path.join(folder, "best.json"))
    if record is not None:
        extra["selection"] = record
        if record.get("ensemble"):
            extra["members"] = len(record["ensemble"])
    history = os.path.join(record.get("run", folder) if record else folder, "history.csv")
    if os.path.isfile(history):
        with open(history, encoding="utf-8") as f:
            rows = list(csv.DictReader(f))
        extra["training_time_s"] = round(sum(float(r.get("seconds") or 0) for r in rows))
    return register_model(
        recipe.name,
        model_path,
        task=recipe.task,
        metrics={f"test_{k}": v for k, v in metrics.items()},
        data=recipe.data,
        command=f"seqmodels evaluate {recipe.name} --split test",
        card=recipe.card,
        extra=extra,
        assets=assets,
    )


def _recorded_assets(name):
    """``{key: {"file": ..., "sha256": ...}}`` of ``name`` in the zoo index."""
    from keras_seqmodels.zoo import registry

    with open(registry.INDEX_PATH, encoding="utf-8") as f:
        return json.load(f).get(name, {}).get("assets", {})
