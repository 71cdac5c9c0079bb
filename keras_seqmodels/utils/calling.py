"""One batch through a Keras model, compiled once per model, without Keras's
predict function.

``model.predict_on_batch`` runs a ``tf.function`` whose Python code is the
same for every model, and TensorFlow's retracing detector counts traces by
that code: a process that loads several models (zoo tasks) warned of
retracing that never happened. ``call_model`` compiles each model's call as
its own ``tf.function`` (keyed by a per-model callable, so counted apart),
with ``reduce_retracing`` as Keras's predict has; other backends call the
model directly. An object that is not a Keras layer or model (a stand-in
with only ``predict_on_batch``, as earlier code accepted) is answered by its
``predict_on_batch``.
"""

import weakref

_CALLS = weakref.WeakKeyDictionary()


class _ModelCall:
    """``model(inputs, training=False)``; an instance, not a function, so
    TensorFlow keys its trace counts by the instance (one per model)."""

    def __init__(self, model):
        self.model = weakref.ref(model)

    def __call__(self, inputs):
        return self.model()(inputs, training=False)


def call_model(model, inputs):
    """``model``'s outputs for one batch of ``inputs``, as NumPy arrays (a
    list for several outputs), as ``model.predict_on_batch`` gives them."""
    import keras

    if not isinstance(model, keras.layers.Layer):
        outputs = model.predict_on_batch(inputs)
    elif keras.backend.backend() != "tensorflow":
        outputs = model(inputs, training=False)
    else:
        function = _CALLS.get(model)
        if function is None:
            import tensorflow as tf

            # No AutoGraph, as Keras's own predict step: the layers' code is
            # traced as written (its Python control flow is on Python values).
            function = tf.function(_ModelCall(model), reduce_retracing=True, autograph=False)
            _CALLS[model] = function
        outputs = function(inputs)
    if isinstance(outputs, (list, tuple)):
        return [keras.ops.convert_to_numpy(y) for y in outputs]
    return keras.ops.convert_to_numpy(outputs)
