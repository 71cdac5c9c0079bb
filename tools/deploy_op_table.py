"""docs/deploy.md's "What becomes what" tables, read from exported files.

    python tools/deploy_op_table.py            # export each row, rewrite the tables
    python tools/deploy_op_table.py --check    # exit 1 if docs/deploy.md differs

Each row is one small model, ``keras.Input((4, 4))`` (or the row's inputs) then the
layer the row names with 4 units, written by ``export.to_litert(model, path,
batch_size=1)`` and ``export.to_onnx(model, path)``. Its cells are the op names the
two files hold, read back from them: the LiteRT file's main graph, then every other
subgraph (the bodies and conditions of its ``WHILE`` loops) as "loop"; the ONNX
file's main graph, then the graphs inside its ``Scan`` nodes as "scan". Names are
sorted, ``xN`` counts an op that occurs N times in that graph. A writer that refuses
the model gives "refused:" and the first sentence of its message.

Run on the TensorFlow backend (the LiteRT converter needs it); tests/export/
test_deploy_op_table.py exports every row again and compares it with the page.
"""

import argparse
import collections
import os
import re
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOC = os.path.join(ROOT, "docs", "deploy.md")
T, F, UNITS = 4, 4, 4  # RGLRU is elementwise: its input width is its width


def _seq(layer, shape=(T, F)):
    import keras

    return keras.Sequential([keras.Input(shape), layer])


def _masked(layer):
    import keras

    return keras.Sequential([keras.Input((T, F)), keras.layers.Masking(0.0), layer])


def _initial_state(layer):
    import keras

    x = keras.Input((T, F))
    h0, c0 = keras.Input((UNITS,)), keras.Input((UNITS,))
    return keras.Model([x, h0, c0], layer(x, initial_state=[h0, c0]))


def _rows():
    """``{table: [(label, build)]}``: ``label`` is what the page prints, ``build``
    makes the model."""
    import keras

    import keras_seqmodels as ks

    seq = {"return_sequences": True}
    rec, cells, lin = ks.layers.Recurrent, ks.cells, ks.linear_rnn
    recurrent = [
        ("`Recurrent(LSTMCell(4))`", lambda: _seq(rec(cells.LSTMCell(UNITS), **seq))),
        ("`ks.layers.LSTM(4)`", lambda: _seq(ks.layers.LSTM(UNITS, **seq))),
        ("`keras.layers.LSTM(4)`", lambda: _seq(keras.layers.LSTM(UNITS, **seq))),
        (
            "`Recurrent(LSTMCell(4, use_peepholes=True))`",
            lambda: _seq(rec(cells.LSTMCell(UNITS, use_peepholes=True), **seq)),
        ),
        (
            "`Recurrent(LSTMCell(4), go_backwards=True)`",
            lambda: _seq(rec(cells.LSTMCell(UNITS), go_backwards=True, **seq)),
        ),
        (
            "`Bidirectional(Recurrent(LSTMCell(4)))`",
            lambda: _seq(ks.layers.Bidirectional(rec(cells.LSTMCell(UNITS), **seq))),
        ),
        (
            "`Recurrent(LSTMCell(4))` with `initial_state=[h0, c0]` as model inputs",
            lambda: _initial_state(rec(cells.LSTMCell(UNITS), **seq)),
        ),
        (
            "`Recurrent(LSTMCell(4))` after `Masking`",
            lambda: _masked(rec(cells.LSTMCell(UNITS), **seq)),
        ),
        ("`Recurrent(GRUCell(4))` (reset after)", lambda: _seq(rec(cells.GRUCell(UNITS), **seq))),
        (
            "`Recurrent(GRUCell(4, reset_after=False))`",
            lambda: _seq(rec(cells.GRUCell(UNITS, reset_after=False), **seq)),
        ),
        ("`keras.layers.GRU(4)`", lambda: _seq(keras.layers.GRU(UNITS, **seq))),
        ("`Recurrent(ElmanCell(4))`", lambda: _seq(rec(cells.ElmanCell(UNITS), **seq))),
        ("`keras.layers.SimpleRNN(4)`", lambda: _seq(keras.layers.SimpleRNN(UNITS, **seq))),
        (
            "`Recurrent([LSTMCell(4), GRUCell(4)])` (`StackedCells`)",
            lambda: _seq(rec([cells.LSTMCell(UNITS), cells.GRUCell(UNITS)], **seq)),
        ),
        ("`Recurrent(GatedCell(4))`", lambda: _seq(rec(cells.GatedCell(UNITS), **seq))),
        (
            "`FourDirectional2D(GRUCell(4))` on `(4, 4, 4)` images",
            lambda: _seq(ks.layers.FourDirectional2D(cells.GRUCell(UNITS)), (T, T, F)),
        ),
    ]
    linear = [
        (f"`{name}(4)`", lambda name=name: _seq(getattr(lin, name)(UNITS, **seq)))
        for name in ("MinGRU", "MinLSTM", "LRU", "RGLRU", "HawkBlock", "SelectiveSSM")
    ]
    linear += [
        ("`HawkBlock(4)` after `Masking`", lambda: _masked(lin.HawkBlock(UNITS, **seq))),
        (
            "`Bidirectional(MinGRU(4))`",
            lambda: _seq(ks.layers.Bidirectional(lin.MinGRU(UNITS, **seq))),
        ),
    ]
    return {"recurrent": recurrent, "linear_rnn": linear}


TABLES = ("recurrent", "linear_rnn")


def _counted(names):
    counts = collections.Counter(names)
    return ", ".join(f"`{n}`" + (f" x{c}" if c > 1 else "") for n, c in sorted(counts.items()))


def litert_ops(content):
    """``(main, loops)``: the op names of a ``.tflite`` file's main graph and of
    its other subgraphs together."""
    from keras_seqmodels.export.litert_flatbuffer import _read
    from keras_seqmodels.export.litert_runtime import op_name

    model = _read(content)
    graphs = [[op_name(model, op) for op in g.operators] for g in model.subgraphs]
    return graphs[0], [name for g in graphs[1:] for name in g]


def onnx_ops(model):
    """``(main, inner)``: the node types of an ONNX model's main graph and of the
    graphs inside its nodes (``Scan`` bodies) together."""
    import onnx

    inner = []

    def walk(graph):
        for node in graph.node:
            for attribute in node.attribute:
                if attribute.type == onnx.AttributeProto.GRAPH:
                    inner.extend(n.op_type for n in attribute.g.node)
                    walk(attribute.g)

    walk(model.graph)
    return [n.op_type for n in model.graph.node], inner


def _describe(main, inner, inner_name):
    text = _counted(main)
    if inner:
        text += f"; {inner_name}: " + ", ".join(f"`{n}`" for n in sorted(set(inner)))
    return text


def _refused(error):
    # The writer's prefix, the layer's automatic name (it depends on how many
    # layers the process made before) and the advice after the reason go.
    text = re.sub(r"^to_\w+: ", "", str(error).strip().split("\n")[0])
    text = re.sub(r" '[^']*'", "", text)
    text = re.split(r" \(|; |\. ", text)[0].rstrip(".")
    return f"refused: {text.replace('|', '/')}"


def export_row(build, folder):
    """``(litert, onnx)``: the two cells of one row."""
    import onnx

    from keras_seqmodels import export

    model = build()
    try:
        path = export.to_litert(model, os.path.join(folder, "m.tflite"), batch_size=1)
        with open(path, "rb") as f:
            litert = _describe(*litert_ops(f.read()), "loop")
    except (ValueError, NotImplementedError) as error:
        litert = _refused(error)
    try:
        path = export.to_onnx(model, os.path.join(folder, "m.onnx"))
        onnx_cell = _describe(*onnx_ops(onnx.load(path)), "scan")
    except (ValueError, NotImplementedError) as error:
        onnx_cell = _refused(error)
    return litert, onnx_cell


HEADER = (
    "| layer (4 units; input `(batch, 4, 4)`) | LiteRT: `to_litert(model, path, batch_size=1)` "
    "| ONNX: `to_onnx(model, path)` |\n|---|---|---|"
)


def table(cells):
    """The markdown table of ``[(label, litert, onnx)]``."""
    return "\n".join([HEADER] + [f"| {a} | {b} | {c} |" for a, b, c in cells])


def _markers(name):
    return (
        f"<!-- op table {name}: python tools/deploy_op_table.py -->",
        f"<!-- end of op table {name} -->",
    )


def documented(name, text=None):
    """The page's table ``name`` as ``{label: (litert, onnx)}`` and its text."""
    if text is None:
        with open(DOC, encoding="utf-8") as f:
            text = f.read()
    begin, end = _markers(name)
    body = text[text.index(begin) + len(begin) : text.index(end)].strip()
    rows = {}
    for line in body.split("\n")[2:]:
        label, litert, onnx_cell = (c.strip() for c in line.strip().strip("|").split(" | "))
        rows[label] = (litert, onnx_cell)
    return rows, body


def rows_of(name):
    return _rows()[name]


def generate():
    """``{table: markdown}`` from freshly exported files."""
    out = {}
    for name in TABLES:
        cells = []
        for label, build in rows_of(name):
            with tempfile.TemporaryDirectory() as folder:
                cells.append((label, *export_row(build, folder)))
            print(f"{name}: {label}", file=sys.stderr)
        out[name] = table(cells)
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="compare, write nothing")
    args = parser.parse_args(argv)
    tables = generate()
    with open(DOC, encoding="utf-8") as f:
        text = f.read()
    new = text
    for name, markdown in tables.items():
        begin, end = _markers(name)
        start, stop = new.index(begin) + len(begin), new.index(end)
        new = new[:start] + "\n" + markdown + "\n" + new[stop:]
    if args.check:
        if new != text:
            print("docs/deploy.md's op tables differ: run python tools/deploy_op_table.py")
            return 1
        return 0
    with open(DOC, "w", encoding="utf-8") as f:
        f.write(new)
    return 0


if __name__ == "__main__":
    sys.exit(main())
