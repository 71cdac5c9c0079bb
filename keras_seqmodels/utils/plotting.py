"""Pictures of sequence models: training curves, attention, NTM memory access.

Every ``plot_*`` function draws on a new ``matplotlib.figure.Figure`` with the
Agg canvas and writes a PNG, without ``pyplot`` and without changing the
process's matplotlib backend (safe in notebooks and on machines without a
display). ``seqmodels plot`` is the command-line front end.
"""

import csv
import json
import math
import os

import numpy as np

__all__ = [
    "PlotError",
    "copy_sequence",
    "find_ntm",
    "load_history",
    "ntm_weightings",
    "plot_attention",
    "plot_history",
    "plot_ntm_weightings",
]


class PlotError(ValueError):
    """Input the plotting functions cannot draw (a bad log, a model without an
    NTM layer, an array of the wrong shape)."""


# Training curves -------------------------------------------------------------


def load_history(path):
    """Read a training log into ``{metric: [value per epoch]}``.

    Accepted forms (chosen by content, not by file name):

    - a Keras ``CSVLogger`` file: a header line (``epoch,loss,val_loss,...``)
      and one row per epoch;
    - JSON ``{"history": {"loss": [...], ...}}`` (``History.history`` saved by
      a recipe) or a plain JSON dict of lists;
    - JSON lines, one ``{"epoch": 1, "loss": ..., ...}`` object per epoch.

    Non-numeric columns are dropped. An ``epoch`` column, when present, is
    kept as the x axis.

    Args:
        path: the log file.

    Returns:
        A dict mapping each metric name to a list of floats, all lists of the
        same length.

    Raises:
        FileNotFoundError: no such file.
        PlotError: the file is none of the forms above, or has no numeric
            series.

    Example:

    >>> import json, tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "h.json")
    >>> json.dump({"history": {"loss": [2.0, 1.0]}}, open(path, "w"))
    >>> load_history(path)
    {'loss': [2.0, 1.0]}
    """
    if not os.path.isfile(path):
        raise FileNotFoundError(f"no such file: {path}")
    with open(path, encoding="utf-8") as f:
        text = f.read()
    expected = (
        "expected a Keras CSVLogger file, JSON {\"history\": {name: [values]}}, "
        "a JSON dict of lists, or JSON lines of {name: value} per epoch"
    )
    stripped = text.lstrip()
    if not stripped:
        raise PlotError(f"{path} is empty; {expected}")
    if stripped[0] in "{[":
        try:
            data = json.loads(text)
        except json.JSONDecodeError:
            data = _json_lines(path, text, expected)
        else:
            if isinstance(data, dict) and isinstance(data.get("history"), dict):
                data = data["history"]
    else:
        rows = list(csv.reader(text.splitlines()))
        header, body = rows[0], [r for r in rows[1:] if r]
        if len(header) < 2 or any(len(r) != len(header) for r in body):
            raise PlotError(f"{path} is not a CSV table with a header line; {expected}")
        data = {name: [r[i] for r in body] for i, name in enumerate(header)}
    return _numeric_series(path, data, expected)


def _json_lines(path, text, expected):
    rows = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as err:
            raise PlotError(
                f"{path} line {number}: not JSON ({err.msg} at column {err.colno}); {expected}"
            ) from None
        if not isinstance(row, dict):
            raise PlotError(f"{path} line {number}: not a JSON object; {expected}")
        rows.append(row)
    names = [k for k in rows[0] if all(k in r for r in rows)] if rows else []
    return {k: [r[k] for r in rows] for k in names}


def _numeric_series(path, data, expected):
    if not isinstance(data, dict):
        raise PlotError(f"{path}: top level is a JSON {type(data).__name__}; {expected}")
    out = {}
    for name, values in data.items():
        if not isinstance(values, (list, tuple)) or not values:
            continue
        try:
            series = [float(v) for v in values]
        except (TypeError, ValueError):
            continue
        out[str(name)] = series
    if not out or set(out) == {"epoch"}:
        raise PlotError(f"{path} has no numeric series; {expected}")
    lengths = {len(v) for v in out.values()}
    if len(lengths) > 1:
        raise PlotError(
            f"{path}: series have different lengths "
            f"({', '.join(f'{k}={len(v)}' for k, v in out.items())})"
        )
    return out


def _curve_groups(history, metrics=None):
    """``[(title, [names])]``: each metric with its ``val_`` twin on one panel."""
    names = [k for k in history if k != "epoch"]
    if metrics:
        unknown = [m for m in metrics if m not in history]
        if unknown:
            raise PlotError(
                f"unknown metric(s) {unknown}; the log has {sorted(names)}"
            )
        names = [n for n in names if n in metrics or n.removeprefix("val_") in metrics]
    groups = {}
    for name in names:
        groups.setdefault(name.removeprefix("val_"), []).append(name)
    return list(groups.items())


def plot_history(history, path, title=None, metrics=None, log_scale=None):
    """Draw training curves, one panel per metric (training and ``val_`` together).

    Args:
        history: ``{name: [value per epoch]}`` (e.g. from ``load_history`` or
            ``model.fit(...).history``).
        path: the PNG to write (its directory is created).
        title: figure title.
        metrics: optional list of metric names to draw (default: all).
        log_scale: names of the panels drawn on a log y axis (default: the
            losses when they span more than a factor of 10).

    Returns:
        ``path``.

    Example:

    >>> import os, tempfile
    >>> out = plot_history({"loss": [2.0, 1.0], "val_loss": [2.2, 1.4]},
    ...                    os.path.join(tempfile.mkdtemp(), "curves.png"))
    >>> os.path.getsize(out) > 1000
    True
    """
    from matplotlib.figure import Figure

    history = {k: [float(v) for v in vals] for k, vals in history.items()}
    groups = _curve_groups(history, metrics)
    if not groups:
        raise PlotError("plot_history: no series to draw")
    n = len(next(iter(history.values())))
    if "epoch" in history:  # CSVLogger counts from 0, Keras's progress bar from 1
        x = np.asarray(history["epoch"]) + (1 if history["epoch"][0] == 0 else 0)
    else:
        x = np.arange(1, n + 1)
    cols = min(len(groups), 3)
    rows = math.ceil(len(groups) / cols)
    fig = Figure(figsize=(4.2 * cols, 3.2 * rows))
    axes = np.atleast_1d(fig.subplots(rows, cols, squeeze=False)).ravel()
    for ax, (base, names) in zip(axes, groups):
        for name in names:
            style = "--" if name.startswith("val_") else "-"
            label = ("validation" if name.startswith("val_") else "training")
            ax.plot(x, history[name], style, marker="." if n <= 60 else None,
                    label=label if len(names) > 1 else name)
        values = np.concatenate([np.asarray(history[k]) for k in names])
        finite = values[np.isfinite(values)]
        use_log = (
            base in log_scale if log_scale is not None
            else ("loss" in base and finite.size and finite.min() > 0
                  and finite.max() / finite.min() > 10)
        )
        if use_log:
            ax.set_yscale("log")
        ax.set_title(base if len(names) > 1 else names[0])
        ax.set_xlabel("epoch")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    for ax in axes[len(groups):]:
        ax.set_visible(False)
    if title:
        fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return _save(fig, path)


# Attention -------------------------------------------------------------------


def plot_attention(weights, source, target, path, title=None,
                   source_label="source", target_label="output"):
    """Draw an attention matrix as a grey heat-map (dark = strong attention).

    Args:
        weights: ``(len(target), len(source))`` array, each row summing to 1.
        source: labels of the columns (source tokens or pieces).
        target: labels of the rows (output tokens or pieces).
        path: the PNG to write.
        title: figure title.
        source_label, target_label: axis labels.

    Returns:
        ``path``.

    Example:

    >>> import os, tempfile, numpy as np
    >>> out = plot_attention(np.eye(3), ["a", "b", "c"], ["x", "y", "z"],
    ...                      os.path.join(tempfile.mkdtemp(), "attention.png"))
    >>> os.path.isfile(out)
    True
    """
    from matplotlib.figure import Figure

    weights = np.asarray(weights, np.float64)
    if weights.ndim != 2 or weights.shape != (len(target), len(source)):
        raise PlotError(
            f"plot_attention: `weights` must have shape (len(target), len(source)) = "
            f"({len(target)}, {len(source)}). Received shape {weights.shape}"
        )
    fig = Figure(figsize=(0.5 * len(source) + 2, 0.4 * len(target) + 2))
    ax = fig.subplots()
    image = ax.imshow(weights, cmap="Greys", vmin=0, vmax=1)
    fig.colorbar(image, ax=ax, label="attention weight", fraction=0.046, pad=0.04)
    ax.set_xticks(range(len(source)), source, rotation=60, ha="right")
    ax.set_yticks(range(len(target)), target)
    ax.set_xlabel(source_label)
    ax.set_ylabel(target_label)
    if title:
        ax.set_title(title, fontsize=9)
    fig.tight_layout()
    return _save(fig, path)


# Neural Turing Machine memory access ----------------------------------------


def copy_sequence(length, features=9, seed=0):
    """One copy-task input ``(2 length + 1, features)``: random bits on the
    first ``features - 1`` channels for ``length`` steps, a delimiter flag on
    the last channel, then ``length`` blank steps (the zoo's NTM copy format).

    Args:
        length: number of bit vectors L.
        features: input width (bits + 1 delimiter channel; 9 for 8-bit vectors).
        seed: NumPy seed of the bits.

    Returns:
        A float32 array ``(2 L + 1, features)``.

    Example:

    >>> copy_sequence(3).shape
    (7, 9)
    """
    if features < 2:
        raise PlotError(f"copy_sequence: `features` must be >= 2. Received: features={features}")
    rng = np.random.default_rng(seed)
    x = np.zeros((2 * length + 1, features), "float32")
    x[:length, :-1] = rng.integers(0, 2, (length, features - 1))
    x[length, -1] = 1.0
    return x


def find_ntm(model):
    """The first ``keras_seqmodels.memory.NTM`` layer of a model (searched
    depth first through nested models), or ``model`` itself when it is one.

    Args:
        model: a Keras model or layer.

    Returns:
        The ``NTM`` layer.

    Raises:
        PlotError: the model has no NTM layer.

    Example:

    >>> import keras, keras_seqmodels as ks
    >>> inputs = keras.Input((None, 9))
    >>> hidden = ks.memory.NTM(8, memory_size=6, memory_width=3, name="ntm")(inputs)
    >>> find_ntm(keras.Model(inputs, hidden)).name
    'ntm'
    """
    from keras_seqmodels.memory import NTM

    if isinstance(model, NTM):
        return model
    for layer in getattr(model, "layers", []):
        if isinstance(layer, NTM):
            return layer
        if getattr(layer, "layers", None):
            try:
                return find_ntm(layer)
            except PlotError:
                pass
    raise PlotError(
        f"model {getattr(model, 'name', model)!r} has no keras_seqmodels.memory.NTM layer"
    )


def ntm_weightings(model, inputs):
    """Read and write weightings of an NTM at every step of one sequence.

    Runs the model's NTM cell over the sequence once, in one ``keras.ops.scan``
    that also emits the weightings (the layer itself returns only the last
    states). Layers before the NTM in a functional model are applied first.

    Args:
        model: a Keras model containing an ``NTM`` layer (or the layer).
        inputs: ``(time, features)`` or ``(1, time, features)``: the model's
            input for one sequence.

    Returns:
        ``(reads, writes)``: NumPy arrays ``(time, read_heads, memory_size)``
        and ``(time, write_heads, memory_size)``.

    Example:

    >>> import keras_seqmodels as ks
    >>> ntm = ks.memory.NTM(8, memory_size=6, memory_width=3)
    >>> _ = ntm(np.zeros((1, 2, 9), "float32"))
    >>> reads, writes = ntm_weightings(ntm, copy_sequence(2))
    >>> reads.shape, writes.shape
    ((5, 1, 6), (5, 1, 6))
    """
    import keras
    from keras import ops

    ntm = find_ntm(model)
    x = np.asarray(inputs, "float32")
    if x.ndim == 2:
        x = x[None]
    if x.ndim != 3 or x.shape[0] != 1:
        raise PlotError(
            "ntm_weightings: `inputs` must be one sequence, (time, features) or "
            f"(1, time, features). Received shape {np.asarray(inputs).shape}"
        )
    if ntm is not model:
        if len(model.inputs) != 1:
            raise PlotError("ntm_weightings: the model must have a single input")
        expected = model.inputs[0].shape[-1]
        if expected is not None and expected != x.shape[-1]:
            raise PlotError(
                f"ntm_weightings: the model takes {expected} features per step. "
                f"Received {x.shape[-1]}"
            )
        if ntm.input is not model.inputs[0]:
            x = np.asarray(keras.Model(model.inputs, ntm.input)(x))
    if not ntm.built:
        raise PlotError("ntm_weightings: the NTM layer is not built (call it once first)")
    cell = ntm.cell
    if cell.read_mode == "hard":  # inference reads take the most likely slot
        x = np.concatenate([x, np.zeros(x.shape[:-1] + (cell.read_heads,), "float32")], -1)
    states = list(cell.get_initial_state(batch_size=1))

    def step(carry, x_t):
        _, new = cell(x_t, carry)
        # Keras's TensorFlow scan wants the per-step outputs shaped as the carry.
        return list(new), list(new)

    _, per_step = ops.scan(step, states, ops.transpose(ops.convert_to_tensor(x), (1, 0, 2)))
    reads, writes = per_step[-3], per_step[-2]  # (time, 1, heads, slots)
    return np.asarray(reads)[:, 0], np.asarray(writes)[:, 0]


def plot_ntm_weightings(reads, writes, path, title=None):
    """Draw NTM write and read weightings over time (slot × step, dark = high).

    Args:
        reads: ``(time, read_heads, memory_size)`` or ``(time, memory_size)``.
        writes: ``(time, write_heads, memory_size)`` or ``(time, memory_size)``.
        path: the PNG to write.
        title: figure title.

    Returns:
        ``path``.

    Example:

    >>> import os, tempfile
    >>> w = np.eye(5)[[0, 1, 2, 2, 2]]
    >>> out = plot_ntm_weightings(w, w, os.path.join(tempfile.mkdtemp(), "ntm.png"))
    >>> os.path.isfile(out)
    True
    """
    from matplotlib.figure import Figure

    panels = []
    for kind, w in (("write", writes), ("read", reads)):
        w = np.asarray(w, np.float64)
        if w.ndim == 2:
            w = w[:, None]
        if w.ndim != 3:
            raise PlotError(
                f"plot_ntm_weightings: `{kind}s` must be (time, heads, slots) or "
                f"(time, slots). Received shape {w.shape}"
            )
        for h in range(w.shape[1]):
            name = f"{kind} weighting" + (f" (head {h + 1})" if w.shape[1] > 1 else "")
            panels.append((name, w[:, h]))
    fig = Figure(figsize=(4 * len(panels), 3.6))
    axes = np.atleast_1d(fig.subplots(1, len(panels), sharey=True, squeeze=False)).ravel()
    for ax, (name, w) in zip(axes, panels):
        image = ax.imshow(w.T, aspect="auto", cmap="gray_r", origin="lower", vmin=0, vmax=1,
                          interpolation="nearest")
        ax.set_title(name)
        ax.set_xlabel("time step")
    axes[0].set_ylabel("memory slot")
    fig.colorbar(image, ax=axes[-1], label="weight")
    if title:
        fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return _save(fig, path)


def _save(fig, path):
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    fig.savefig(path, dpi=110, format="png")
    return path
