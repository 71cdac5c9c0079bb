"""The level-by-level runner shared by the recursive layers."""

import keras
from keras import ops

from keras_seqmodels.utils.validation import (
    check_float_dtype,
    check_last_dim_known,
    check_positive_int,
    check_rank,
)


class RecursiveLayer(keras.layers.Layer):
    """Base of the layers that apply one composition function over trees.

    Inputs are ``[x, children, levels]`` as produced by
    ``keras_seqmodels.trees.encode``: node features ``x (B, N, features)``,
    ``children (B, N, K)`` (indices within the tree, ``-1`` for none) and
    ``levels (B, N)`` (``-1`` for padding). Every child must have a lower
    level than its parent; the root of each tree is its highest node.

    Dynamic batching: nodes are sorted by level once; each iteration of one
    ``keras.ops.fori_loop`` evaluates a window of consecutive sorted nodes,
    all of one level, of every tree in the batch, with one gather of the
    children's states, one call of the composition function (one matrix
    product) and one scatter into a node-state buffer. On TensorFlow the
    window is the widest level and the loop runs once per level (dynamic
    shapes, so these layers opt out of XLA). Under JAX's ``jit`` shapes must
    be static, so the window is ``B`` nodes and the loop runs ``2 N`` times,
    which bounds the work by ``2 B N`` node evaluations (a level of width
    ``w`` takes ``⌈w / B⌉`` iterations; the levels sum to at most ``N`` plus
    ``B N / B``).

    An eager call on JAX runs through one ``jax.jit`` of the layer (weights
    as arguments), compiled once per input shape and dtype and reused by
    later calls; inside ``fit``, ``predict``, ``jit`` or ``grad`` the loop is
    traced with the enclosing function as usual.

    Subclasses define ``state_count``, ``input_width`` (the width of the
    per-node input projection), ``build_composition(input_dim, arity)``,
    ``project(x)`` and ``compose(z, child_states, has_child)``.
    """

    state_count = 1

    def __init__(self, units, **kwargs):
        super().__init__(**kwargs)
        self.units = check_positive_int(type(self).__name__, "units", units)
        # Per-level windows have data-dependent widths on TensorFlow.
        self.supports_jit = keras.backend.backend() != "tensorflow"

    def _check_shapes(self, input_shape):
        name = type(self).__name__
        if (
            not isinstance(input_shape, (list, tuple))
            or len(input_shape) != 3
            or not all(isinstance(s, (list, tuple)) for s in input_shape)
        ):
            raise ValueError(
                f"{name}: expected inputs [x, children, levels]. Received {input_shape!r}"
            )
        x_shape, children_shape, levels_shape = (tuple(s) for s in input_shape)
        check_rank(name, "x", x_shape, 3, "(batch, nodes, features)")
        check_rank(name, "children", children_shape, 3, "(batch, nodes, arity)")
        check_rank(name, "levels", levels_shape, 2, "(batch, nodes)")
        check_last_dim_known(name, "x", x_shape)
        check_last_dim_known(name, "children", children_shape)
        return x_shape, children_shape, levels_shape

    def build(self, input_shape):
        x_shape, children_shape, _ = self._check_shapes(input_shape)
        self.arity = int(children_shape[-1])
        self._x_width = int(x_shape[-1])
        self.build_composition(int(x_shape[-1]), self.arity)

    def compute_output_shape(self, input_shape):
        x_shape, _, levels_shape = self._check_shapes(input_shape)
        b, n = levels_shape
        return (b, n, self.units), (b, self.units)

    def call(self, inputs):
        x, children, levels = inputs
        name = type(self).__name__
        # build() checked the shapes it was built with; a built layer may be
        # called on others (e.g. another rank), which would fail deep inside.
        x_shape, children_shape, _ = self._check_shapes(
            [tuple(x.shape), tuple(children.shape), tuple(levels.shape)]
        )
        for arg, shape, want, form in (
            ("x", x_shape, getattr(self, "_x_width", None), "features"),
            ("children", children_shape, self.arity, "arity"),
        ):
            if want is not None and shape[-1] != want:
                raise ValueError(
                    f"{name}: `{arg}` must have last dimension {form}={want} (the "
                    f"layer was built with it). Received shape {shape}"
                )
        check_float_dtype(name, "x", x.dtype)
        for arg, t in (("children", children), ("levels", levels)):
            if "int" not in keras.backend.standardize_dtype(t.dtype):
                raise ValueError(
                    f"{name}: `{arg}` must be an integer tensor. Received dtype={t.dtype}"
                )
        _check_concrete_trees(name, children, levels)
        if self._is_eager_jax(x, children, levels):
            return self._compiled_call(x, children, levels)
        return self._level_loop(x, children, levels)

    def _is_eager_jax(self, *tensors):
        """An eager call on JAX: concrete inputs and weights (no jit, grad or
        symbolic trace around it), and no non-trainable state to write back."""
        if keras.backend.backend() != "jax" or self.non_trainable_variables:
            return False
        import jax

        values = [*tensors, *(v.value for v in self.trainable_variables)]
        return not any(isinstance(t, jax.core.Tracer) for t in values)

    def _compiled_call(self, x, children, levels):
        # An eager fori_loop traces and compiles its body on every call (a
        # new closure each time, about 2 s on CPU). One jitted function per
        # layer instead: JAX keeps its compilation per input signature (shapes
        # and dtypes), so repeated calls of one shape reuse it. The weights
        # are arguments, so assigning them later needs no recompilation.
        owner, fn = getattr(self, "_jitted_level_loop", (None, None))
        if owner != id(self):  # none yet, or copied along from another layer
            import jax

            def run(weights, x, children, levels):
                outputs, _ = self.stateless_call(weights, [], [x, children, levels])
                return outputs

            fn = jax.jit(run)
            self._jitted_level_loop = (id(self), fn)
        return fn([v.value for v in self.trainable_variables], x, children, levels)

    def _level_loop(self, x, children, levels):
        children = ops.cast(children, "int32")
        levels = ops.cast(levels, "int32")
        static = keras.backend.backend() != "tensorflow"
        shape = ops.shape(levels)
        b, n = shape[0], shape[1]
        m = b * n
        k = self.arity
        if static and m == 0:
            # No node: the loop has nothing to do (JAX traces its body anyway,
            # and a take from an empty axis fails while tracing).
            return (
                ops.zeros((b, n, self.units), self.compute_dtype),
                ops.zeros((b, self.units), self.compute_dtype),
            )
        zero_row, sink = m, m + 1  # read for absent children / written by no-ops

        z = self.project(ops.cast(x, self.compute_dtype))
        z = ops.reshape(z, (m, ops.shape(z)[-1]))  # (m, -1) is ambiguous when m = 0
        z = ops.concatenate([z, ops.zeros((2, ops.shape(z)[1]), z.dtype)], 0)
        offsets = ops.reshape(ops.arange(b, dtype="int32") * n, (-1, 1, 1))
        glob = ops.where(children >= 0, children + offsets, zero_row)
        glob = ops.concatenate([ops.reshape(glob, (m, k)), ops.full((2, k), zero_row, "int32")], 0)
        # Sort key: the level, padding (-1) last as level n.
        key = ops.reshape(levels, (m,))
        key = ops.where(key >= 0, key, n)
        order = ops.cast(ops.argsort(key), "int32")
        counts = ops.cast(
            ops.segment_sum(ops.ones((m,), "int32"), key, num_segments=n + 1),
            "int32",
        )
        starts = ops.cast(ops.cumsum(counts), "int32") - counts
        if static:
            width, steps = b, 2 * n
        else:
            # A window of w nodes costs w evaluations however many of them
            # are real, so a level of c nodes takes ceil(c / w) iterations.
            # The widest level as window would cost (height x widest level)
            # on a batch mixing a deep tree and a wide one (quadratic in the
            # nodes); w >= 2 nodes / height bounds the work by 3 x nodes and
            # the iterations by 1.5 x height. (`initial`: no max of an empty
            # tensor on an empty batch or zero nodes.)
            height = ops.cast(ops.max(ops.where(key < n, key, -1), initial=-1), "int32") + 1
            real = m - ops.take(counts, n)
            widest = ops.cast(ops.max(counts[:n], initial=0), "int32")
            width = ops.minimum(widest, (2 * real + height - 1) // ops.maximum(height, 1))
            width = ops.maximum(width, 1)
            steps = ops.sum((counts[:n] + width - 1) // width)
        order = ops.concatenate([order, ops.full((width,), sink, "int32")], 0)
        sorted_key = ops.concatenate([ops.take(key, order[:m]), ops.full((width,), n, "int32")], 0)
        positions = ops.arange(width, dtype="int32")

        def body(_, carry):
            p, states = carry
            level = ops.take(sorted_key, p)
            end = ops.take(starts, level) + ops.take(counts, level)
            window = ops.slice(order, ops.reshape(p, (1,)), (width,))
            valid = ops.logical_and(p + positions < end, level < n)
            idx = ops.where(valid, window, sink)
            kids = ops.reshape(ops.take(glob, idx, axis=0), (-1,))
            child_states = [
                ops.reshape(ops.take(s, kids, axis=0), (width, k, self.units)) for s in states
            ]
            has_child = ops.reshape(kids != zero_row, (width, k))
            new = self.compose(ops.take(z, idx, axis=0), child_states, has_child)
            rows = ops.expand_dims(idx, 1)
            states = [ops.scatter_update(s, rows, u) for s, u in zip(states, new)]
            p = ops.cast(ops.where(level < n, ops.minimum(p + width, end), p), "int32")
            return p, states

        buffers = [
            ops.zeros((m + 2, self.units), self.compute_dtype) for _ in range(self.state_count)
        ]
        _, buffers = ops.fori_loop(0, steps, body, (ops.convert_to_tensor(0, "int32"), buffers))
        nodes = ops.reshape(buffers[0][:m], (b, n, self.units))
        # One padding column more, so that a tree of zero nodes (n = 0) has a
        # "root" to read: a row of zeros, as a tree of padding nodes gives.
        padded = ops.pad(nodes, ((0, 0), (0, 1), (0, 0)))
        root = ops.argmax(ops.pad(levels, ((0, 0), (0, 1)), constant_values=-1), axis=1)
        root_out = ops.take_along_axis(
            padded, ops.reshape(ops.cast(root, "int32"), (-1, 1, 1)), axis=1
        )
        return nodes, ops.reshape(root_out, (b, self.units))

    def get_config(self):
        return {**super().get_config(), "units": self.units}


class LeafInputRecursiveLayer(RecursiveLayer):
    """Base of the recursive layers whose leaves are their input vectors.

    A leaf is h = x (so the input features must equal ``units``); a node
    with children is p = f(a(c) + b), c = [c_1; ...; c_K] the children's
    vectors (zeros for absent ones), for a pre-activation ``a`` defined by
    the subclass. Holds what ``RecursiveNN`` and ``RNTN`` share: the
    arguments ``activation``, ``use_bias``, ``kernel_initializer``,
    ``bias_initializer`` and ``kernel_regularizer``, the weights ``kernel``
    ``W`` ``(K units, units)`` and ``bias`` ``b``, and the leaf selection.

    Subclasses define ``node_step(child_h)`` (p of every node of a window
    from its children's ``(C, K, units)``) and may add weights, created
    between ``kernel`` and ``bias``, in ``build_extra_weights(width)``.
    """

    def __init__(
        self,
        units,
        activation="tanh",
        use_bias=True,
        kernel_initializer="glorot_uniform",
        bias_initializer="zeros",
        kernel_regularizer=None,
        **kwargs,
    ):
        super().__init__(units, **kwargs)
        self.activation = keras.activations.get(activation)
        self.use_bias = bool(use_bias)
        self.kernel_initializer = keras.initializers.get(kernel_initializer)
        self.bias_initializer = keras.initializers.get(bias_initializer)
        self.kernel_regularizer = keras.regularizers.get(kernel_regularizer)

    def build_composition(self, input_dim, arity):
        if input_dim != self.units:
            raise ValueError(
                f"{type(self).__name__}: leaves are their input vectors, so the "
                f"last dimension of `x` must equal `units` ({self.units}). "
                f"Received {input_dim}"
            )
        width = arity * self.units
        self.kernel = self.add_weight(
            name="kernel", shape=(width, self.units),
            initializer=self.kernel_initializer, regularizer=self.kernel_regularizer,
        )
        # Weights are saved in creation order: extra ones stay between
        # kernel and bias.
        self.build_extra_weights(width)
        self.bias = (
            self.add_weight(
                name="bias", shape=(self.units,), initializer=self.bias_initializer
            )
            if self.use_bias
            else None
        )

    def build_extra_weights(self, width):
        """Create the subclass' own weights (``width`` is ``K units``)."""

    def project(self, x):
        return x

    def compose(self, z, child_states, has_child):
        p = self.node_step(child_states[0])
        is_leaf = ops.logical_not(ops.any(has_child, axis=1))
        return [ops.where(ops.expand_dims(is_leaf, 1), z, p)]

    def get_config(self):
        return {
            **super().get_config(),
            "activation": keras.activations.serialize(self.activation),
            "use_bias": self.use_bias,
            "kernel_initializer": keras.initializers.serialize(self.kernel_initializer),
            "bias_initializer": keras.initializers.serialize(self.bias_initializer),
            "kernel_regularizer": keras.regularizers.serialize(self.kernel_regularizer),
        }


def _check_concrete_trees(name, children, levels):
    """Check the trees' structure when the values are at hand (eager calls).

    A child index out of range, a child not below its parent, or a tree
    without one root would otherwise give a silently wrong result (the level
    loop reads whatever node the index lands on). Under ``tf.function`` or
    ``jit`` the values are symbolic and nothing is checked; ``trees.encode``
    builds valid arrays, and ``trees.check_encoding`` checks others before
    they enter a pipeline. Rows that are all padding (no nodes, no children) are
    allowed.
    """
    import numpy as np

    from keras_seqmodels.trees.encoding import check_encoding
    from keras_seqmodels.trees.tree import TreeError

    try:
        children = np.asarray(ops.convert_to_numpy(children))
        levels = np.asarray(ops.convert_to_numpy(levels))
    except Exception:  # symbolic (traced) values: nothing to check here
        return
    if children.ndim != 3 or levels.ndim != 2 or children.shape[:2] != levels.shape:
        raise ValueError(
            f"{name}: `children` (batch, nodes, arity) and `levels` (batch, nodes) "
            f"must agree on batch and nodes. Received shapes {children.shape} and "
            f"{levels.shape}"
        )
    rows = (levels.max(axis=1, initial=-1) >= 0) | (children.max(axis=(1, 2), initial=-1) >= 0)
    if not rows.any():
        return
    try:
        check_encoding(children[rows], levels[rows])
    except TreeError as err:
        raise TreeError(
            f"{name}: invalid trees in `children`/`levels` (expected each child "
            f"index in [-1, nodes) with a lower level than its parent, one root "
            f"per tree): {err}"
        ) from None
