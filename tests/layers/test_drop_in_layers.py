"""The drop-in ``LSTM``, ``GRU`` and ``SimpleRNN`` against Keras's own layers.

Each test builds the package's layer and Keras's with the same arguments,
copies Keras's weights with ``set_weights(keras_layer.get_weights())`` and
compares: outputs for every argument, gradients (one SGD step) for a few
configurations, masks, states, dropout's semantics, configs and saving.
"""

import os

import keras
import numpy as np
import pytest
from keras import ops
from reference import run_reference

import keras_seqmodels as ks
from keras_seqmodels.testing import run_layer_test

PAIRS = {
    "LSTM": (ks.layers.LSTM, keras.layers.LSTM),
    "GRU": (ks.layers.GRU, keras.layers.GRU),
    "SimpleRNN": (ks.layers.SimpleRNN, keras.layers.SimpleRNN),
}
KINDS = list(PAIRS)
GATED = ["LSTM", "GRU"]
BATCH, TIME, FEATURES, UNITS = 3, 5, 4, 3
ATOL = 1e-5


def np_(x):
    return ops.convert_to_numpy(x)


def flat(x):
    return list(x) if isinstance(x, (list, tuple)) else [x]


def data(seed=0, batch=BATCH, time=TIME, features=FEATURES):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((batch, time, features)).astype("float32")


def holes_mask():
    """Row 0 full, row 1 right-padded, row 2 with holes (and masked first)."""
    return np.array([[1, 1, 1, 1, 1], [1, 1, 1, 0, 0], [0, 1, 0, 1, 0]], dtype=bool)


def pair(kind, x, units=UNITS, copy=True, **kwargs):
    """The package's layer and Keras's, built on ``x``; Keras's weights copied
    into ours when ``copy``."""
    ours_cls, keras_cls = PAIRS[kind]
    keras_kwargs = dict(kwargs)
    if kind == "GRU" and kwargs.get("use_bias") is False and keras.backend.backend() == "jax":
        # Keras's own JAX GRU kernel mixes float32 and float64 without a bias
        # under JAX_ENABLE_X64 (conftest sets it); its generic loop is fine.
        keras_kwargs["use_cudnn"] = False
    ours, theirs = ours_cls(units, **kwargs), keras_cls(units, **keras_kwargs)
    ours.build(x.shape)
    theirs.build(x.shape)
    if copy:
        ours.set_weights(theirs.get_weights())
    return ours, theirs


def assert_same(a, b, atol=ATOL):
    a, b = flat(a), flat(b)
    assert len(a) == len(b)
    for u, v in zip(a, b):
        assert tuple(u.shape) == tuple(v.shape)
        np.testing.assert_allclose(np_(u), np_(v), atol=atol, rtol=0)


# Forward, one argument at a time -------------------------------------------

FORWARD = [
    ("defaults", KINDS, {}),
    ("activation", KINDS, {"activation": "relu"}),
    ("recurrent_activation", GATED, {"recurrent_activation": "hard_sigmoid"}),
    ("use_bias", KINDS, {"use_bias": False}),
    ("unit_forget_bias", ["LSTM"], {"unit_forget_bias": False}),
    ("reset_after", ["GRU"], {"reset_after": False}),
    ("return_sequences", KINDS, {"return_sequences": True}),
    ("return_state", KINDS, {"return_state": True, "return_sequences": True}),
    ("go_backwards", KINDS, {"go_backwards": True, "return_sequences": True}),
    ("unroll", KINDS, {"unroll": True, "return_sequences": True}),
    ("dropout", KINDS, {"dropout": 0.5, "recurrent_dropout": 0.5, "seed": 3}),
    ("use_cudnn", GATED, {"use_cudnn": False}),
    ("float64", ["LSTM"], {"dtype": "float64", "return_sequences": True}),
]
FORWARD_CASES = [
    pytest.param(kind, kwargs, id=f"{kind}-{name}")
    for name, kinds, kwargs in FORWARD
    for kind in kinds
]


def keras_lstm_takes_jax_cudnn():
    """Whether Keras's ``LSTM`` runs cuDNN in inference (JAX on an NVIDIA GPU)."""
    from keras_seqmodels.layers import fused_rnn

    return fused_rnn.on_jax_gpu()


@pytest.mark.parametrize("kind,kwargs", FORWARD_CASES)
def test_set_weights_from_keras_gives_keras_outputs(kind, kwargs):
    x = data()
    if kwargs.get("dtype") == "float64":
        x = x.astype("float64")
    ours, theirs = pair(kind, x, **kwargs)
    assert [w.shape for w in ours.get_weights()] == [w.shape for w in theirs.get_weights()]
    upstream_issue = kwargs.get("go_backwards") or kwargs.get("dtype") == "float64"
    if kind == "LSTM" and upstream_issue and keras_lstm_takes_jax_cudnn():
        # Keras's cuDNN path there returns a backward layer's outputs in input
        # order and NaN in float64 (docs/layers.md, "Known issues of upstream
        # layers"): ours is checked against the NumPy float64 reference.
        assert_lstm_equals_reference(ours, x, theirs.get_weights(), kwargs.get("go_backwards"))
        return
    assert_same(ours(x), theirs(x))


def assert_lstm_equals_reference(layer, x, weights, go_backwards):
    """``layer``'s outputs (``return_sequences``) = the NumPy float64 LSTM
    with ``weights`` (Keras's order), in processing order."""
    weights = dict(zip(["kernel", "recurrent_kernel", "bias"], (np.asarray(w, "float64")
                                                                for w in weights)))  # fmt: skip
    steps = x[:, ::-1] if go_backwards else x
    expected, _ = run_reference("LSTMCell", np.asarray(steps, "float64"), weights)
    np.testing.assert_allclose(np_(layer(x)), expected, atol=ATOL, rtol=0)


@pytest.mark.parametrize("kwargs", [{"go_backwards": True}, {"dtype": "float64"}])
def test_lstm_equals_the_numpy_reference_on_every_device(kwargs):
    # The reference that replaces Keras's layer where its cuDNN path is wrong.
    x = data(4)
    if kwargs.get("dtype") == "float64":
        x = x.astype("float64")
    ours, theirs = pair("LSTM", x, return_sequences=True, **kwargs)
    assert_lstm_equals_reference(ours, x, theirs.get_weights(), kwargs.get("go_backwards"))
    if not keras_lstm_takes_jax_cudnn():
        assert_same(ours(x), theirs(x))  # and Keras agrees where it runs its loop


@pytest.mark.parametrize("kind", KINDS)
def test_outputs_match_while_training_without_dropout(kind):
    # training=True runs the fused training path (the hand-written backward).
    x = data(1)
    ours, theirs = pair(kind, x, return_sequences=True, return_state=True)
    assert_same(ours(x, training=True), theirs(x, training=True))


@pytest.mark.parametrize("kind", KINDS)
def test_seeded_initializers_give_keras_initial_weights(kind):
    x = data()
    kwargs = dict(
        kernel_initializer=keras.initializers.GlorotUniform(seed=1),
        recurrent_initializer=keras.initializers.Orthogonal(seed=2),
        bias_initializer=keras.initializers.RandomNormal(seed=3),
    )
    ours, theirs = pair(kind, x, copy=False, **kwargs)
    assert_same(ours.get_weights(), theirs.get_weights(), atol=0)
    assert_same(ours(x), theirs(x))


@pytest.mark.parametrize("forget_bias", [True, False])
def test_unit_forget_bias_initial_bias_as_keras(forget_bias):
    x = data()
    init = keras.initializers.Constant(0.5)
    ours, theirs = pair("LSTM", x, copy=False, unit_forget_bias=forget_bias, bias_initializer=init)
    bias = ours.get_weights()[2]
    np.testing.assert_array_equal(bias, theirs.get_weights()[2])
    # The forget gate's block starts at 1, the others at the initializer's value.
    assert bias[UNITS : 2 * UNITS].tolist() == [1.0 if forget_bias else 0.5] * UNITS
    assert bias[:UNITS].tolist() == [0.5] * UNITS


@pytest.mark.parametrize("kind", KINDS)
def test_weight_regularizers_give_keras_losses(kind):
    x = data()
    kwargs = dict(kernel_regularizer="l2", recurrent_regularizer="l1", bias_regularizer="l2")
    ours, theirs = pair(kind, x, bias_initializer="ones", **kwargs)
    ours(x), theirs(x)
    assert len(ours.losses) == len(theirs.losses) == 3
    np.testing.assert_allclose(
        sum(np_(v) for v in ours.losses), sum(np_(v) for v in theirs.losses), rtol=1e-6
    )


@pytest.mark.parametrize("kind", KINDS)
def test_activity_regularizer_penalises_the_outputs(kind):
    x = data()
    ours, theirs = pair(kind, x, activity_regularizer="l2", return_sequences=True)
    out = ours(x)
    expected = 0.01 * np.sum(np_(out) ** 2) / BATCH  # Keras divides by the batch size
    assert len(ours.losses) == 1
    np.testing.assert_allclose(np_(ours.losses[0]), expected, rtol=1e-5)
    if kind != "SimpleRNN":  # Keras 3.15's SimpleRNN drops its activity_regularizer
        theirs(x)
        np.testing.assert_allclose(np_(ours.losses[0]), np_(theirs.losses[0]), rtol=1e-5)


def test_layer_attributes_read_back_as_keras():
    for kind in KINDS:
        ours, theirs = PAIRS[kind][0](5, dropout=0.25), PAIRS[kind][1](5, dropout=0.25)
        names = ["units", "activation", "use_bias", "kernel_initializer", "dropout"]
        names += ["recurrent_dropout", "bias_constraint", "return_sequences"]
        names += ["recurrent_activation"] * (kind in GATED)
        for name in names:
            mine, keras_value = getattr(ours, name), getattr(theirs, name)
            if isinstance(mine, keras.initializers.Initializer):
                mine, keras_value = type(mine), type(keras_value)
            assert mine == keras_value, f"{kind}.{name}"
    assert ks.layers.GRU(2).reset_after is True
    assert ks.layers.LSTM(2).unit_forget_bias is True


# Gradients: one SGD step from the same weights ----------------------------

GRADIENT_CASES = [
    pytest.param("LSTM", dict(return_sequences=True), True, id="LSTM-sequences-mask"),
    pytest.param(
        "GRU", dict(reset_after=False, go_backwards=True), False, id="GRU-before-backwards"
    ),
    pytest.param(
        "SimpleRNN",
        dict(kernel_constraint="non_neg", recurrent_regularizer="l2", return_state=True),
        False,
        id="SimpleRNN-constraint-regularizer-state",
    ),
]


def _one_sgd_step(layer, x, mask, target):
    inputs = keras.Input(x.shape[1:], batch_size=x.shape[0])
    mask_in = keras.Input(mask.shape[1:], batch_size=x.shape[0], dtype="bool")
    out = flat(layer(inputs, mask=mask_in))[0]
    model = keras.Model([inputs, mask_in], out)
    model.compile(optimizer=keras.optimizers.SGD(0.5), loss="mse")
    loss = model.train_on_batch([x, mask], target)
    return loss, layer.get_weights()


@pytest.mark.parametrize("kind,kwargs,masked", GRADIENT_CASES)
def test_one_training_step_gives_keras_weights(kind, kwargs, masked):
    x = data(2)
    mask = holes_mask() if masked else np.ones(x.shape[:2], bool)
    ours, theirs = pair(kind, x, **kwargs)
    shape = (BATCH, TIME, UNITS) if kwargs.get("return_sequences") else (BATCH, UNITS)
    target = np.random.default_rng(3).standard_normal(shape).astype("float32")
    before = theirs.get_weights()
    loss_ours, after_ours = _one_sgd_step(ours, x, mask, target)
    loss_theirs, after_theirs = _one_sgd_step(theirs, x, mask, target)
    np.testing.assert_allclose(loss_ours, loss_theirs, rtol=1e-5)
    assert all(np.abs(a - b).max() > 1e-4 for a, b in zip(after_theirs, before))
    assert_same(after_ours, after_theirs)
    if "kernel_constraint" in kwargs:
        assert after_ours[0].min() >= 0


# Masks, states, go_backwards -----------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("zero_output", [False, True], ids=["repeat", "zeros"])
def test_masks_with_holes_as_keras(kind, zero_output):
    x, mask = data(4), holes_mask()
    ours, theirs = pair(
        kind, x, return_sequences=True, return_state=True, zero_output_for_mask=zero_output
    )
    assert_same(ours(x, mask=mask), theirs(x, mask=mask))


@pytest.mark.parametrize("kind", KINDS)
def test_masking_layer_and_go_backwards_as_keras(kind):
    x = data(5)
    x[1, 3:] = 0.0  # padding the Masking layer finds
    outs = []
    for cls in PAIRS[kind]:
        layer = cls(UNITS, go_backwards=True, return_sequences=True)
        model = keras.Sequential([keras.Input(x.shape[1:]), keras.layers.Masking(0.0), layer])
        outs.append((model, layer))
    outs[0][1].set_weights(outs[1][1].get_weights())
    assert_same(outs[0][0](x), outs[1][0](x))


def test_keras_bidirectional_wraps_the_drop_in_as_keras_layer():
    # keras.layers.Bidirectional rebuilds the backward layer from get_config.
    x, mask = data(17), holes_mask()
    ours = keras.layers.Bidirectional(ks.layers.LSTM(UNITS, return_sequences=True))
    theirs = keras.layers.Bidirectional(keras.layers.LSTM(UNITS, return_sequences=True))
    ours.build(x.shape)
    theirs.build(x.shape)
    assert isinstance(ours.backward_layer, ks.layers.LSTM) and ours.backward_layer.go_backwards
    ours.set_weights(theirs.get_weights())
    assert_same(ours(x, mask=mask), theirs(x, mask=mask))


@pytest.mark.parametrize("kind", KINDS)
def test_initial_state_and_return_state_order_as_keras(kind):
    x = data(6)
    ours, theirs = pair(kind, x, return_state=True)
    n_states = 2 if kind == "LSTM" else 1
    rng = np.random.default_rng(7)
    init = [rng.standard_normal((BATCH, UNITS)).astype("float32") for _ in range(n_states)]
    result = ours(x, initial_state=init)
    assert len(result) == 1 + n_states
    assert_same(result, theirs(x, initial_state=init))
    # Keras's order: [output, h] (LSTM: [output, h, c]); the output is h.
    np.testing.assert_allclose(np_(result[0]), np_(result[1]), atol=0)


@pytest.mark.parametrize("kind", KINDS)
def test_stateful_carries_and_resets_as_keras(kind):
    x = data(8, batch=2, time=6)
    first, second = x[:, :3], x[:, 3:]
    ours, theirs = pair(kind, first, stateful=True, return_sequences=True)
    assert len(ours.get_weights()) == len(theirs.get_weights())
    for chunk in (first, second):
        assert_same(ours(chunk), theirs(chunk))
    ours.reset_states()
    theirs.reset_states()
    assert_same(ours(second), theirs(second))
    # Two chunks carried equal the whole sequence at once.
    whole, _ = pair(kind, x, return_sequences=True, copy=False)
    whole.set_weights(ours.get_weights())
    ours.reset_state()
    carried = np.concatenate([np_(ours(first)), np_(ours(second))], axis=1)
    np.testing.assert_allclose(carried, np_(whole(x)), atol=ATOL)


def test_stateful_fit_carries_the_states():
    # Keras 3.15's own stateful layers keep their states at zero in fit on
    # JAX (untracked variables); the package's carry them on every backend.
    x, y = data(9, batch=2), np.zeros((2, UNITS), "float32")
    layer = ks.layers.LSTM(UNITS, stateful=True)
    model = keras.Sequential([keras.Input(batch_shape=x.shape), layer])
    model.compile(optimizer="sgd", loss="mse")
    model.fit(x, y, batch_size=2, epochs=1, verbose=0)
    states = [np_(s) for s in layer.states]
    assert all(np.abs(s).max() > 0 for s in states)
    layer.reset_states()
    assert all(np.abs(np_(s)).max() == 0 for s in layer.states)


# Dropout ------------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_input_dropout_is_one_scaled_mask_per_sequence(kind):
    # With one input feature, each sequence is either dropped at every step
    # (Keras's output on zeros) or kept and scaled by 1 / (1 - rate) at every
    # step (Keras's output on 2 x), never a mix of the two.
    x = data(10, batch=16, features=1)
    ours, theirs = pair(kind, x, dropout=0.5, seed=1, return_sequences=True)
    out = np_(ours(x, training=True))
    dropped, kept = np_(theirs(0 * x)), np_(theirs(2 * x))
    is_dropped = np.all(np.isclose(out, dropped, atol=ATOL), axis=(1, 2))
    is_kept = np.all(np.isclose(out, kept, atol=ATOL), axis=(1, 2))
    assert np.all(is_dropped ^ is_kept)
    assert 0 < is_dropped.sum() < len(x)


@pytest.mark.parametrize("kind", KINDS)
def test_recurrent_dropout_is_one_scaled_mask_per_sequence(kind):
    # With one unit, the recurrent product sees h dropped at every step
    # (Keras's output with a zero recurrent kernel) or h scaled by 2 at every
    # step (Keras's output with twice the recurrent kernel).
    x = data(11, batch=16)
    ours, theirs = pair(kind, x, units=1, recurrent_dropout=0.5, seed=2, return_sequences=True)
    out = np_(ours(x, training=True))
    kernel, recurrent, *bias = theirs.get_weights()
    references = []
    for scale in (0.0, 2.0):
        theirs.set_weights([kernel, scale * recurrent, *bias])
        references.append(np_(theirs(x)))
    matches = [np.all(np.isclose(out, r, atol=ATOL), axis=(1, 2)) for r in references]
    assert np.all(matches[0] ^ matches[1])
    assert 0 < matches[0].sum() < len(x)


@pytest.mark.parametrize(
    "kind,kwargs",
    [
        ("LSTM", dict(dropout=0.3)),  # the fused path
        ("GRU", dict(dropout=0.3, recurrent_dropout=0.3)),  # the generic loop
        ("SimpleRNN", dict(recurrent_dropout=0.3)),
    ],
)
def test_fit_with_dropout(kind, kwargs):
    # JAX: the masks are drawn before the loop (a draw inside it fails under
    # jit); the fused path takes input dropout, the generic loop the rest.
    x = data(12, batch=4)
    y = np.random.default_rng(0).standard_normal((4, 1)).astype("float32")
    layer = PAIRS[kind][0](UNITS, seed=4, **kwargs)
    model = keras.Sequential([keras.Input(x.shape[1:]), layer, keras.layers.Dense(1)])
    model.compile(optimizer=keras.optimizers.SGD(0.1), loss="mse")
    before = layer.get_weights()
    history = model.fit(x, y, batch_size=2, epochs=1, verbose=0)
    assert np.all(np.isfinite(history.history["loss"]))
    assert all(np.abs(a - b).max() > 0 for a, b in zip(before, layer.get_weights()))


# The fast path and the arguments that leave it ----------------------------


@pytest.mark.parametrize(
    "kind,expected", [("LSTM", "lstm"), ("GRU", "gru_after"), ("SimpleRNN", "elman")]
)
def test_training_runs_the_fused_path(kind, expected):
    from keras_seqmodels.layers import kernels

    def fused_kind(layer):
        x = keras.KerasTensor((None, None, 3))
        plan = kernels.plan_of(layer, x, training=True, kernel="fused")
        return None if plan is None else plan.kind

    assert fused_kind(PAIRS[kind][0](UNITS, dropout=0.2)) == expected
    assert fused_kind(PAIRS[kind][0](UNITS, recurrent_dropout=0.2)) is None
    assert fused_kind(PAIRS[kind][0](UNITS, activation="relu")) is None
    assert fused_kind(PAIRS[kind][0](UNITS, fused=False)) is None


# Configs and saving --------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_config_has_keras_keys_and_loads_both_ways(kind):
    ours_cls, keras_cls = PAIRS[kind]
    kwargs = dict(
        return_sequences=True, dropout=0.1, kernel_regularizer="l2", activity_regularizer="l1"
    )
    config, keras_config = ours_cls(6, **kwargs).get_config(), keras_cls(6, **kwargs).get_config()
    assert sorted(config) == sorted(keras_config)
    if kind == "SimpleRNN":  # Keras 3.15's SimpleRNN drops its activity_regularizer
        assert keras_config["activity_regularizer"] is None
        keras_config["activity_regularizer"] = config["activity_regularizer"]
    del config["name"], keras_config["name"]
    assert config == keras_config
    from_ours = keras_cls.from_config(config).get_config()
    assert {k: from_ours[k] for k in ("units", "dropout", "kernel_regularizer")} == {
        k: config[k] for k in ("units", "dropout", "kernel_regularizer")
    }
    from_keras = ours_cls.from_config(keras_config).get_config()
    del from_keras["name"]
    assert from_keras == keras_config
    assert keras.saving.get_registered_name(ours_cls) == f"keras_seqmodels>{kind}"


def test_config_keeps_the_non_default_extras():
    layer = ks.layers.LSTM(4, use_cudnn=False, fused=False, precompute_inputs=True)
    config = layer.get_config()
    assert (config["use_cudnn"], config["fused"], config["precompute_inputs"]) == (
        False,
        False,
        True,
    )
    clone = ks.layers.LSTM.from_config(config)
    assert (clone.use_cudnn, clone.fused, clone.precompute_inputs) == (False, False, True)
    assert ks.layers.SimpleRNN(4, seed=5).get_config()["seed"] == 5
    assert "seed" not in ks.layers.SimpleRNN(4).get_config()
    # Keras 2 configs carry `implementation`; Keras 3 accepts and drops it.
    assert ks.layers.GRU(4, implementation=1).units == 4


@pytest.mark.parametrize("kind", KINDS)
def test_layer_checks(kind):
    run_layer_test(
        lambda: PAIRS[kind][0](UNITS, return_sequences=True, dropout=0.1),
        data(13),
        expected_output_shape=(BATCH, TIME, UNITS),
        run_fit=kind == "LSTM",  # test_fit_with_dropout fits the other two
        run_mixed_precision=kind == "LSTM",
        atol=ATOL,
    )


def test_keras_weights_file_loads_into_the_drop_ins(tmp_path):
    x = data(14)

    def model(gru):
        inputs = keras.Input(x.shape[1:])
        return keras.Model(inputs, gru(4, reset_after=False)(inputs))

    theirs = model(keras.layers.GRU)
    path = os.path.join(tmp_path, "keras.weights.h5")
    theirs.save_weights(path)
    ours = model(ks.layers.GRU)
    ours.load_weights(path)
    assert_same(ours(x), theirs(x))


def _reset(*models):
    for model in models:
        model.layers[0].reset_states()


def _stateful_model(layers, kind, x):
    layer = getattr(layers, kind)(UNITS, stateful=True, return_sequences=True)
    model = keras.Sequential([keras.Input(batch_shape=x.shape), layer])
    model(x)
    return model


@pytest.mark.parametrize("kind", KINDS)
def test_stateful_weights_are_keras_weights_both_ways(kind, tmp_path):
    # The carried states are not weights, as in Keras: a stateful model holds
    # Keras's arrays in get_weights / set_weights and in weight files, both ways.
    x = data(15, batch=2)
    theirs = _stateful_model(keras.layers, kind, x)
    ours = _stateful_model(ks.layers, kind, x)
    assert [w.shape for w in ours.get_weights()] == [w.shape for w in theirs.get_weights()]
    assert len(ours.layers[0].get_weights()) == len(theirs.layers[0].get_weights()) == 3
    ours.set_weights(theirs.get_weights())
    _reset(ours, theirs)
    assert_same(ours(x), theirs(x))
    # The layer level, from Keras's layer into a fresh one of ours.
    fresh = _stateful_model(ks.layers, kind, x)
    fresh.layers[0].set_weights(theirs.layers[0].get_weights())
    _reset(fresh, theirs)
    assert_same(fresh(x), theirs(x))
    # A weights file written by Keras loads into ours, and ours into Keras.
    theirs_file, ours_file = tmp_path / "keras.weights.h5", tmp_path / "ours.weights.h5"
    theirs.save_weights(theirs_file)
    ours.save_weights(ours_file)
    from_keras = _stateful_model(ks.layers, kind, x)
    from_keras.load_weights(theirs_file)
    into_keras = _stateful_model(keras.layers, kind, x)
    into_keras.load_weights(ours_file)
    _reset(from_keras, into_keras, theirs)
    reference = np_(theirs(x))
    assert_same(from_keras(x), reference)
    assert_same(into_keras(x), reference)


def test_stateful_model_saves_and_loads_as_keras(tmp_path):
    # A .keras file holds the weights, not the carried states (Keras's layers
    # do not save them either): a loaded stateful model starts from zeros.
    x = data(15, batch=2)
    model = _stateful_model(ks.layers, "GRU", x)
    path = os.path.join(tmp_path, "m.keras")
    model.save(path)
    loaded = keras.saving.load_model(path)
    assert isinstance(loaded.layers[0], ks.layers.GRU)
    assert all(np.abs(np_(s)).max() == 0 for s in loaded.layers[0].states)
    _reset(model)
    first = np_(model(x))
    assert_same(loaded(x), first)
    # and carries its states from there, as the original does.
    assert_same(loaded(x), model(x))
    assert np.abs(np_(loaded(x)) - first).max() > 1e-3


def test_fit_smoke_embedding_mask_zero():
    rng = np.random.default_rng(16)
    ids = rng.integers(1, 20, (8, 7))
    ids[::2, 5:] = 0
    model = keras.Sequential(
        [
            keras.Input((7,), dtype="int32"),
            keras.layers.Embedding(20, 6, mask_zero=True),
            ks.layers.LSTM(5),
            keras.layers.Dense(2, activation="softmax"),
        ]
    )
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    history = model.fit(ids, rng.integers(0, 2, 8), batch_size=4, epochs=1, verbose=0)
    assert np.all(np.isfinite(history.history["loss"]))
    assert model.predict(ids, verbose=0).shape == (8, 2)


# Errors --------------------------------------------------------------------


def test_errors_name_the_layer_and_argument():
    with pytest.raises(ValueError, match=r"LSTM: `use_cudnn` must be 'auto', True or False"):
        ks.layers.LSTM(4, use_cudnn="yes")
    with pytest.raises(ValueError, match=r"SimpleRNN: `use_cudnn` is not an argument"):
        ks.layers.SimpleRNN(4, use_cudnn=True)
    with pytest.raises(ValueError, match=r"`units` must be a positive integer"):
        ks.layers.GRU(0)
    with pytest.raises(ValueError, match=r"needs a built layer"):
        ks.layers.GRU(4).set_weights([])
    layer = ks.layers.LSTM(4, name="encoder")
    layer.build((2, 3, 5))
    gru = keras.layers.GRU(4)
    gru.build((2, 3, 5))
    with pytest.raises(
        ValueError,
        match=r"encoder: `set_weights` takes the weights of Keras's "
        r"LSTM \(kernel, recurrent_kernel, bias\), of shapes \[\(5, 16\)",
    ):
        layer.set_weights(gru.get_weights())


@pytest.mark.parametrize("arg", ["dropout", "recurrent_dropout"])
def test_runner_says_where_dropout_goes(arg):
    with pytest.raises(ValueError) as info:
        ks.layers.Recurrent(ks.cells.LSTMCell(4), **{arg: 0.2})
    message = str(info.value)
    assert f"Recurrent: `{arg}` is an argument of the cell" in message
    assert f"LSTMCell(16, {arg}=0.2)" in message
    assert f"keras_seqmodels.layers.LSTM(16, {arg}=0.2)" in message
    assert f"Received: {arg}=0.2" in message
