"""Train, select, resume, evaluate, export and register: written once."""

import csv
import itertools
import json
import os
import shutil

import keras

from keras_seqmodels.training.fault_tolerance import AtomicBackupAndRestore
from keras_seqmodels.zoo.framework import arguments, distribution, ensemble
from keras_seqmodels.zoo.framework.callbacks import BestCheckpoint, Clock, read_record


def main(recipe, action, argv):
    """Parse ``argv`` for ``action`` (``"train"``/``"evaluate"``) and run it."""
    args = arguments.parser_for(recipe, action).parse_args(list(argv))
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
    (the model to evaluate, export and register: packaged, no optimizer)."""
    base = arguments.config_of(recipe, args)
    unknown = [k for k, _ in args.sweep if k not in base]
    if unknown:
        raise ValueError(
            f"{recipe.name}: --sweep keys must be options of the model "
            f"({sorted(recipe.config)}). Received: {unknown}"
        )
    if args.ensemble and not (args.seeds or args.sweep):
        raise ValueError(f"{recipe.name}: --ensemble K needs several runs (--seeds or --sweep).")
    data_dir = arguments.resolve_data_dir(recipe, args.data_dir, args.smoke)
    base["data_dir"] = data_dir
    results = []
    for folder, overrides, seed in _runs(args):
        config = dict(base, seed=seed)
        for key, value in overrides.items():
            config[key] = _typed(base[key], value)
        work_dir = os.path.join(args.work_dir, folder) if folder else args.work_dir
        record = _fit_one(recipe, args, config, data_dir, work_dir)
        results.append((record, work_dir, config))
    trained = [r for r in results if r[0] is not None]
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
    model = keras.saving.load_model(best, compile=False, safe_mode=True)
    if recipe.package is not None:
        model = recipe.package(model, dict(config, work_dir=args.work_dir))
    best = os.path.join(args.work_dir, f"{recipe.name}.keras")
    model.save(best)
    return _finish(recipe, args, best, record)


def _finish(recipe, args, best, record):
    print(json.dumps({"model": recipe.name, "selected": best, **record}))
    if args.export:
        from keras_seqmodels import export

        model = keras.saving.load_model(best, compile=False, safe_mode=True)
        export.exporter_for(recipe.name)(model, args.export)
        print(f"{recipe.name}: exported to {args.export}")
    return 0


def _typed(default, text):
    """A ``--sweep`` value as the type of the option's default."""
    if isinstance(default, bool):
        return text.lower() in ("1", "true", "yes")
    return text if default is None else type(default)(text)


def _fit_one(recipe, args, config, data_dir, work_dir):
    os.makedirs(work_dir, exist_ok=True)
    with open(os.path.join(work_dir, "config.json"), "w", encoding="utf-8") as f:
        json.dump(config, f, indent=1, sort_keys=True)
    keras.utils.set_random_seed(config["seed"])
    train_data = recipe.load_data(data_dir, "train", args.smoke, config)
    validation = recipe.load_data(data_dir, "validation", args.smoke, config)
    with distribution.scope(args) as setup:
        model = recipe.build_model(config)
        options = recipe.compile_options(config)
        if args.smoke:  # a few steps: tracing beats compiling with XLA
            options.setdefault("jit_compile", False)
        setup.compile(model, **options)
        if args.init_from:
            source = keras.saving.load_model(args.init_from, compile=False, safe_mode=True)
            model.set_weights(source.get_weights())
        if recipe.prepare is not None:
            recipe.prepare(model, train_data, config, work_dir)
        monitor, mode = recipe.monitor
        extra = recipe.callbacks(config, work_dir, train_data) if recipe.callbacks else []
        callbacks = [
            *extra,
            Clock(args.time_budget),
            BestCheckpoint(os.path.join(work_dir, "best.keras"), monitor, mode),
            AtomicBackupAndRestore(os.path.join(work_dir, "backup"), delete_checkpoint=False),
            keras.callbacks.CSVLogger(os.path.join(work_dir, "history.csv"), append=True),
        ]
        model.fit(
            **setup.fit_inputs(train_data, shuffle=True, seed=config["seed"]),
            validation_data=setup.validation_data(validation),
            epochs=args.epochs,
            callbacks=callbacks,
            verbose=args.verbose,
        )
    return read_record(os.path.join(work_dir, "best.json"))


def load_model(recipe, path=None):
    """``path`` (a ``.keras`` file), or the shipped artifact (checked)."""
    if path:
        return keras.saving.load_model(path, compile=False, safe_mode=True)
    from keras_seqmodels import zoo

    return zoo.load_model(recipe.name)


def evaluate(recipe, args):
    """Print the metrics of a model on ``--split``; ``--register`` ships it."""
    data_dir = arguments.resolve_data_dir(recipe, args.data_dir, args.smoke)
    config = dict(
        arguments.config_of(recipe, args), split=args.split, data_dir=data_dir, model=args.model
    )
    model = load_model(recipe, args.model)
    load = recipe.evaluation_data or recipe.load_data
    metrics = recipe.evaluate(model, load(data_dir, args.split, args.smoke, config), config)
    print(json.dumps({"model": recipe.name, "split": args.split, **metrics}))
    if args.register:
        register(recipe, args.model, args.split, metrics)
    return 0


def register(recipe, model_path, split, metrics):
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
    record = read_record(os.path.join(folder, "best.json"))
    if record is not None:
        extra["selection"] = record
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
