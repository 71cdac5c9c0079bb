"""One helper that every layer test calls, and backend-agnostic gradients."""

import json
import os
import tempfile

import keras
import numpy as np
from keras import ops


def compute_gradients(loss_fn, variables):
    """Gradients of ``loss_fn()`` with respect to Keras ``variables``.

    Works on the TensorFlow, JAX and PyTorch backends. ``loss_fn`` reads the
    variables through the layers that own them.

    Args:
        loss_fn: zero-argument callable returning a scalar tensor.
        variables: list of ``keras.Variable``.

    Returns:
        A list of NumPy arrays, one per variable.

    Example:

    >>> import numpy as np, keras
    >>> dense = keras.layers.Dense(1, use_bias=False, kernel_initializer="ones")
    >>> x = np.array([[1.0, 2.0]], "float32")
    >>> _ = dense(x)
    >>> [g.ravel().tolist() for g in compute_gradients(lambda: dense(x)[0, 0], dense.weights)]
    [[1.0, 2.0]]
    """
    backend = keras.backend.backend()
    if backend == "tensorflow":
        import tensorflow as tf

        with tf.GradientTape() as tape:
            loss = loss_fn()
        grads = tape.gradient(loss, [v.value for v in variables])
        return [ops.convert_to_numpy(g) for g in grads]
    if backend == "jax":
        import jax

        def pure(values):
            # StatelessScope substitutes the traced values for the variables.
            mapping = list(zip(variables, values))
            with keras.StatelessScope(state_mapping=mapping):
                return loss_fn()

        grads = jax.grad(pure)([v.value for v in variables])
        return [np.asarray(g) for g in grads]
    if backend == "torch":
        for v in variables:
            v.value.grad = None
        loss = loss_fn()
        loss.backward()
        return [v.value.grad.detach().cpu().numpy() for v in variables]
    raise NotImplementedError(f"compute_gradients: backend {backend}")


def run_layer_test(
    layer_factory,
    input_data,
    expected_output_shape=None,
    custom_objects=None,
    run_fit=True,
    run_mixed_precision=True,
    atol=1e-6,
):
    """Run the checks every layer of the package must pass.

    Args:
        layer_factory: zero-argument callable returning a new layer.
        input_data: a NumPy array (or list of arrays) to call it on.
        expected_output_shape: the eager output's shape, if known.
        custom_objects: extra objects for deserialization.
        run_fit: train one step with ``model.fit`` and check the loss is finite.
        run_mixed_precision: run forward under ``mixed_float16`` and
            ``mixed_bfloat16`` and check the outputs are finite.
        atol: tolerance of the save/load comparison.

    Checks: config round trip and JSON round trip (same config), symbolic and
    eager output shapes agree, one ``fit`` step, ``.keras`` save/load gives
    identical outputs, mixed precision forward passes are finite.

    Returns:
        The layer built and checked (its weights are those after the ``fit``
        step); a failed check raises ``AssertionError``.

    Example:

    >>> import numpy as np, keras_seqmodels as ks
    >>> layer = run_layer_test(
    ...     lambda: ks.layers.Recurrent(ks.cells.GRUCell(4)),
    ...     np.ones((2, 3, 5), "float32"), expected_output_shape=(2, 4),
    ...     run_fit=False, run_mixed_precision=False)
    >>> layer.cell.units
    4
    """
    inputs_list = input_data if isinstance(input_data, list) else [input_data]
    layer = layer_factory()
    # Config and JSON round trip.
    config = layer.get_config()
    clone = type(layer).from_config(config)
    assert _strip_name(clone.get_config()) == _strip_name(config), (
        "from_config(get_config()) changed the config"
    )
    blob = json.dumps(keras.saving.serialize_keras_object(layer))
    clone = keras.saving.deserialize_keras_object(json.loads(blob), custom_objects=custom_objects)
    assert _strip_name(clone.get_config()) == _strip_name(config)

    # Symbolic and eager shapes.
    sym_inputs = [
        keras.Input(shape=x.shape[1:], batch_size=x.shape[0], dtype=str(x.dtype))
        for x in inputs_list
    ]
    sym_out = layer(sym_inputs if isinstance(input_data, list) else sym_inputs[0])
    eager_out = layer(input_data)
    for s, e in zip(_flat(sym_out), _flat(eager_out)):
        assert tuple(s.shape) == tuple(e.shape), (
            f"symbolic shape {s.shape} != eager shape {e.shape}"
        )
    if expected_output_shape is not None:
        assert tuple(_flat(eager_out)[0].shape) == tuple(expected_output_shape)

    model = keras.Model(sym_inputs if isinstance(input_data, list) else sym_inputs[0], sym_out)
    reference = [ops.convert_to_numpy(t) for t in _flat(model(input_data))]

    # .keras save and load.
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "model.keras")
        model.save(path)
        loaded = keras.saving.load_model(path, custom_objects=custom_objects)
        again = [ops.convert_to_numpy(t) for t in _flat(loaded(input_data))]
    for a, b in zip(reference, again):
        np.testing.assert_allclose(a, b, atol=atol, rtol=0)

    # One fit step.
    if run_fit:
        outs = _flat(sym_out)
        head = keras.layers.Dense(1)(keras.layers.Flatten()(outs[0]))
        fit_model = keras.Model(model.inputs, head)
        fit_model.compile(optimizer="sgd", loss="mse")
        target = np.zeros((inputs_list[0].shape[0], 1), "float32")
        history = fit_model.fit(input_data, target, epochs=1, verbose=0)
        assert np.isfinite(history.history["loss"][-1])

    # Mixed precision.
    if run_mixed_precision:
        for policy in ("mixed_float16", "mixed_bfloat16"):
            serialized = _set_policy(keras.saving.serialize_keras_object(layer), policy)
            mp_layer = keras.saving.deserialize_keras_object(
                serialized, custom_objects=custom_objects
            )
            outs = _flat(mp_layer(input_data))
            for out in outs:
                assert np.all(np.isfinite(ops.convert_to_numpy(ops.cast(out, "float32"))))
            assert keras.backend.standardize_dtype(outs[0].dtype) == policy.split("_")[1]
    return layer


def _set_policy(obj, policy):
    """Replace every float32 dtype policy in a serialized layer by ``policy``."""
    if isinstance(obj, dict):
        if obj.get("class_name") == "DTypePolicy":
            return {**obj, "config": {**obj["config"], "name": policy}}
        return {k: _set_policy(v, policy) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_set_policy(v, policy) for v in obj]
    return obj


def _flat(x):
    if isinstance(x, (list, tuple)):
        return list(x)
    return [x]


def _strip_name(config):
    config = dict(config)
    config.pop("name", None)
    return json.loads(json.dumps(config, default=str))
