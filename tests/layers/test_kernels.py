"""The runner's kernel registry (``keras_seqmodels.layers.kernels``): the order
in which kernels are asked, the cells' declared fused forms, the test switches
as context managers."""

import keras
import numpy as np
import pytest
from recurrent_grads import np_

import keras_seqmodels as ks
from keras_seqmodels.cells.forms import fused_form
from keras_seqmodels.layers import backend_rnn, kernels

BACKEND = keras.backend.backend()


class Recorder:
    """A kernel that records the calls it is asked about and plans none."""

    def __init__(self):
        self.asked = []

    def plan(self, layer, call):
        self.asked.append(call)
        return None


def test_the_first_kernel_that_plans_runs():
    recorder = Recorder()
    layer = ks.layers.Recurrent(ks.cells.LSTMCell(4), return_sequences=True)
    layer._kernels = (recorder, kernels.GenericKernel())
    x = np.random.default_rng(0).standard_normal((2, 5, 3)).astype("float32")
    mask = np.array([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]], bool)
    out = layer(x, mask=mask, training=True)
    assert recorder.asked
    call = recorder.asked[-1]
    assert call.training is True and call.sequences.shape == (2, 5, 3)
    assert len(call.initial_state) == 2 and call.mask is not None
    generic = ks.layers.Recurrent(ks.cells.LSTMCell(4), return_sequences=True, fused=False)
    generic.build(x.shape)
    generic.set_weights(layer.get_weights())
    np.testing.assert_allclose(np_(out), np_(generic(x, mask=mask)), atol=1e-6)


def test_the_generic_kernel_always_plans_and_the_fused_one_only_for_its_cells():
    x = keras.KerasTensor((4, 7, 3))
    for cell in (ks.cells.LeakyCell(3), ks.cells.ElmanCell(3, activation="relu")):
        layer = ks.layers.Recurrent(cell)
        assert kernels.plan_of(layer, x, training=True, kernel="fused") is None
        plan = kernels.choose(layer._kernels, layer, kernels.Call(x, None, None, True))
        assert isinstance(plan.kernel, kernels.GenericKernel)
    plan = kernels.plan_of(ks.layers.Recurrent(ks.cells.ElmanCell(3)), x, training=True)
    if BACKEND in ("tensorflow", "jax"):
        assert isinstance(plan.kernel, kernels.FusedKernel) and plan.kind == "elman"


def test_cells_declare_their_fused_form():
    assert fused_form(ks.cells.LSTMCell(3, use_peepholes=True)) == "lstm"
    assert fused_form(ks.cells.GRUCell(3)) == "gru_after"
    assert fused_form(ks.cells.GRUCell(3, reset_after=False)) == "gru"
    assert fused_form(ks.cells.GatedCell(3)) == "gated"
    assert fused_form(ks.cells.GatedCell(3, recurrent_activation="hard_sigmoid")) is None
    assert fused_form(ks.cells.LeakyCell(3)) is None
    assert fused_form(keras.layers.LSTMCell(3)) is None

    class Inherited(ks.cells.ElmanCell):  # may change ``step``: not trusted
        pass

    class Declared(ks.cells.ElmanCell):  # says it computes the same equations
        def form(self):
            return super().form()

    assert fused_form(Inherited(3)) is None
    assert fused_form(Declared(3)) == "elman"
    assert fused_form(Declared(3, activation="relu")) is None


@pytest.mark.parametrize("switch, flag", [
    (backend_rnn.portable, "_PORTABLE"),
    (backend_rnn.jax_reference, "_JAX_REFERENCE"),
    (backend_rnn.tf_reference, "_TF_REFERENCE"),
])  # fmt: skip
def test_switches_are_context_managers_that_undo_themselves(switch, flag):
    assert getattr(backend_rnn, flag) is False
    with pytest.raises(RuntimeError):
        with switch():
            assert getattr(backend_rnn, flag) is True
            with switch():
                pass
            assert getattr(backend_rnn, flag) is True  # nested: the outer still holds
            raise RuntimeError
    assert getattr(backend_rnn, flag) is False


def test_tune_gives_one_layer_its_own_kernels():
    tuned = kernels.tune(ks.layers.Recurrent(ks.cells.GRUCell(3)), hoist=False, jit=False)
    default = ks.layers.Recurrent(ks.cells.GRUCell(3))
    x = keras.KerasTensor((2, 7, 3))
    plan = kernels.plan_of(tuned, x, training=True, kernel="fused")
    if plan is None:
        pytest.skip("no fused loop on this backend")
    assert (plan.jit, plan.hoist) == (False, False)
    assert kernels.plan_of(default, x, training=True, kernel="fused").hoist is True
    assert default._kernels is kernels.KERNELS
