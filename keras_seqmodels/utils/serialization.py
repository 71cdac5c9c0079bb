"""Rebuilding the nested Keras objects of a composite layer's config.

A layer that wraps a cell (``Recurrent``), a layer (``Bidirectional``) or an
optimizer (``NonFiniteGuard``) stores it in ``get_config`` with
``keras.saving.serialize_keras_object``; its ``from_config`` has to turn
that dict back into an object before calling the constructor. One function
does it for all of them:

    @classmethod
    def from_config(cls, config, custom_objects=None):
        bounds.check_config(cls.__name__, config)
        return cls(**deserialize_nested(config, ("cell",), custom_objects))
"""

import keras


def deserialize_nested(config, keys, custom_objects=None):
    """A copy of ``config`` with the objects under ``keys`` deserialized.

    What it does that ``keras.layers.deserialize(config[key])`` alone does not:

    - works on a copy: the caller's dict is left as it was (Keras's own
      ``StackedRNNCells.from_config`` pops ``"cells"`` from it, so loading
      the same config twice would fail);
    - passes ``custom_objects`` on, which Keras's loader hands to
      ``from_config`` and not to nested calls of its own;
    - takes any Keras object (``keras.saving.deserialize_keras_object``: a
      layer, a cell, an optimizer), not only a layer;
    - leaves a key that is absent or ``None`` as it is (an optional child,
      such as a ``Bidirectional``'s ``backward_layer``), so the constructor
      applies its default or names the missing argument.

    A list (a stack's ``"cells"``) is rebuilt item by item, as Keras does.

    Args:
        config: a layer's config dict, as ``get_config`` returned it.
        keys: the keys that hold serialized objects.
        custom_objects: optional dict of names to classes or functions,
            passed on to Keras.

    Returns:
        A new dict, ``config`` with those values rebuilt.

    Example:

    >>> import keras
    >>> config = {"cell": keras.saving.serialize_keras_object(
    ...     keras.layers.Dense(2)), "backward_layer": None}
    >>> rebuilt = deserialize_nested(config, ("cell", "backward_layer"))
    >>> type(rebuilt["cell"]).__name__, rebuilt["backward_layer"], type(config["cell"])
    ('Dense', None, <class 'dict'>)
    """
    config = dict(config)
    for key in keys:
        if config.get(key) is not None:
            config[key] = keras.saving.deserialize_keras_object(
                config[key], custom_objects=custom_objects
            )
    return config
