import keras
import numpy as np
import pytest
from keras import ops
from reference import cell_weights, run_reference

import keras_seqmodels as ks
from keras_seqmodels.testing import compute_gradients, run_layer_test

F64 = keras.backend.backend() == "tensorflow"
DTYPE = "float64" if F64 else "float32"
ATOL = 1e-10 if F64 else 3e-6


def randomize(layer, seed=0):
    rng = np.random.default_rng(seed)
    for v in layer.weights:
        v.assign(rng.uniform(-0.6, 0.6, v.shape).astype(v.dtype))


def numpy_patches(x, ph, pw):
    """Zero-pad to multiples of the patch size, then flatten each patch."""
    b, h, w, c = x.shape
    gh, gw = -(-h // ph), -(-w // pw)
    padded = np.zeros((b, gh * ph, gw * pw, c), x.dtype)
    padded[:, :h, :w] = x
    out = np.zeros((b, gh, gw, ph * pw * c))
    for i in range(gh):
        for j in range(gw):
            out[:, i, j] = padded[:, i * ph : (i + 1) * ph, j * pw : (j + 1) * pw].reshape(b, -1)
    return out


def run_rows(name, grid, weights, reverse):
    """Explicit 1-D runs, one per row of every image (a loop, on purpose)."""
    b, h, w, _ = grid.shape
    units = weights["recurrent_kernel"].shape[0]
    out = np.zeros((b, h, w, units))
    for n in range(b):
        for i in range(h):
            seq = grid[n : n + 1, i]
            if reverse:
                out[n, i] = run_reference(name, seq[:, ::-1], weights)[0][0, ::-1]
            else:
                out[n, i] = run_reference(name, seq, weights)[0][0]
    return out


def run_columns(name, grid, weights, reverse):
    return run_rows(name, grid.transpose(0, 2, 1, 3), weights, reverse).transpose(0, 2, 1, 3)


def sweeps(layer):
    """The four directions' cell weights, by name."""
    return {
        "lr": cell_weights(layer.horizontal.forward_layer.cell),
        "rl": cell_weights(layer.horizontal.backward_layer.cell),
        "tb": cell_weights(layer.vertical.forward_layer.cell),
        "bt": cell_weights(layer.vertical.backward_layer.cell),
    }


@pytest.mark.parametrize(
    "cell, arrangement, patch, size",
    [
        ("GRUCell", "renet", (1, 1), (3, 4)),
        ("LSTMCell", "renet", (2, 2), (5, 3)),
        ("ElmanCell", "plain", (1, 1), (4, 3)),
        ("GRUCell", "plain", (2, 1), (3, 3)),
    ],
)
def test_each_direction_matches_explicit_1d_runs(cell, arrangement, patch, size):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, *size, 2)).astype(DTYPE)
    cls = getattr(ks.cells, cell)
    layer = ks.layers.FourDirectional2D(
        cls(3, dtype=DTYPE), arrangement=arrangement, patch_size=patch, dtype=DTYPE
    )
    layer.build(x.shape)
    randomize(layer)
    out = ops.convert_to_numpy(layer(x))
    w = sweeps(layer)
    p = numpy_patches(x.astype(np.float64), *patch)
    horizontal = np.concatenate(
        [run_rows(cell, p, w["lr"], False), run_rows(cell, p, w["rl"], True)], -1
    )
    v_in = horizontal if arrangement == "renet" else p
    vertical = np.concatenate(
        [run_columns(cell, v_in, w["tb"], False), run_columns(cell, v_in, w["bt"], True)],
        -1,
    )
    want = vertical if arrangement == "renet" else np.concatenate([horizontal, vertical], -1)
    assert out.shape == want.shape
    np.testing.assert_allclose(out, want, atol=ATOL)


def _input_gradient(layer, x, i, j):
    xv = keras.Variable(x, dtype=x.dtype)
    (grad,) = compute_gradients(lambda: ops.sum(layer(xv.value)[:, i, j]), [xv])
    return np.abs(grad[0]).sum(-1)


def test_renet_output_depends_on_all_four_quadrants():
    x = np.random.default_rng(1).standard_normal((1, 7, 7, 1)).astype(DTYPE)
    layer = ks.layers.FourDirectional2D(ks.cells.GRUCell(3, dtype=DTYPE), dtype=DTYPE)
    layer.build(x.shape)
    randomize(layer, seed=2)
    g = _input_gradient(layer, x, 3, 3)
    quadrants = [g[:3, :3], g[:3, 4:], g[4:, :3], g[4:, 4:]]
    assert all(np.all(q > 0) for q in quadrants)


def test_plain_output_depends_on_its_row_and_column_only():
    x = np.random.default_rng(1).standard_normal((1, 5, 6, 1)).astype(DTYPE)
    layer = ks.layers.FourDirectional2D(
        ks.cells.ElmanCell(3, dtype=DTYPE), arrangement="plain", dtype=DTYPE
    )
    layer.build(x.shape)
    randomize(layer, seed=3)
    g = _input_gradient(layer, x, 2, 4)
    cross = np.zeros_like(g, bool)
    cross[2, :] = cross[:, 4] = True
    assert np.all(g[cross] > 0)
    np.testing.assert_array_equal(g[~cross], 0.0)


def test_patch_pixels_reach_the_same_output_cell():
    # With 2x2 patches, output (0, 0) of the plain arrangement sees exactly
    # pixel rows 0-1 and pixel columns 0-1 (a patch row and a patch column).
    x = np.random.default_rng(4).standard_normal((1, 5, 5, 1)).astype(DTYPE)
    layer = ks.layers.FourDirectional2D(
        ks.cells.GRUCell(2, dtype=DTYPE), arrangement="plain", patch_size=2, dtype=DTYPE
    )
    layer.build(x.shape)
    randomize(layer, seed=5)
    g = _input_gradient(layer, x, 0, 0)
    band = np.zeros_like(g, bool)
    band[:2, :] = band[:, :2] = True
    assert np.all(g[band] > 0)
    np.testing.assert_array_equal(g[~band], 0.0)


@pytest.mark.parametrize(
    "size, patch, arrangement, expected",
    [
        ((7, 6), 2, "renet", (4, 3, 8)),
        ((5, 9), (2, 3), "plain", (3, 3, 16)),
        ((3, 1), 1, "renet", (3, 1, 8)),
        ((1, 1), 3, "plain", (1, 1, 16)),
    ],
)
def test_shapes_for_odd_sizes_and_patches(size, patch, arrangement, expected):
    x = np.ones((2, *size, 3), "float32")
    layer = ks.layers.FourDirectional2D(
        ks.cells.GRUCell(4), arrangement=arrangement, patch_size=patch
    )
    out = layer(x)
    assert tuple(out.shape) == (2, *expected)
    assert layer.compute_output_shape(x.shape) == (2, *expected)
    symbolic = layer(keras.Input((*size, 3)))
    assert tuple(symbolic.shape) == (None, *expected)


def test_vertical_cell_sets_output_width():
    layer = ks.layers.FourDirectional2D(
        ks.cells.GRUCell(3), vertical_cell=ks.cells.LSTMCell(5), patch_size=2
    )
    assert tuple(layer(np.ones((1, 4, 4, 1), "float32")).shape) == (1, 2, 2, 10)


@pytest.mark.slow
def test_layer_contract():
    x = np.random.default_rng(0).standard_normal((2, 5, 4, 2)).astype("float32")
    run_layer_test(
        lambda: ks.layers.FourDirectional2D(
            ks.cells.LSTMCell(3), vertical_cell=ks.cells.GRUCell(2), patch_size=(2, 2)
        ),
        x,
        expected_output_shape=(2, 3, 2, 4),
    )


def test_plain_config_round_trip_keeps_outputs():
    x = np.random.default_rng(0).standard_normal((2, 3, 4, 2)).astype("float32")
    layer = ks.layers.FourDirectional2D(
        ks.cells.GRUCell(3), arrangement="plain", patch_size=(1, 2), unroll=True
    )
    out = ops.convert_to_numpy(layer(x))
    clone = ks.layers.FourDirectional2D.from_config(layer.get_config())
    clone.build(x.shape)
    assert [w.path.split("/", 1)[1] for w in clone.weights] == [
        w.path.split("/", 1)[1] for w in layer.weights
    ]
    clone.set_weights(layer.get_weights())
    np.testing.assert_allclose(ops.convert_to_numpy(clone(x)), out, atol=1e-6)
    assert clone.get_config()["arrangement"] == "plain"
    assert clone.get_config()["patch_size"] == [1, 2]


def test_argument_errors():
    with pytest.raises(ValueError, match="arrangement"):
        ks.layers.FourDirectional2D(ks.cells.GRUCell(2), arrangement="diagonal")
    with pytest.raises(ValueError, match="patch_size"):
        ks.layers.FourDirectional2D(ks.cells.GRUCell(2), patch_size=0)
    with pytest.raises(ValueError, match="patch_size"):
        ks.layers.FourDirectional2D(ks.cells.GRUCell(2), patch_size=(2, 2, 2))
    with pytest.raises(ValueError, match="`cell` must be"):
        ks.layers.FourDirectional2D(keras.layers.Dense(2))
    with pytest.raises(ValueError, match="rank 4"):
        ks.layers.FourDirectional2D(ks.cells.GRUCell(2))(np.ones((2, 3, 3), "float32"))
