"""Greedy forward selection of an ensemble on the validation split.

``seqmodels train NAME --seeds 1,2,3 --ensemble K``: after every run, the
packaged model of each run is a candidate, and so is each packaged model
that ``--ensemble-with FILE`` names (e.g. the shipped one: one run then
suffices); starting from none, the candidate
whose addition gives the best validation metric of ``recipe.combine(chosen)``
is added, for ``K`` steps; the prefix of that path with the best metric is
kept (Caruana et al. 2004, "Ensemble selection from libraries of models",
without replacement). Candidates with equal metrics are ordered by the
recipe's ``tie_break`` metric when it has one (e.g. the validation NLL),
then by their order. The assembled model is measured again on validation
and saved as ``<work-dir>/<name>.keras``.
"""

import json
import os

from keras_seqmodels.utils.loading import load_model_file


def metric_key(recipe):
    """The key of ``recipe.evaluate``'s dict that ``MONITOR`` names
    (``val_upos_accuracy`` -> ``upos_accuracy``)."""
    key = recipe.monitor[0]
    return key[len("val_") :] if key.startswith("val_") else key


def _order(recipe, metrics):
    """The sort key of one trial: the selection metric, then the tie-break."""
    key = metric_key(recipe)
    sign = 1 if recipe.monitor[1] == "min" else -1
    if key not in metrics:
        raise ValueError(
            f"{recipe.name}: evaluate gives no {key!r} (the selection metric "
            f"{recipe.monitor[0]!r} without 'val_'). Received: {sorted(metrics)}"
        )
    tie_break = getattr(recipe, "tie_break", None)
    if tie_break is None:
        return (sign * metrics[key],)
    tie_key, tie_mode = tie_break
    if tie_key not in metrics:
        raise ValueError(
            f"{recipe.name}: evaluate gives no {tie_key!r} (the recipe's tie_break). "
            f"Received: {sorted(metrics)}"
        )
    return (sign * metrics[key], (1 if tie_mode == "min" else -1) * metrics[tie_key])


def select(recipe, candidates, data, config, size):
    """``(chosen indices, metrics)`` of the greedy selection of at most
    ``size`` of ``candidates`` (models) on ``data`` (validation): ``size``
    steps (or until none is left), then the prefix of the path with the best
    metric (the shortest among equals)."""
    key = metric_key(recipe)
    chosen, path = [], []
    while len(chosen) < min(size, len(candidates)):
        trials = []
        for i in range(len(candidates)):
            if i in chosen:
                continue
            model = recipe.combine([candidates[j] for j in chosen + [i]], config)
            metrics = recipe.evaluate(model, data, config)
            order = _order(recipe, metrics)
            print(json.dumps({"ensemble": chosen + [i], key: metrics[key]}), flush=True)
            trials.append((order, i, metrics))
        value, i, metrics = min(trials, key=lambda t: (t[0], t[1]))
        chosen.append(i)
        path.append((value, metrics))
    best = min(range(len(path)), key=lambda k: path[k][0])
    return chosen[: best + 1], path[best][1]


def assemble(recipe, args, runs, data_dir, base=None):
    """Select among ``runs`` (``(record, work_dir, config)``) and the
    packaged models of ``args.ensemble_with`` (``base``: the config when
    there are no runs), save the combined model; returns its path and its
    validation record."""
    if recipe.combine is None:
        raise ValueError(f"{recipe.name}: --ensemble needs a `combine` hook in its recipe.")
    candidates, folders = [], []
    for _, work_dir, config in runs:
        model = load_model_file(os.path.join(work_dir, "best.keras"))
        if recipe.package is not None:
            model = recipe.package(model, dict(config, work_dir=work_dir))
        candidates.append(model)
        folders.append(work_dir)
    # Packaged models from elsewhere (--ensemble-with): candidates as they are.
    for path in getattr(args, "ensemble_with", None) or []:
        candidates.append(load_model_file(path, option="--ensemble-with"))
        folders.append(path)
    if len(candidates) < 2:
        raise ValueError(
            f"{recipe.name}: --ensemble selects among at least 2 models; received "
            f"{len(candidates)} (runs and --ensemble-with files)."
        )
    config = dict(runs[0][2] if runs else base, split="validation", data_dir=data_dir, model=None)
    load = recipe.evaluation_data or recipe.load_data
    data = load(data_dir, "validation", args.smoke, config)
    chosen, _ = select(recipe, candidates, data, config, args.ensemble)
    combined = recipe.combine([candidates[i] for i in chosen], config)
    os.makedirs(args.work_dir, exist_ok=True)
    path = os.path.join(args.work_dir, f"{recipe.name}.keras")
    combined.save(path)
    # Measured again on the saved file: what ships is what was selected.
    again = load_model_file(path)
    metrics = recipe.evaluate(again, data, config)
    record = {
        "monitor": recipe.monitor[0],
        "mode": recipe.monitor[1],
        "value": metrics[metric_key(recipe)],
        "ensemble": [folders[i] for i in chosen],
        "validation": metrics,
    }
    with open(os.path.join(args.work_dir, "best.json"), "w", encoding="utf-8") as f:
        json.dump(record, f)
    return path, record
