"""Four recurrent sweeps over a 2-D grid (ReNet)."""

import keras
from keras import ops

from keras_seqmodels.layers.bidirectional import Bidirectional
from keras_seqmodels.layers.recurrent import Recurrent
from keras_seqmodels.utils import bounds, serialization, validation

ARRANGEMENTS = ("renet", "plain")


def _clone_cell(cell, name):
    config = dict(cell.get_config())
    config["name"] = name
    return cell.__class__.from_config(config)


def _pair(layer_name, arg_name, value):
    if validation.is_int(value):
        value = (value, value)
    if (
        not isinstance(value, (tuple, list))
        or len(value) != 2
        or any(not validation.is_int(v) or v <= 0 for v in value)
    ):
        raise ValueError(
            f"{layer_name}: `{arg_name}` must be a positive integer or a pair "
            f"of positive integers (rows, columns). Received: {arg_name}={value!r}"
        )
    return tuple(int(v) for v in value)


@keras.saving.register_keras_serializable(package="keras_seqmodels")
class FourDirectional2D(keras.layers.Layer):
    """Four RNN sweeps over a grid: left-right, right-left, top-down, bottom-up.

    The input grid (batch, height, width, channels) is first cut into
    non-overlapping ``patch_size`` patches, each flattened into one feature
    vector p(i, j). Then, with ``arrangement="renet"`` (Visin et al.):

        v(i, j) = [h→(i, j), h←(i, j)]   (each row i a sequence over j)
        y(i, j) = [g↓(i, j), g↑(i, j)]   (each column j of v a sequence over i)

    so y(i, j) depends on every patch of the image (all four quadrants). With
    ``arrangement="plain"`` the four sweeps all read the patches p:

        y(i, j) = [h→(i, j), h←(i, j), g↓(i, j), g↑(i, j)]

    where y(i, j) depends on row i and column j only (stack two layers to
    cover the whole image).

    Each sweep is one run of the package's ``Recurrent`` over all rows (or
    all columns) of the whole batch at once, reshaped into one batch of
    ``batch * rows`` sequences; the two directions of a sweep form a
    ``keras_seqmodels.layers.Bidirectional``. What is new relative to Keras:
    Keras has no 2-D multi-directional RNN layer (``ConvLSTM2D`` is a
    convolutional RNN over time, not a sweep across space).

    Args:
        cell: a cell of this package (e.g. ``keras_seqmodels.cells.GRUCell(32)``)
            or a Keras RNN cell; used as the template of the horizontal
            sweeps, each of which gets its own copy (own weights).
        vertical_cell: optional template of the vertical sweeps (default: the
            same as ``cell``).
        arrangement: ``"renet"`` (default) or ``"plain"``, see above.
        patch_size: int or (rows, columns), default 1. A grid whose size is
            not a multiple is zero-padded at the bottom and right, so the
            output grid is ``ceil(height / rows)`` by ``ceil(width / columns)``.
        unroll: unroll the time loops (worthwhile for short rows).

    Call arguments:
        inputs: float tensor ``(batch, height, width, channels)``.
        training: whether dropout is active.

    Returns:
        ``(batch, ceil(height / rows), ceil(width / columns), features)``
        with features ``2 * vertical units`` for ``"renet"`` and
        ``2 * (units + vertical units)`` for ``"plain"``.

    Example:

    >>> import numpy as np, keras_seqmodels as ks
    >>> layer = ks.layers.FourDirectional2D(ks.cells.GRUCell(8), patch_size=2)
    >>> layer(np.random.rand(2, 7, 6, 1).astype("float32")).shape
    (2, 4, 3, 16)

    Reference:
        Visin, Kastner, Cho, Matteucci, Courville & Bengio, "ReNet: A
        recurrent neural network based alternative to convolutional
        networks", arXiv:1505.00393, 2015; Graves, Fernández & Schmidhuber,
        "Multi-dimensional recurrent neural networks", ICANN 2007.
    """

    def __init__(
        self,
        cell,
        vertical_cell=None,
        arrangement="renet",
        patch_size=1,
        unroll=False,
        **kwargs,
    ):
        super().__init__(**kwargs)
        name = type(self).__name__
        for arg, value in (("cell", cell), ("vertical_cell", vertical_cell)):
            if value is None and arg == "vertical_cell":
                continue
            validation.check_cell_instance(name, arg, value)
            if not isinstance(value, keras.layers.Layer) or not hasattr(value, "state_size"):
                raise ValueError(
                    f"{name}: `{arg}` must be a recurrent cell (a Keras layer "
                    f"with `state_size`), e.g. GRUCell(32). Received: {arg}={value!r}"
                )
        self.arrangement = validation.check_choice(name, "arrangement", arrangement, ARRANGEMENTS)
        self.patch_size = _pair(name, "patch_size", patch_size)
        self.unroll = bool(unroll)
        # Kept as configs: the templates are never built or called, so they
        # must not be tracked as sub-layers.
        self._cell_config = keras.saving.serialize_keras_object(cell)
        self._vertical_cell_config = (
            None if vertical_cell is None else keras.saving.serialize_keras_object(vertical_cell)
        )
        v_template = cell if vertical_cell is None else vertical_cell
        self.horizontal = self._sweep(cell, "horizontal", "left_to_right", "right_to_left")
        self.vertical = self._sweep(v_template, "vertical", "top_to_bottom", "bottom_to_top")

    def _sweep(self, template, name, forward, backward):
        """A Bidirectional pair of fresh copies of `template` along one axis."""

        def direction(direction_name):
            return Recurrent(
                _clone_cell(template, f"{direction_name}_cell"),
                return_sequences=True,
                unroll=self.unroll,
                name=direction_name,
                dtype=self.dtype_policy,
            )

        return Bidirectional(
            direction(forward),
            backward_layer=direction(backward),
            name=name,
            dtype=self.dtype_policy,
        )

    def _grid(self, shape):
        ph, pw = self.patch_size
        h, w = shape[1], shape[2]
        return (
            None if h is None else -(-h // ph),
            None if w is None else -(-w // pw),
        )

    def build(self, inputs_shape):
        validation.check_rank(
            self.name, "inputs", inputs_shape, 4, "(batch, height, width, channels)"
        )
        validation.check_last_dim_known(self.name, "inputs", inputs_shape)
        ph, pw = self.patch_size
        if (ph, pw) != (1, 1) and None in tuple(inputs_shape[1:3]):
            raise ValueError(
                f"{self.name}: with patch_size={self.patch_size} the height "
                "and width of `inputs` must be known. Received shape "
                f"{tuple(inputs_shape)}"
            )
        features = ph * pw * inputs_shape[-1]
        self._channels = int(inputs_shape[-1])
        self.horizontal.build((None, None, features))
        v_in = features if self.arrangement == "plain" else self._width(self.horizontal)
        self.vertical.build((None, None, v_in))

    @staticmethod
    def _width(bidirectional):
        return 2 * bidirectional.forward_layer.compute_output_shape((None, None, 1))[-1]

    def compute_output_shape(self, inputs_shape):
        gh, gw = self._grid(inputs_shape)
        width = self._width(self.vertical)
        if self.arrangement == "plain":
            width += self._width(self.horizontal)
        return (inputs_shape[0], gh, gw, width)

    def _patches(self, x):
        ph, pw = self.patch_size
        if ph == 1 and pw == 1:
            return x
        h, w, c = x.shape[1], x.shape[2], x.shape[-1]
        pad_h, pad_w = (-h) % ph, (-w) % pw
        if pad_h or pad_w:
            x = ops.pad(x, ((0, 0), (0, pad_h), (0, pad_w), (0, 0)))
        gh, gw = (h + pad_h) // ph, (w + pad_w) // pw
        # The batch size is given, not -1: -1 is ambiguous on zero-size inputs.
        b = ops.shape(x)[0]
        x = ops.reshape(x, (b, gh, ph, gw, pw, c))
        x = ops.transpose(x, (0, 1, 3, 2, 4, 5))
        return ops.reshape(x, (b, gh, gw, ph * pw * c))

    @staticmethod
    def _sweep_rows(bidirectional, grid, training):
        # All rows of all images form one batch of sequences over columns.
        shape = ops.shape(grid)
        # No -1 in the shapes: it is ambiguous when a side is zero.
        rows = ops.reshape(grid, (shape[0] * shape[1], shape[2], grid.shape[-1]))
        out = bidirectional(rows, training=training)
        return ops.reshape(out, (shape[0], shape[1], shape[2], out.shape[-1]))

    def _sweep_columns(self, grid, training):
        transposed = ops.transpose(grid, (0, 2, 1, 3))
        out = self._sweep_rows(self.vertical, transposed, training)
        return ops.transpose(out, (0, 2, 1, 3))

    def call(self, inputs, training=None):
        # build() saw only the first shape; a built layer may get others.
        shape = tuple(inputs.shape)
        validation.check_rank(self.name, "inputs", shape, 4, "(batch, height, width, channels)")
        channels = getattr(self, "_channels", None)
        if channels is not None and shape[-1] != channels:
            raise ValueError(
                f"{self.name}: `inputs` must have {channels} channels (the layer "
                f"was built with them). Received shape {shape}"
            )
        validation.check_float_dtype(self.name, "inputs", inputs.dtype)
        if 0 in shape[:3]:
            # No image, row or column: nothing to sweep, an empty result (a
            # recurrent run over zero sequences fails on JAX).
            out = self.compute_output_shape(shape)
            return ops.zeros((shape[0], *out[1:]), self.compute_dtype)
        grid = self._patches(inputs)
        horizontal = self._sweep_rows(self.horizontal, grid, training)
        if self.arrangement == "renet":
            return self._sweep_columns(horizontal, training)
        vertical = self._sweep_columns(grid, training)
        return ops.concatenate([horizontal, vertical], axis=-1)

    def get_config(self):
        config = {
            "cell": self._cell_config,
            "vertical_cell": self._vertical_cell_config,
            "arrangement": self.arrangement,
            "patch_size": list(self.patch_size),
            "unroll": self.unroll,
        }
        return {**super().get_config(), **config}

    @classmethod
    def from_config(cls, config, custom_objects=None):
        bounds.check_config(cls.__name__, config)
        return cls(
            **serialization.deserialize_nested(config, ("cell", "vertical_cell"), custom_objects)
        )
