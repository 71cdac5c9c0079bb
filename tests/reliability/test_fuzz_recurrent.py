"""Property suite: random shapes, lengths, masks and dtypes thrown at every cell.

Each generated case is either invalid (wrong rank, a width other than the one
the layer was built with, integer or boolean inputs, a mask of the wrong
shape, initial states of the wrong shape) and must raise a ``ValueError`` or
``TypeError`` that names the layer and the faulty argument, or valid and must
give finite outputs equal, sequence by sequence, to an unbatched run:

- cells with a NumPy reference in ``tests/reference.py``: the float64
  reference run on each sequence alone, with its padded steps removed;
- every other cell exported by ``keras_seqmodels.cells`` (found at collection
  time, so new cells join without editing this file): the same layer run on
  each sequence alone, unmasked.

Case counts are printed at the end of the run (see ``fuzz_record.py``).
"""

import inspect

import keras
import numpy as np
import pytest
from fuzz_record import fuzz_settings, record
from hypothesis import given
from hypothesis import strategies as st
from keras import ops
from reference import STEPS, cell_weights, run_reference

import keras_seqmodels as ks

LAYER_NAME = "fuzzed_rnn"

# Cells with a NumPy reference; the key's prefix is the reference's name.
REFERENCE_CELLS = {
    "ElmanCell": {},
    "LSTMCell": {},
    "LSTMCell_peepholes": {"use_peepholes": True},
    "GRUCell": {},
    "GatedCell": {},
}

# Constructor arguments, beyond ``units``, of cells that need them. A new cell
# that cannot be built from ``units`` alone fails ``test_every_cell_is_fuzzed``
# with a message that points here.
EXTRA_ARGS = {
    "ClockworkCell": {"periods": (1, 2)},
    "OutputFeedbackCell": {"output_units": 3},
}


def _exported_cells():
    names = []
    for name in ks.cells.__all__:
        obj = getattr(ks.cells, name)
        if (
            inspect.isclass(obj)
            and issubclass(obj, keras.layers.Layer)
            and obj is not ks.cells.RecurrentCell
        ):
            names.append(name)
    return sorted(names)


OTHER_CELLS = [n for n in _exported_cells() if n not in STEPS]
ALL_CELLS = list(REFERENCE_CELLS) + OTHER_CELLS

INT_DTYPES = ("int32", "int64", "bool")


def make_cell(key, units, dtype):
    name = key.split("_")[0]
    if name == "StackedCells":  # a list of cells, not `units`: two of width `units`
        cells = [ks.cells.GRUCell(units, dtype=dtype), ks.cells.LSTMCell(units, dtype=dtype)]
        return ks.cells.StackedCells(cells, dtype=dtype)
    if name == "StateMachineCell":  # any layers as f_s and f_o: the chapter's plain RNN
        transition = keras.layers.Dense(units, activation="tanh", dtype=dtype)
        output = keras.layers.Dense(units, dtype=dtype)
        return ks.cells.StateMachineCell(transition, output, dtype=dtype)
    if name == "EchoStateGenerator":  # a reservoir with output feedback, run closed loop
        reservoir = ks.cells.EchoStateCell(units, feedback_size=1, dtype=dtype)
        return ks.cells.EchoStateGenerator(reservoir, dtype=dtype)
    kwargs = dict(REFERENCE_CELLS.get(key, {}), **EXTRA_ARGS.get(name, {}))
    return getattr(ks.cells, name)(units, dtype=dtype, **kwargs)


def randomize(layer, seed):
    rng = np.random.default_rng(seed)
    for v in layer.weights:
        if v.trainable:
            v.assign(rng.uniform(-0.6, 0.6, v.shape).astype(v.dtype))


def np_(x):
    return ops.convert_to_numpy(ops.cast(x, "float64"))


FAULTS = ("rank", "width", "dtype", "mask", "initial_state")


@st.composite
def cases(draw):
    # Half the cases are valid; the others carry one or two faults.
    faults = draw(
        st.one_of(
            st.just(frozenset()),
            st.frozensets(st.sampled_from(FAULTS), min_size=1, max_size=2),
        )
    )
    features = draw(st.integers(1, 4))
    case = dict(
        faults=faults,
        rank=draw(st.sampled_from([1, 2, 4])) if "rank" in faults else 3,
        batch=draw(st.integers(0, 3)),
        time=draw(st.integers(0, 6)),
        features=features,
        units=draw(st.sampled_from([2, 4])),
        input_dtype=draw(
            st.sampled_from(INT_DTYPES)
            if "dtype" in faults
            else st.sampled_from(["float32", "float32", "float64", "float16"])
        ),
        layer_dtype=draw(st.sampled_from(["float32", "float64"])),
        mask=(
            "wrong"
            if "mask" in faults
            else draw(st.sampled_from(["none", "random", "random", "bool_as_int"]))
        ),
        built_features=(
            features + draw(st.integers(1, 3))
            if "width" in faults
            else draw(st.sampled_from([None, features]))
        ),
        initial_state=(
            "wrong" if "initial_state" in faults else draw(st.sampled_from(["none", "random"]))
        ),
        precompute=draw(st.booleans()),
        go_backwards=draw(st.booleans()),
        seed=draw(st.integers(0, 2**16)),
    )
    return case


def _inputs(case, rng):
    shape = [case["batch"], case["time"], case["features"]]
    if case["rank"] < 3:
        shape = shape[: case["rank"] - 1] + [case["features"]]
    elif case["rank"] == 4:
        shape = shape + [2]
    x = rng.standard_normal(shape) * 2.0
    if case["input_dtype"] in INT_DTYPES:
        return (x > 0).astype(case["input_dtype"])
    return x.astype(case["input_dtype"])


def _mask(case, rng):
    b, t = case["batch"], case["time"]
    if case["mask"] == "none":
        return None
    if case["mask"] == "wrong":
        return rng.random((b, t + 1)) > 0.3
    m = rng.random((b, t)) > 0.3
    if b > 0:
        m[0] = False  # one fully masked row: keeps its initial state
    return m.astype("int32") if case["mask"] == "bool_as_int" else m


def _expected_faults(case):
    """The arguments a clear error may name for this case (empty: valid)."""
    names = {
        "rank": "`sequences`",
        "width": "`sequences`",
        "dtype": "`sequences`",
        "mask": "`mask`",
        "initial_state": "`initial_state`",
    }
    return {names[f] for f in case["faults"]}


def _initial_state(case, cell, rng, batch):
    if case["initial_state"] == "none":
        return None
    sizes = keras.tree.flatten(cell.state_size)  # stacked cells: one list per cell
    extra = 1 if case["initial_state"] == "wrong" else 0
    return [rng.uniform(-0.5, 0.5, (batch, s + extra)).astype(case["layer_dtype"]) for s in sizes]


def run_case(key, case):
    rng = np.random.default_rng(case["seed"])
    cell = make_cell(key, case["units"], case["layer_dtype"])
    layer = ks.layers.Recurrent(
        cell,
        return_sequences=True,
        return_state=True,
        precompute_inputs=case["precompute"],
        go_backwards=case["go_backwards"],
        dtype=case["layer_dtype"],
        name=LAYER_NAME,
    )
    if case["built_features"] is not None:
        layer.build((None, None, case["built_features"]))
    x = _inputs(case, rng)
    mask = _mask(case, rng)
    init = _initial_state(case, cell, rng, case["batch"])
    faults = _expected_faults(case)
    kind = "reference" if key in REFERENCE_CELLS else "self-consistency"
    if faults:
        with pytest.raises((ValueError, TypeError)) as info:
            layer(x, initial_state=init, mask=mask)
        message = str(info.value)
        assert LAYER_NAME in message or type(cell).__name__ in message, message
        assert any(f in message for f in faults), (faults, message)
        record(f"fuzz/{kind}", "clear error")
        return
    if not layer.built:
        layer.build(x.shape)
    randomize(layer, case["seed"])
    out, *states = layer(x, initial_state=init, mask=mask)
    out, states = np_(out), [np_(s) for s in states]
    assert out.shape[:2] == (case["batch"], case["time"])
    assert np.all(np.isfinite(out)) and all(np.all(np.isfinite(s)) for s in states)
    keep = np.ones(x.shape[:2], bool) if mask is None else np.asarray(mask).astype(bool)
    f64 = case["layer_dtype"] == "float64" and keras.backend.backend() == "tensorflow"
    atol = 1e-9 if f64 else 2e-5
    for i in range(case["batch"]):
        steps = np.flatnonzero(keep[i])
        xs = x[i, steps]
        init_i = None if init is None else [s[i : i + 1] for s in init]
        if case["go_backwards"]:
            # The layer reads the sequence from the end; outputs come in the
            # order they are produced, so only the final states are compared.
            xs = xs[::-1]
        if key in REFERENCE_CELLS:
            ref_out, ref_states = run_reference(
                key.split("_")[0],
                xs[None].astype("float64"),
                cell_weights(cell),
                states=init_i,
            )
            ref_out = ref_out[0]
        else:
            alone = ks.layers.Recurrent(
                cell,
                return_sequences=True,
                return_state=True,
                dtype=case["layer_dtype"],
            )
            ref_out, *ref_states = alone(xs[None].astype(case["layer_dtype"]), initial_state=init_i)
            ref_out, ref_states = np_(ref_out)[0], [np_(s) for s in ref_states]
        for s, r in zip(states, ref_states):
            np.testing.assert_allclose(s[i], np.asarray(r)[0], atol=atol, rtol=1e-5)
        if not case["go_backwards"]:
            np.testing.assert_allclose(out[i, steps], ref_out, atol=atol, rtol=1e-5)
            np.testing.assert_array_equal(out[i, ~keep[i]], 0.0)
    record(f"fuzz/{kind}", "matches unbatched")


@pytest.mark.parametrize("key", ALL_CELLS)
def test_random_inputs_give_clear_error_or_unbatched_result(key):
    @fuzz_settings(24 if key in REFERENCE_CELLS else 10)
    @given(case=cases())
    def check(case):
        run_case(key, case)

    check()


def test_every_cell_is_fuzzed():
    """Every exported cell can be built for the suite (new cells join here)."""
    assert {k.split("_")[0] for k in REFERENCE_CELLS} == set(STEPS)
    for name in OTHER_CELLS:
        try:
            make_cell(name, 2, "float32")
        except (TypeError, ValueError) as err:
            pytest.fail(
                f"{name} cannot be built from `units` alone ({err}); add its "
                "arguments to EXTRA_ARGS in tests/reliability/test_fuzz_recurrent.py"
            )
