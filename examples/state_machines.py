"""State machines as recurrent networks: the course chapter's worked examples.

A state machine is (S, X, Y, s0, f_s, f_o): s(t) = f_s(s(t-1), x(t)),
y(t) = f_o(s(t)); a recurrent network is one whose f_s and f_o are neural
networks (``ks.cells.StateMachineCell``). The parts, each a function that
``tests/examples/test_state_machine_examples.py`` calls:

1. ``zero_parity``: the machine that tracks the parity of the zeros read so
   far, as a plain Python transition table; ``fsm_cell`` encodes any such
   table exactly in a ``StateMachineCell`` with hand-set weights (a steep
   sigmoid, one unit per (state, last symbol) pair); ``check_encoding`` runs
   both on every binary string up to length 12 (2^13 - 1 strings, one padded
   batch) and counts disagreements.
2. ``learn_parity``: the same machine learned by ``model.fit`` from
   (string, parity so far) pairs with the per-step loss (BPTT), then tested
   on strings 10x longer than any seen in training, over several seeds.
3. ``learn_parity(gated=True)``: the gated machine, s(t) = (1 - g) ⊙ s(t-1) +
   g ⊙ f_s(...), with a gate network g = f_g(s(t-1), x(t)) deciding which
   state dimensions update, on the same task: where the ungated machine
   fails on long strings.
4. ``learn_classifier``: a sequence classifier trained as a transduction
   (y(t) = 1 when the prefix x(1..t) is a positive example: a binary number,
   most significant bit first, divisible by 3), against the same network
   (a gated machine) trained on the label of the whole string only.

    python examples/state_machines.py                    # all parts, 8 seeds: minutes
    python examples/state_machines.py --seeds 0 --epochs 1   # seconds
"""

import argparse
import itertools

import keras
import numpy as np
from keras import ops

import keras_seqmodels as ks

# Part 1: a finite state machine as a table ------------------------------------

# The parity of the zeros read so far: state 0 = even, 1 = odd. Reading a 0
# flips the state, reading a 1 keeps it; the output is the state.
ZERO_PARITY = {
    "states": [0, 1],
    "symbols": [0, 1],
    "start": 0,
    "transition": {(0, 0): 1, (0, 1): 0, (1, 0): 0, (1, 1): 1},
    "output": {0: 0, 1: 1},
}

# The binary numbers (most significant bit first) divisible by 3: the state is
# the value so far mod 3, reading bit a takes q to 2q + a mod 3; positive
# when the state is 0. Used in part 4.
DIVISIBLE_BY_3 = {
    "states": [0, 1, 2],
    "symbols": [0, 1],
    "start": 0,
    "transition": {(q, a): (2 * q + a) % 3 for q in range(3) for a in range(2)},
    "output": {0: 1, 1: 0, 2: 0},
}


def run_fsm(machine, string):
    """The outputs y(1..T) of ``machine`` on ``string``, one step at a time."""
    state, outputs = machine["start"], []
    for symbol in string:
        state = machine["transition"][(state, symbol)]
        outputs.append(machine["output"][state])
    return outputs


def fsm_outputs(machine, strings):
    """``run_fsm`` for a batch of strings (int array ``(batch, time)``, padding
    ignored by the caller): the table as an array, a loop over steps only."""
    table = np.zeros((len(machine["states"]), len(machine["symbols"])), "int64")
    for (q, a), r in machine["transition"].items():
        table[q, a] = r
    out = np.array([machine["output"][q] for q in machine["states"]])
    state = np.full(strings.shape[0], machine["start"])
    ys = np.zeros(strings.shape, "int64")
    for t in range(strings.shape[1]):
        state = table[state, strings[:, t]]
        ys[:, t] = out[state]
    return ys


def all_strings(max_length):
    """Every binary string of length 0..max_length (2^(max_length+1) - 1 of
    them), right-padded with zeros: ``(strings, mask)``."""
    rows, masks = [], []
    for length in range(max_length + 1):
        bits = np.array(list(itertools.product([0, 1], repeat=length)), "int64")
        bits = bits.reshape(2**length, length)
        rows.append(np.pad(bits, ((0, 0), (0, max_length - length))))
        masks.append(np.tile(np.arange(max_length) < length, (2**length, 1)))
    return np.concatenate(rows), np.concatenate(masks)


def one_hot(strings, n_symbols=2):
    return np.eye(n_symbols, dtype="float32")[strings]


def fsm_cell(machine, steepness=20.0):
    """``machine`` encoded exactly in a ``StateMachineCell``.

    One state unit per (state q, last symbol a) pair, on when the machine is
    in q having just read a. With one-hot inputs x, unit (r, b) turns on when
    x = b and some active unit (q, a) has δ(q, b) = r:
    h_rb(t) = σ(k (Σ_{q,a: δ(q,b)=r} h_qa(t-1) + x_b(t) - 1.5)), a threshold
    unit (Minsky's construction); the output unit is
    σ(k (Σ_{q,a: out(q)=1} h_qa - 0.5)). The pre-activations are ±0.5 k or
    -1.5 k, so the state stays within σ(-0.5 k) of one-hot at every step.
    """
    states, symbols = machine["states"], machine["symbols"]
    pairs = [(q, a) for q in states for a in symbols]
    n = len(pairs)
    kernel = np.zeros((n + len(symbols), n), "float32")
    for j, (r, b) in enumerate(pairs):
        for i, (q, _) in enumerate(pairs):
            kernel[i, j] = float(machine["transition"][(q, b)] == r)
        kernel[n + symbols.index(b), j] = 1.0
    readout = np.array([[float(machine["output"][q] == 1)] for q, _ in pairs], "float32")
    transition = keras.layers.Dense(n, activation="sigmoid")
    output = keras.layers.Dense(1, activation="sigmoid")
    s0 = [float(pair == (machine["start"], symbols[0])) for pair in pairs]
    cell = ks.cells.StateMachineCell(transition, output=output, initial_state=s0)
    transition.build((None, n + len(symbols)))
    output.build((None, n))
    transition.set_weights([steepness * kernel, np.full(n, -1.5 * steepness, "float32")])
    output.set_weights([steepness * readout, np.full(1, -0.5 * steepness, "float32")])
    return cell


def check_encoding(machine=ZERO_PARITY, max_length=12, steepness=20.0):
    """Runs the table and the hand-set cell on every binary string up to
    ``max_length`` (one padded batch, masked) and compares every output and
    the final states. Returns a dict of counts and the largest deviation of
    the network's outputs from the table's 0/1."""
    strings, mask = all_strings(max_length)
    expected = fsm_outputs(machine, strings)
    layer = ks.layers.Recurrent(
        fsm_cell(machine, steepness), return_sequences=True, return_state=True
    )
    y, s = layer(one_hot(strings), mask=mask)
    y = ops.convert_to_numpy(y)[..., 0]
    s = ops.convert_to_numpy(s)
    predicted = (y > 0.5).astype("int64")
    step_errors = int(np.sum((predicted != expected) & mask))
    # The final state names the machine's final state: unit (q, a) is q.
    final = np.array([q for q in machine["states"] for _ in machine["symbols"]])[s.argmax(-1)]
    lengths = mask.sum(1)
    table_final = np.where(
        lengths > 0,
        _final_states(machine, strings, lengths),
        machine["start"],
    )
    return {
        "strings": len(strings),
        "steps": int(mask.sum()),
        "step_errors": step_errors,
        "final_state_errors": int(np.sum(final != table_final)),
        "max_deviation": float(np.max(np.abs(y - expected)[mask])),
    }


def _final_states(machine, strings, lengths):
    table = {**machine, "output": {q: q for q in machine["states"]}}
    states = fsm_outputs(table, strings)
    return states[np.arange(len(strings)), np.maximum(lengths - 1, 0)]


# Parts 2-4: learning the machines ----------------------------------------------


def random_strings(n, length, rng, p_zero=0.5):
    return (rng.random((n, length)) >= p_zero).astype("int64")


def make_cell(units, gated):
    """The learned machine: f_s = tanh(W [s, x] + b), f_o = σ(V s + c), and
    with ``gated`` a gate network f_g = σ(W_g [s, x] + b_g)."""
    return ks.cells.StateMachineCell(
        keras.layers.Dense(units, activation="tanh"),
        output=keras.layers.Dense(1, activation="sigmoid"),
        gate=keras.layers.Dense(units, activation="sigmoid") if gated else None,
    )


def _model(units, gated, seed, learning_rate):
    keras.utils.set_random_seed(seed)
    model = keras.Sequential(
        [
            keras.Input((None, 2)),
            ks.layers.Recurrent(make_cell(units, gated), return_sequences=True),
        ]
    )
    model.compile(keras.optimizers.Adam(learning_rate), "binary_crossentropy")
    return model


def step_accuracy(model, machine, strings):
    """Fraction of steps whose output is right, and fraction of strings with
    every step right."""
    y = ops.convert_to_numpy(model(one_hot(strings)))[..., 0] > 0.5
    right = y == fsm_outputs(machine, strings).astype(bool)
    return float(right.mean()), float(right.all(axis=1).mean())


def learn_parity(seed=0, gated=False, units=4, n_train=512, train_length=10, test_length=100,
                 n_test=128, epochs=40, batch_size=64, learning_rate=0.02):
    """Learns ZERO_PARITY from (string, parity so far) pairs, the loss on
    every step (BPTT), and tests it on new strings: ``"10x"``, random strings
    ``test_length`` long; ``"100x"``, ten times longer again; and
    ``"runs_of_ones"``, as long as those but with 3% zeros (the state must be
    held through runs of about 30 ones). Returns a dict of per-step
    accuracies (``"train"`` and each test) and, under ``"<test>_strings"``,
    the fraction of test strings right at every step."""
    rng = np.random.default_rng(seed)
    strings = random_strings(n_train, train_length, rng)
    targets = fsm_outputs(ZERO_PARITY, strings)[..., None].astype("float32")
    model = _model(units, gated, seed, learning_rate)
    model.fit(one_hot(strings), targets, batch_size=batch_size, epochs=epochs, verbose=0)
    result = {"train": step_accuracy(model, ZERO_PARITY, strings)[0]}
    tests = {
        "10x": random_strings(n_test, test_length, rng),
        "100x": random_strings(n_test, 10 * test_length, rng),
        "runs_of_ones": random_strings(n_test, 10 * test_length, rng, p_zero=0.03),
    }
    for name, test in tests.items():
        result[name], result[f"{name}_strings"] = step_accuracy(model, ZERO_PARITY, test)
    return result


def learn_classifier(seed=0, transduction=True, gated=True, units=6, n_train=512,
                     train_length=10, test_length=20, n_test=512, epochs=40, batch_size=64,
                     learning_rate=0.02):
    """A classifier of DIVISIBLE_BY_3 strings. As a transduction, the target
    at every step t is whether x(1..t) is positive (every prefix is a labelled
    example); otherwise only the last step carries a label (sample weights 0
    elsewhere). Returns the accuracy of the label of whole test strings (the
    output at their last step), of length ``train_length`` and
    ``test_length``."""
    rng = np.random.default_rng(seed)
    strings = random_strings(n_train, train_length, rng)
    targets = fsm_outputs(DIVISIBLE_BY_3, strings)[..., None].astype("float32")
    weights = np.ones(strings.shape, "float32")
    if not transduction:
        weights[:, :-1] = 0.0
    model = _model(units, gated, seed, learning_rate)
    model.fit(one_hot(strings), targets, sample_weight=weights, batch_size=batch_size,
              epochs=epochs, verbose=0)
    result = {}
    for name, length in (("same_length", train_length), ("longer", test_length)):
        test = random_strings(n_test, length, rng)
        y = ops.convert_to_numpy(model(one_hot(test)))[:, -1, 0] > 0.5
        result[name] = float(np.mean(y == fsm_outputs(DIVISIBLE_BY_3, test)[:, -1].astype(bool)))
    return result


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=list(range(8)))
    parser.add_argument("--units", type=int, default=4, help="state units (parity)")
    parser.add_argument("--epochs", type=int, default=40)
    parser.add_argument("--train-length", type=int, default=10)
    parser.add_argument("--test-length", type=int, default=100)
    args = parser.parse_args(argv)

    encoding = check_encoding()
    print(
        f"1. zero parity, table vs hand-set cell: {encoding['strings']} strings "
        f"({encoding['steps']} steps), {encoding['step_errors']} output and "
        f"{encoding['final_state_errors']} final-state disagreements, largest "
        f"deviation from 0/1 {encoding['max_deviation']:.1e}"
    )
    results = {"encoding": encoding, "parity": {}, "classifier": {}}
    tests = ("10x", "100x", "runs_of_ones")
    for gated in (False, True):
        name = "gated" if gated else "ungated"
        print(
            f"{'3' if gated else '2'}. zero parity learned, {name} machine ({args.units} state "
            f"units), trained on length {args.train_length}; per-step accuracy on training "
            f"strings, on length {args.test_length} (10x), {10 * args.test_length} (100x), "
            f"{10 * args.test_length} with 3% zeros (runs of ones):"
        )
        runs = []
        for seed in args.seeds:
            r = learn_parity(seed, gated=gated, units=args.units, epochs=args.epochs,
                             train_length=args.train_length, test_length=args.test_length)
            runs.append(r)
            print(f"   seed {seed}: " + ", ".join(f"{r[k]:.4f}" for k in ("train",) + tests),
                  flush=True)
        held = ", ".join(f"{k} {sum(r[k] >= 0.99 for r in runs)}" for k in tests)
        print(f"   seeds (of {len(runs)}) at >= 0.99: {held}")
        results["parity"][name] = runs
    print("4. divisible by 3, gated machine (6 state units): accuracy of the whole-string label "
          f"on strings of length {args.train_length} / 20 (majority class: 2/3)")
    for transduction in (True, False):
        name = "transduction" if transduction else "final label only"
        runs = []
        for seed in args.seeds[:3]:
            r = learn_classifier(seed, transduction=transduction, epochs=args.epochs,
                                 train_length=args.train_length)
            runs.append(r)
            print(f"   {name}, seed {seed}: {r['same_length']:.3f} / {r['longer']:.3f}",
                  flush=True)
        results["classifier"][name] = runs
    return results


if __name__ == "__main__":
    main()
