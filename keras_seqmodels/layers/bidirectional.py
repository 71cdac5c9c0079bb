"""Bidirectional wrapper whose backward run reverses each sequence in place."""

import copy

import keras
from keras import ops

from keras_seqmodels.utils import bounds, serialization, validation

MERGE_MODES = ("concat", "sum", "mean", "product")
# Keras's names for the same modes, accepted so code ports unchanged.
_ALIASES = {"ave": "mean", "mul": "product"}


def reversal_permutation(mask):
    """Per-row permutations that reverse the unmasked steps of each sequence.

    For a boolean ``mask`` of shape ``(batch, time)``, returns
    ``(order, inverse, reversed_mask)``:

    - ``order[b, k]``: the time step of row ``b`` that goes to position ``k``
      of the reversed sequence. The row's valid steps come first, last step
      first; its padded steps follow in their original order.
    - ``inverse[b, t]``: the position in the reversed sequence of step ``t``
      (``inverse`` undoes ``order``).
    - ``reversed_mask[b, k] = k < length[b]``: the mask of the reversed rows.

    For right-padded rows (``length`` valid steps, then padding),
    ``order[b, k] = length[b] - 1 - k`` for ``k < length[b]`` and ``k``
    afterwards. Masks with holes or left padding work too: their valid steps
    are gathered to the front, in reverse.

    ``inverse`` has a closed form (from cumulative counts of valid and padded
    steps); ``order`` is its inverse permutation, obtained with one ``argsort``
    of a ``(batch, time)`` integer array. No loop over rows or steps.
    """
    valid = ops.cast(mask, "int32")
    time = ops.shape(valid)[1]
    length = ops.sum(valid, axis=1, keepdims=True)
    rank_valid = ops.cumsum(valid, axis=1) - 1
    rank_pad = ops.cumsum(1 - valid, axis=1) - 1
    inverse = ops.where(ops.cast(valid, "bool"), length - 1 - rank_valid, length + rank_pad)
    order = ops.cast(ops.argsort(inverse, axis=1), "int32")
    reversed_mask = ops.expand_dims(ops.arange(time, dtype="int32"), 0) < length
    return order, inverse, reversed_mask


def gather_time(x, index):
    """``out[b, k] = x[b, index[b, k]]`` for ``x`` of shape (batch, time, ...)."""
    shape = ops.shape(x)
    batch, time = shape[0], shape[1]
    offsets = ops.expand_dims(ops.arange(batch, dtype="int32") * time, 1)
    flat_index = ops.reshape(ops.cast(index, "int32") + offsets, (-1,))
    flat = ops.reshape(x, (-1,) + tuple(shape[2:]))
    return ops.reshape(ops.take(flat, flat_index, axis=0), shape)


@keras.saving.register_keras_serializable(package="keras_seqmodels")
class Bidirectional(keras.layers.Layer):
    """Runs a recurrent layer forwards and a copy of it backwards, and merges.

    h(t) = forward RNN over x(1..t),  g(t) = backward RNN over x(t..T_b),
    y(t) = merge(h(t), g(t)), where T_b is the length of sequence b.

    The backward copy reads each sequence **reversed within its own length**:
    the valid steps of row b, last first, then its padding, which stays at
    the end and is masked. So a padded batch gives, row by row, exactly what
    each unpadded sequence gives alone; with ``return_sequences`` the outputs
    of padded steps are zeros, without it each direction returns its output
    at the last step it read (g(1) for the backward direction), whatever the
    wrapped layer's ``zero_output_for_mask``.
    The reversal is one gather with per-row indices computed from the mask.

    What is new relative to ``keras.layers.Bidirectional``: it wraps this
    package's ``Recurrent`` (any cell, nested or matrix-shaped states) as
    well as Keras RNN layers; the backward direction is a forward run over
    the per-row reversed batch, so the wrapped layer needs no
    ``go_backwards`` support and the backward loop starts at each row's last
    real step instead of walking through its padding first; merge modes are
    named ``"mean"`` and ``"product"`` (Keras's ``"ave"`` and ``"mul"`` are
    accepted). With a mask, Keras's wrapper gives the same numbers (its masked
    steps keep the state), which the tests check; the cost of each is
    measured in ``benchmarks/bidirectional_cost.py``.

    Args:
        layer: a ``keras_seqmodels.layers.Recurrent`` or a Keras RNN layer
            (``keras.layers.RNN``, ``LSTM``, ``GRU``, ``SimpleRNN``) with
            ``go_backwards=False`` and ``stateful=False``. It becomes the
            forward direction.
        merge_mode: ``"concat"`` (default), ``"sum"``, ``"mean"``,
            ``"product"`` or ``None`` (return both directions' outputs).
        backward_layer: optional layer for the backward direction, of the
            same kind and output width; by default a fresh copy of ``layer``
            (same config, its own weights).

    Call arguments:
        sequences: float tensor ``(batch, time, features)``.
        mask: optional boolean ``(batch, time)``; False marks padding.
        initial_state: optional list: the forward layer's states, then the
            backward layer's.
        training: whether dropout is active.

    Returns:
        The merged output, ``(batch, time, units_m)`` with
        ``return_sequences`` (else ``(batch, units_m)``; for the backward
        direction that is its state after reading the whole sequence, i.e.
        g(1)), where ``units_m`` is twice the layer's width for ``"concat"``;
        with ``merge_mode=None`` a list ``[forward, backward]``. With
        ``return_state`` the forward states then the backward states follow.

    Example:

    >>> import numpy as np, keras_seqmodels as ks
    >>> bi = ks.layers.Bidirectional(
    ...     ks.layers.Recurrent(ks.cells.GRUCell(8), return_sequences=True))
    >>> x = np.random.rand(2, 5, 3).astype("float32")
    >>> mask = np.array([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]], bool)
    >>> bi(x, mask=mask).shape
    (2, 5, 16)

    Reference:
        Schuster & Paliwal, "Bidirectional recurrent neural networks", IEEE
        Trans. Signal Processing 45(11), 1997; Goodfellow, Bengio & Courville,
        Deep Learning, section 10.3.
    """

    def __init__(self, layer, merge_mode="concat", backward_layer=None, **kwargs):
        super().__init__(**kwargs)
        name = type(self).__name__
        self._check_wrapped(name, "layer", layer)
        merge_mode = _ALIASES.get(merge_mode, merge_mode)
        if merge_mode is not None:
            validation.check_choice(name, "merge_mode", merge_mode, MERGE_MODES)
        if backward_layer is None:
            config = copy.deepcopy(layer.get_config())
            config["name"] = "backward_" + layer.name
            backward_layer = layer.__class__.from_config(config)
        else:
            self._check_wrapped(name, "backward_layer", backward_layer)
            for attr in ("return_sequences", "return_state"):
                if getattr(layer, attr) != getattr(backward_layer, attr):
                    raise ValueError(
                        f"{name}: `layer` and `backward_layer` must have the "
                        f"same `{attr}`. Received: layer.{attr}="
                        f"{getattr(layer, attr)}, backward_layer.{attr}="
                        f"{getattr(backward_layer, attr)}"
                    )
        self.forward_layer = layer
        self.backward_layer = backward_layer
        self.merge_mode = merge_mode
        self.return_sequences = layer.return_sequences
        self.return_state = layer.return_state
        for sub in (self.forward_layer, self.backward_layer):
            # With return_sequences, padded steps output zeros, so merged
            # outputs are zero there. Without, the layer's last output must
            # be the one of its last unmasked step: a Keras RNN with
            # zero_output_for_mask=True would return the zeros of a trailing
            # padded step instead (Keras's own wrapper sets the same rule).
            if getattr(sub, "zero_output_for_mask", None) is not None:
                sub.zero_output_for_mask = bool(sub.return_sequences)
        self.supports_masking = True

    @staticmethod
    def _check_wrapped(name, arg, layer):
        if not isinstance(layer, keras.layers.Layer) or not all(
            hasattr(layer, a) for a in ("return_sequences", "return_state")
        ):
            raise ValueError(
                f"{name}: `{arg}` must be a keras_seqmodels.layers.Recurrent "
                "or a Keras RNN layer (with `return_sequences` and "
                f"`return_state`). Received: {arg}={layer!r}"
            )
        if getattr(layer, "go_backwards", False):
            raise ValueError(
                f"{name}: `{arg}` must have go_backwards=False; the wrapper "
                "makes the backward direction itself. Received: "
                f"{arg}.go_backwards=True"
            )
        if getattr(layer, "stateful", False):
            raise ValueError(
                f"{name}: `{arg}` must have stateful=False (a backward run "
                "cannot carry its state into the next batch). Received: "
                f"{arg}.stateful=True"
            )

    def build(self, sequences_shape, initial_state_shape=None):
        validation.check_rank(self.name, "sequences", sequences_shape, 3, "(batch, time, features)")
        validation.check_last_dim_known(self.name, "sequences", sequences_shape)
        for sub in (self.forward_layer, self.backward_layer):
            if not sub.built:
                sub.build(sequences_shape)

    # Shapes --------------------------------------------------------------

    def _merge_shape(self, shape):
        shape = tuple(shape)
        if self.merge_mode == "concat":
            last = None if shape[-1] is None else 2 * shape[-1]
            return shape[:-1] + (last,)
        return shape

    def compute_output_shape(self, sequences_shape, initial_state_shape=None):
        fw = self.forward_layer.compute_output_shape(sequences_shape)
        bw = self.backward_layer.compute_output_shape(sequences_shape)
        if self.return_state:
            fw_out, fw_states = fw[0], list(fw[1:])
            bw_out, bw_states = bw[0], list(bw[1:])
        else:
            fw_out, bw_out, fw_states, bw_states = fw, bw, [], []
        if self.merge_mode is None:
            outputs = [tuple(fw_out), tuple(bw_out)]
        else:
            outputs = [self._merge_shape(fw_out)]
        if not self.return_state and self.merge_mode is not None:
            return outputs[0]
        return outputs + [tuple(s) for s in fw_states + bw_states]

    def compute_mask(self, sequences, mask=None):
        if isinstance(mask, (list, tuple)):
            mask = mask[0]
        out_mask = mask if self.return_sequences else None
        masks = [out_mask, out_mask] if self.merge_mode is None else [out_mask]
        if self.return_state:
            n_states = len(self._split_states_count())
            masks = masks + [None] * n_states
        if len(masks) == 1:
            return masks[0]
        return masks

    def _split_states_count(self):
        shapes = self.forward_layer.compute_output_shape((None, None, 1))
        if not self.return_state:
            return []
        return list(shapes[1:]) * 2

    # Call ----------------------------------------------------------------

    def call(self, sequences, mask=None, initial_state=None, training=None):
        validation.check_float_dtype(self.name, "sequences", sequences.dtype)
        fw_init = bw_init = None
        if initial_state is not None:
            initial_state = list(initial_state)
            if len(initial_state) % 2:
                raise ValueError(
                    f"{self.name}: `initial_state` must list the forward "
                    "states then the backward states (an even number). "
                    f"Received {len(initial_state)} tensors"
                )
            half = len(initial_state) // 2
            fw_init, bw_init = initial_state[:half], initial_state[half:]

        if mask is None:
            reversed_seq = ops.flip(sequences, axis=1)
            reversed_mask = None
        else:
            order, inverse, reversed_mask = reversal_permutation(mask)
            reversed_seq = gather_time(sequences, order)

        fw = self._run(self.forward_layer, sequences, mask, fw_init, training)
        bw = self._run(self.backward_layer, reversed_seq, reversed_mask, bw_init, training)
        if self.return_state:
            fw_out, fw_states = fw[0], list(fw[1:])
            bw_out, bw_states = bw[0], list(bw[1:])
        else:
            fw_out, bw_out, fw_states, bw_states = fw, bw, [], []
        if self.return_sequences:
            if mask is None:
                bw_out = ops.flip(bw_out, axis=1)
            else:
                bw_out = gather_time(bw_out, inverse)

        if self.merge_mode is None:
            outputs = [fw_out, bw_out]
        else:
            outputs = [self._merge(fw_out, bw_out)]
        if not self.return_state and self.merge_mode is not None:
            return outputs[0]
        return outputs + fw_states + bw_states

    @staticmethod
    def _run(layer, sequences, mask, initial_state, training):
        kwargs = {"training": training}
        if mask is not None:
            kwargs["mask"] = mask
        if initial_state is not None:
            kwargs["initial_state"] = initial_state
        return layer(sequences, **kwargs)

    def _merge(self, a, b):
        if self.merge_mode == "concat":
            return ops.concatenate([a, b], axis=-1)
        if self.merge_mode == "sum":
            return a + b
        if self.merge_mode == "mean":
            return (a + b) * 0.5
        return a * b

    # Serialization -------------------------------------------------------

    def get_config(self):
        config = {
            "layer": keras.saving.serialize_keras_object(self.forward_layer),
            "backward_layer": keras.saving.serialize_keras_object(self.backward_layer),
            "merge_mode": self.merge_mode,
        }
        return {**super().get_config(), **config}

    @classmethod
    def from_config(cls, config, custom_objects=None):
        bounds.check_config(cls.__name__, config)
        return cls(
            **serialization.deserialize_nested(config, ("layer", "backward_layer"), custom_objects)
        )
