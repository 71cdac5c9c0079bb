"""``HawkBlock``: Griffin's recurrent temporal-mixing block around the RG-LRU."""

import keras
from keras import ops

from keras_seqmodels.linear_rnn.base import LinearRecurrent
from keras_seqmodels.linear_rnn.rg_lru import (
    a_param_initializer,
    check_c,
    check_radii,
    default_gate_initializer,
    rglru_coefficients,
)
from keras_seqmodels.utils import bounds, validation


def _gather_steps(x, index):
    """``out[b, k] = x[b, index[b, k]]`` for ``x`` ``(batch, time, width)``."""
    shape = ops.shape(x)
    offsets = ops.expand_dims(ops.arange(shape[0], dtype="int32") * shape[1], 1)
    flat = ops.reshape(x, (-1, shape[2]))
    out = ops.take(flat, ops.reshape(ops.cast(index, "int32") + offsets, (-1,)), axis=0)
    return ops.reshape(out, (shape[0], -1, shape[2]))


def causal_conv1d(x, buffer, kernel, bias, mask=None):
    """Short causal depthwise convolution over time, carrying its last inputs.

    ``y(t) = sum_k kernel[k] * x(t - K + 1 + k) + bias`` (``kernel[K - 1]``
    multiplies the current input, the anchor's layout), where the steps
    before the sequence are the ``K - 1`` inputs of ``buffer`` (oldest
    first; zeros for a fresh sequence).

    Args:
        x: ``(batch, time, width)``.
        buffer: ``(batch, K - 1, width)``, or ``None`` when ``K = 1``.
        kernel: ``(K, width)``; bias: ``(width,)``.
        mask: optional boolean ``(batch, time)``. A masked step is skipped:
            the convolution at a real step reads the last ``K`` real inputs
            (buffer included), and the returned buffer holds the last
            ``K - 1`` real inputs, so a padded sequence gives what it gives
            alone (right or left padding, or holes). The outputs at masked
            steps are of no use (the caller discards them).

    Returns:
        ``(y, new_buffer)``.
    """
    width = kernel.shape[0]
    if width == 1:
        return x * kernel[0] + bias, None
    full = ops.concatenate([ops.cast(buffer, x.dtype), x], axis=1)  # (batch, K-1+T, width)
    if mask is None:
        y = bias
        for k in range(width):
            stop = k - (width - 1)
            y = y + (full[:, k:stop] if stop else full[:, k:]) * kernel[k]
        return y, full[:, 1 - width :]
    # Gather the real steps to the front (keeping their order), then read
    # each step's window by the count of real steps up to it.
    valid = ops.concatenate(
        [ops.ones((ops.shape(x)[0], width - 1), dtype="int32"), ops.cast(mask, "int32")], axis=1
    )
    position = ops.expand_dims(ops.arange(ops.shape(full)[1], dtype="int32"), 0)
    order = ops.argsort(ops.where(valid > 0, position, position + ops.shape(full)[1]), axis=1)
    packed = _gather_steps(full, order)
    count = ops.cumsum(valid, axis=1)[:, width - 1 :]  # real steps up to t, buffer included
    y = bias
    for j in range(width):  # j steps back from t
        y = y + _gather_steps(packed, ops.maximum(count - 1 - j, 0)) * kernel[width - 1 - j]
    total = count[:, -1:]
    last = total - (width - 1) + ops.expand_dims(ops.arange(width - 1, dtype="int32"), 0)
    return y, _gather_steps(packed, last)


@keras.saving.register_keras_serializable(package="keras_seqmodels")
class HawkBlock(LinearRecurrent):
    """Griffin's recurrent block (the temporal mixing of Hawk), as one layer.

    For each step t (figure 2 of the paper):

        y(t) = GeLU(W_y x(t) + b_y)                       gate branch
        u(t) = W_x x(t) + b_x                             recurrent branch
        v(t) = sum_k w[k] * u(t - K + 1 + k) + b_conv     causal Conv1D, width K
        h(t) = RG-LRU(v)(t)                               (keras_seqmodels.linear_rnn.RGLRU)
        out(t) = W_out (h(t) * y(t)) + b_out

    The convolution is depthwise (one filter of ``K`` taps per channel) and
    causal. The whole sequence runs as the projections, ``K`` shifted
    products and one linear scan; ``step`` runs one step at a time for
    streaming, carrying the RG-LRU state ``h`` and the convolution's last
    ``K - 1`` inputs as a second state, so streaming a sequence step by step
    gives the whole-sequence outputs. With a mask, padded steps are skipped
    by the convolution too (its window reads the last ``K`` real steps).
    The block is the residual branch of a Hawk layer; the residual
    connection and the RMSNorm before it are the model's (not included).

    What is new relative to Keras: Keras has no gated linear recurrence, no
    scan-trained recurrent layer and no block that streams a convolution's
    buffer with a recurrent state; this is all three, with masks,
    ``initial_state``, ``go_backwards``, ``stateful`` and a step form.

    Where it differs from the anchor (google-deepmind/recurrentgemma,
    ``modules.RecurrentBlock``, ``layers.Conv1D``, ``layers.RGLRU``): dense
    RG-LRU gates (the anchor's are block-diagonal over ``num_heads``) and no
    document resets (``segment_pos``), as ``RGLRU`` explains; GeLU is the
    tanh approximation (``jax.nn.gelu``'s default, which the anchor uses);
    the initialisers are the anchor's (variance scaling 1, fan-in, for the
    projections and gates; 0.01 for the convolution; zero biases).

    Args:
        units: output width (the anchor's ``width``; usually the input width,
            for the residual connection).
        lru_units: width of the RG-LRU and both branches (default ``units``,
            the anchor's ``lru_width``).
        conv_width: taps of the causal convolution (default 4).
        c, min_rad, max_rad: the RG-LRU's (``RGLRU``).
        **kwargs: ``return_sequences``, ``return_state``, ``go_backwards``,
            ``stateful`` and the ``keras.layers.Layer`` arguments, as in
            ``keras_seqmodels.linear_rnn.LinearRecurrent``.

    Call arguments:
        sequences: float tensor ``(batch, time, features)``.
        initial_state: optional list ``[h, conv_buffer]``: ``(batch,
            lru_units)`` and ``(batch, conv_width - 1, lru_units)`` (just
            ``[h]`` when ``conv_width = 1``).
        mask: optional boolean ``(batch, time)``; masked steps keep the states.
        training: unused.

    Example:

    >>> import numpy as np, keras_seqmodels as ks
    >>> block = ks.linear_rnn.HawkBlock(16, return_sequences=True, return_state=True)
    >>> out, h, buffer = block(np.random.rand(2, 10, 16).astype("float32"))
    >>> out.shape, h.shape, buffer.shape
    ((2, 10, 16), (2, 16), (2, 3, 16))

    Reference:
        De et al., "Griffin: Mixing Gated Linear Recurrences with Local
        Attention for Efficient Language Models", 2024 (arXiv:2402.19427),
        section 2.4 and figure 2.
    """

    def __init__(
        self, units, lru_units=None, conv_width=4, c=8.0, min_rad=0.9, max_rad=0.999, **kwargs
    ):
        super().__init__(**kwargs)
        name = type(self).__name__
        self.units = validation.check_positive_int(name, "units", units)
        if lru_units is None:
            lru_units = self.units
        self.lru_units = validation.check_positive_int(name, "lru_units", lru_units)
        # A width, bounded as `units` is (a crafted config cannot allocate without limit).
        bounds.check_size(name, "lru_units", self.lru_units, bounds.WIDTH, "widths")
        if not validation.is_int(conv_width) or not 1 <= conv_width <= 64:
            raise ValueError(
                f"{name}: `conv_width` must be an integer in [1, 64]. "
                f"Received: conv_width={conv_width!r}"
            )
        self.conv_width = int(conv_width)
        self.c = check_c(name, c)
        self.min_rad, self.max_rad = check_radii(name, min_rad, max_rad)

    def build(self, sequences_shape, initial_state_shape=None):
        self._check_sequences_shape(sequences_shape)
        d_in, w, k = sequences_shape[-1], self.lru_units, self.conv_width
        dense = default_gate_initializer()

        def pair(name, shape_in, shape_out, initializer):
            kernel = self.add_weight(
                shape=(shape_in, shape_out), initializer=initializer, name=f"{name}_kernel"
            )
            bias = self.add_weight(shape=(shape_out,), initializer="zeros", name=f"{name}_bias")
            setattr(self, f"{name}_kernel", kernel)
            setattr(self, f"{name}_bias", bias)

        pair("linear_y", d_in, w, dense)
        pair("linear_x", d_in, w, dense)
        pair("conv", k, w, keras.initializers.VarianceScaling(0.01, "fan_in", "truncated_normal"))
        pair("gate_a", w, w, dense)
        pair("gate_x", w, w, dense)
        self.a_param = self.add_weight(
            shape=(w,), initializer=a_param_initializer(self.min_rad, self.max_rad), name="a_param"
        )
        pair("linear_out", w, self.units, dense)
        super().build(sequences_shape)

    def scan_shape(self):
        return (self.lru_units,)

    def extra_state_shapes(self):
        return [(self.conv_width - 1, self.lru_units)] if self.conv_width > 1 else []

    @property
    def output_size(self):
        return self.units

    def _affine(self, x, name):
        kernel = ops.cast(getattr(self, f"{name}_kernel"), x.dtype)
        return ops.matmul(x, kernel) + ops.cast(getattr(self, f"{name}_bias"), x.dtype)

    def coefficients(self, sequences, extra_states, mask, training):
        dtype = sequences.dtype
        gate = ops.gelu(self._affine(sequences, "linear_y"), approximate=True)
        buffer = extra_states[0] if extra_states else None
        v, buffer = causal_conv1d(
            self._affine(sequences, "linear_x"),
            buffer,
            ops.cast(self.conv_kernel, dtype),
            ops.cast(self.conv_bias, dtype),
            mask,
        )
        a, b = rglru_coefficients(
            v,
            self._affine(v, "gate_a"),
            self._affine(v, "gate_x"),
            ops.cast(self.a_param, dtype),
            self.c,
        )
        return (a,), (b,), gate, [] if buffer is None else [buffer]

    def readout(self, h, context, training):
        return self._affine(ops.cast(h[0], context.dtype) * context, "linear_out")

    def get_config(self):
        config = {
            "units": self.units,
            "lru_units": self.lru_units,
            "conv_width": self.conv_width,
            "c": self.c,
            "min_rad": self.min_rad,
            "max_rad": self.max_rad,
        }
        return {**super().get_config(), **config}
