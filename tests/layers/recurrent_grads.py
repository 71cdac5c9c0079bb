"""Shared by the fused-loop and backend-kernel tests: outputs and gradients of
a recurrent layer on the current backend, and a float64-exact tanh."""

import keras
from keras import ops

BACKEND = keras.backend.backend()


def np_(x):
    return ops.convert_to_numpy(x)


def exact_tanh():
    """tanh that keeps float64 on every backend (``keras.ops.tanh`` returns
    float32 for float64 input on JAX, which would make the generic loop, not
    the fused one, the imprecise side of the comparison)."""
    if BACKEND == "jax":
        import jax

        return jax.numpy.tanh
    return "tanh"


def value_and_grads(layer, x, states, mask, weights_proj, training=True):
    """Outputs and the gradients of ``sum(outputs * proj)`` with respect to
    the input, the initial states and the cell's trainable weights."""
    variables = layer.cell.trainable_weights

    def loss_of(x, states):
        outs = layer(x, initial_state=list(states), mask=mask, training=training)
        outs = outs if isinstance(outs, list) else [outs]
        return sum(ops.sum(o * p) for o, p in zip(outs, weights_proj)), outs

    if BACKEND == "tensorflow":
        import tensorflow as tf

        x = tf.constant(x)
        states = [tf.constant(s) for s in states]
        with tf.GradientTape() as tape:
            tape.watch([x] + states)
            loss, outs = loss_of(x, states)
        grads = tape.gradient(loss, [x] + states + [v.value for v in variables])
        return [np_(o) for o in outs], [np_(g) for g in grads]
    if BACKEND == "torch":
        import torch

        device = ops.convert_to_tensor(0.0).device  # Keras's: a CUDA device if any
        x = torch.tensor(x, requires_grad=True, device=device)
        states = [torch.tensor(s, requires_grad=True, device=device) for s in states]
        weights_proj = [torch.tensor(p, device=device) for p in weights_proj]
        loss, outs = loss_of(x, states)
        grads = torch.autograd.grad(loss, [x] + states + [v.value for v in variables])
        return [np_(o.detach()) for o in outs], [np_(g) for g in grads]
    import jax

    def pure(values, x, states):
        with keras.StatelessScope(state_mapping=list(zip(variables, values))):
            return loss_of(x, states)

    (_, outs), grads = jax.value_and_grad(pure, argnums=(0, 1, 2), has_aux=True)(
        [v.value for v in variables], x, list(states)
    )
    weight_grads, dx, dstates = grads
    return [np_(o) for o in outs], [np_(dx)] + [np_(g) for g in dstates] + [
        np_(g) for g in weight_grads
    ]
