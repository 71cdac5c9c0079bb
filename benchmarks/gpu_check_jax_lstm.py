"""JAX's cuDNN LSTM (``jax.experimental.rnn.lstm``) on a GPU, checked where the
package's opt-in cuDNN path (``kernels.tune(layer, cudnn_training=True)``) could
part from the fused loop that runs by default.

    KERAS_BACKEND=jax python benchmarks/gpu_check_jax_lstm.py [--out FILE.json]
        [--mnist DIR] [--train-steps 60] [--quick]

Sections (each prints one line per case; ``--out`` also writes them as JSON):

- ``kernel``: ``rnn.lstm`` against ``rnn.lstm_ref`` on the same flat weights
  (the reference in full float32 on the same GPU), at sizes from 8 units x 50
  steps to the pixel-MNIST LSTM's 81 units x 784 steps x batch 128, with zero
  and chrono biases, in full float32 (``highest``: cuDNN's FMA math) and in
  cuDNN's default math (TF32 products allowed, what training without a set
  precision gets). Largest differences of the outputs and final states, and,
  where cuDNN differs by more than 1e-2, which other reading of the flat
  weights it matches (transposed matrices, gates i f o g, one bias only).
- ``weights``: cuDNN's own weight-space size and block offsets for the
  descriptor jaxlib builds (through ctypes; skipped if libcudnn cannot be
  reached), against the packed layout ``jax.experimental.rnn`` documents.
- ``layer``: the package's LSTM with cuDNN against the fused loop, outputs and
  gradients, at the pixel-MNIST size.
- ``network``: the pixel-mnist-permuted network (LSTM, 81 units, 4 blocks,
  dropout 0): logits through cuDNN (training) and through the fused loop
  (inference), same weights, after ``--train-steps`` Adam steps trained through
  cuDNN (on MNIST from ``--mnist``, else a synthetic 10-class task); the
  accuracy of both on a held-out batch.

On a CPU it says so and stops (cuDNN needs a GPU; the CPU tests put
``lstm_ref`` in cuDNN's place: tests/layers/test_library_kernel_jax.py).
"""

import argparse
import contextlib
import ctypes
import json
import os
import time

os.environ.setdefault("KERAS_BACKEND", "jax")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax.experimental import rnn  # noqa: E402

RESULTS = []


def report(section, **row):
    row = {"section": section, **row}
    RESULTS.append(row)
    print(" ".join(f"{k}={_fmt(v)}" for k, v in row.items()), flush=True)


def _fmt(v):
    return f"{v:.3g}" if isinstance(v, float) else str(v)


def flat_weights(rng, features, units, bias):
    """Packed weights in the documented layout: W_ih (4u, in), W_hh (4u, u),
    b_ih, b_hh; ``bias`` "zero" or "chrono" (forget up to log(783), input the
    negative, the other gates nonzero too)."""
    w_ih = rng.uniform(-0.3, 0.3, (4 * units, features))
    w_hh = rng.uniform(-0.15, 0.15, (4 * units, units))
    b_ih = np.zeros(4 * units)
    b_hh = np.zeros(4 * units)
    if bias == "chrono":
        log_tau = np.log(rng.uniform(1.0, 783.0, units))
        b_ih[:units], b_ih[units : 2 * units] = -log_tau, log_tau
        b_ih[2 * units :] = rng.uniform(-0.5, 0.5, 2 * units)
        b_hh[:] = rng.uniform(-0.2, 0.2, 4 * units)
    parts = [w_ih.ravel(), w_hh.ravel(), b_ih, b_hh]
    return jnp.asarray(np.concatenate(parts), jnp.float32)


def reference(x, h0, c0, weights, lengths, features, units, reading="documented"):
    """``lstm_ref`` on ``weights`` read one way, in full float32."""
    w_ih, w_hh, b_ih, b_hh = rnn.unpack_lstm_weights(weights, features, units, 1, False)
    if reading == "transposed":  # column-major matrices
        w_ih = {0: w_ih[0].reshape(-1).reshape(features, 4 * units).T}
        w_hh = {0: w_hh[0].reshape(-1).reshape(units, 4 * units).T}
    elif reading == "ifog":  # output and cell gates swapped (MIOpen's order)
        swap = rnn.swap_lstm_gates(weights, features, units, 1, False)
        w_ih, w_hh, b_ih, b_hh = rnn.unpack_lstm_weights(swap, features, units, 1, False)
    elif reading == "input_bias_only":
        b_hh = {0: jnp.zeros_like(b_hh[0])}
    elif reading == "recurrent_bias_only":
        b_ih = {0: jnp.zeros_like(b_ih[0])}
    with jax.default_matmul_precision("highest"):
        return rnn.lstm_ref(
            x, h0, c0, w_ih, w_hh, b_ih, b_hh, lengths, features, units, 1, 0.0, False
        )


def kernel_section(sizes):
    readings = ("transposed", "ifog", "input_bias_only", "recurrent_bias_only")
    for features, units, steps, batch in sizes:
        for bias in ("zero", "chrono"):
            rng = np.random.default_rng(0)
            weights = flat_weights(rng, features, units, bias)
            x = jnp.asarray(rng.standard_normal((batch, steps, features)), jnp.float32)
            h0 = jnp.asarray(rng.standard_normal((1, batch, units)) * 0.5, jnp.float32)
            c0 = jnp.asarray(rng.standard_normal((1, batch, units)) * 0.5, jnp.float32)
            lengths = jnp.full((batch,), steps, jnp.int32)
            ref = reference(x, h0, c0, weights, lengths, features, units)
            for precision in ("highest", "default"):
                args = (features, units, 1, 0.0, False)
                if precision == "highest":
                    with jax.default_matmul_precision("highest"):
                        got = rnn.lstm(x, h0, c0, weights, lengths, *args)
                else:
                    got = rnn.lstm(x, h0, c0, weights, lengths, *args)
                diffs = [float(jnp.abs(a - b).max()) for a, b in zip(got, ref)]
                row = dict(
                    features=features,
                    units=units,
                    steps=steps,
                    batch=batch,
                    bias=bias,
                    precision=precision,
                    y=diffs[0],
                    h=diffs[1],
                    c=diffs[2],
                    y_scale=float(jnp.abs(ref[0]).max()),
                )
                if max(diffs) > 1e-2:
                    for reading in readings:
                        other = reference(x, h0, c0, weights, lengths, features, units, reading)
                        row[f"vs_{reading}"] = float(jnp.abs(got[0] - other[0]).max())
                report("kernel", **row)


def _find_libcudnn():
    with open("/proc/self/maps") as maps:
        for line in maps:
            path = line.split()[-1]
            if "libcudnn.so" in os.path.basename(path):
                return path
    return "libcudnn.so.9"


def weights_section(sizes):
    """cuDNN's weight-space size and block offsets for jaxlib's descriptor."""
    try:
        lib = ctypes.CDLL(_find_libcudnn())
    except OSError as error:
        report("weights", error=f"libcudnn not loaded: {error}")
        return
    vp = ctypes.c_void_p

    def check(status, what):
        if status != 0:
            raise RuntimeError(f"{what}: cudnn status {status}")

    handle = vp()
    check(lib.cudnnCreate(ctypes.byref(handle)), "cudnnCreate")
    lib.cudnnGetVersion.restype = ctypes.c_size_t
    report("weights", cudnn_version=int(lib.cudnnGetVersion()))
    for features, units, _, _ in sizes:
        for math_name, math_type in (("fma", 3), ("default", 0)):
            try:
                desc, dropout = vp(), vp()
                check(lib.cudnnCreateRNNDescriptor(ctypes.byref(desc)), "CreateRNNDescriptor")
                check(lib.cudnnCreateDropoutDescriptor(ctypes.byref(dropout)), "CreateDropout")
                states = ctypes.c_size_t()
                check(lib.cudnnDropoutGetStatesSize(handle, ctypes.byref(states)), "States")
                lib.cudnnSetDropoutDescriptor.argtypes = [
                    vp,
                    vp,
                    ctypes.c_float,
                    vp,
                    ctypes.c_size_t,
                    ctypes.c_ulonglong,
                ]
                check(
                    lib.cudnnSetDropoutDescriptor(dropout, handle, 0.0, None, states, 123),
                    "SetDropout",
                )
                lib.cudnnSetRNNDescriptor_v8.argtypes = (
                    [vp] + [ctypes.c_int] * 12 + [vp, ctypes.c_uint]
                )
                # algo standard, LSTM, double bias, unidirectional, linear input,
                # float data and math precision, math type, sizes, 1 layer,
                # the dropout descriptor, padded IO enabled: as jaxlib's rnn_kernels.cc.
                check(
                    lib.cudnnSetRNNDescriptor_v8(
                        desc, 0, 2, 2, 0, 0, 0, 0, math_type, features, units, units, 1, dropout, 1
                    ),
                    "SetRNNDescriptor_v8",
                )
                size = ctypes.c_size_t()
                check(
                    lib.cudnnGetRNNWeightSpaceSize(handle, desc, ctypes.byref(size)), "WeightSpace"
                )
                packed = 4 * (4 * units * (features + units) + 8 * units)
                row = dict(
                    features=features,
                    units=units,
                    math=math_name,
                    cudnn_bytes=size.value,
                    packed_bytes=packed,
                )
                row.update(_offsets(lib, handle, desc, size.value, features, units))
                report("weights", **row)
            except Exception as error:  # noqa: BLE001 (a diagnostic: report and go on)
                report("weights", features=features, units=units, math=math_name, error=str(error))


def _offsets(lib, handle, desc, size, features, units):
    """Byte offsets cuDNN gives for each gate's matrix and bias, and whether
    they are the documented packed layout's."""
    vp = ctypes.c_void_p
    space = jnp.zeros((size // 4 + 1,), jnp.float32)
    base = space.unsafe_buffer_pointer()
    m_desc, b_desc = vp(), vp()
    lib.cudnnCreateTensorDescriptor(ctypes.byref(m_desc))
    lib.cudnnCreateTensorDescriptor(ctypes.byref(b_desc))
    lib.cudnnGetRNNWeightParams.argtypes = [
        vp,
        vp,
        ctypes.c_int,
        ctypes.c_size_t,
        vp,
        ctypes.c_int,
        vp,
        ctypes.POINTER(vp),
        vp,
        ctypes.POINTER(vp),
    ]
    got, expected = [], []
    for lin in range(8):
        m_addr, b_addr = vp(), vp()
        status = lib.cudnnGetRNNWeightParams(
            handle,
            desc,
            0,
            size,
            vp(base),
            lin,
            m_desc,
            ctypes.byref(m_addr),
            b_desc,
            ctypes.byref(b_addr),
        )
        if status != 0:
            return {"offsets_error": f"cudnnGetRNNWeightParams status {status} at {lin}"}
        got.append(((m_addr.value or base) - base, (b_addr.value or base) - base))
        gate = lin % 4
        if lin < 4:
            m = gate * units * features
            b = 4 * units * (features + units) + gate * units
        else:
            m = 4 * units * features + gate * units * units
            b = 4 * units * (features + units) + 4 * units + gate * units
        expected.append((4 * m, 4 * b))
    return {"offsets_match": got == expected, "offsets": got if got != expected else "documented"}


def chrono_layer(features, units, steps, **kw):
    import keras_seqmodels as ks
    from keras_seqmodels.zoo.models.pixel_mnist.network import chrono_biases

    layer = ks.layers.LSTM(units, **kw)
    layer.build((None, steps, features))
    rng = np.random.default_rng(0)
    kernel, recurrent, bias = layer.get_weights()
    kernel = rng.uniform(-0.3, 0.3, kernel.shape).astype("float32")
    recurrent = rng.uniform(-0.15, 0.15, recurrent.shape).astype("float32")
    bias = chrono_biases("lstm", bias, units, rng, t_max=steps)
    bias[2 * units :] = rng.uniform(-0.5, 0.5, 2 * units)
    layer.set_weights([kernel, recurrent, bias.astype("float32")])
    return layer


def layer_section(features=81, units=81, steps=784, batch=128):
    import keras

    from keras_seqmodels.layers import kernels

    library = kernels.tune(
        chrono_layer(features, units, steps, return_sequences=True), cudnn_training=True
    )
    fused = chrono_layer(features, units, steps, return_sequences=True)
    x = np.random.default_rng(1).standard_normal((batch, steps, features)).astype("float32")
    assert type(kernels.plan_of(library, x, training=True)).__name__ == "LibraryPlan"

    def loss_and_grads(layer):
        variables = layer.trainable_weights

        def loss(values, x):
            with keras.StatelessScope(state_mapping=list(zip(variables, values))):
                y = layer(x, training=True)
            return jnp.sum(jnp.sin(jnp.arange(y.size).reshape(y.shape) * 0.1) * y), y

        return jax.jit(jax.value_and_grad(loss, argnums=(0, 1), has_aux=True))(
            [v.value for v in variables], x
        )

    for precision in ("highest", "default"):
        context = contextlib.nullcontext()
        if precision == "highest":
            context = jax.default_matmul_precision("highest")
        with context:
            (_, y_l), (gw_l, gx_l) = loss_and_grads(library)
            (_, y_f), (gw_f, gx_f) = loss_and_grads(fused)
        row = dict(
            precision=precision,
            y=float(jnp.abs(y_l - y_f).max()),
            y_scale=float(jnp.abs(y_f).max()),
        )
        for name, a, b in zip(("d_kernel", "d_recurrent", "d_bias"), gw_l, gw_f):
            row[name] = float(jnp.abs(a - b).max())
            row[name + "_scale"] = float(jnp.abs(b).max())
        row["d_x"] = float(jnp.abs(gx_l - gx_f).max())
        report("layer", **row)


def network_section(mnist_dir, train_steps, batch=128):
    import keras

    import keras_seqmodels as ks
    from keras_seqmodels.layers import kernels
    from keras_seqmodels.zoo.models.pixel_mnist import config, network

    cfg = dict(config.PERMUTED_CONFIG, layer="lstm", units=81, blocks=4, dropout=0.0)
    model = network.build_model(cfg)
    lstms = [layer for layer in model.layers if isinstance(layer, ks.layers.LSTM)]
    for layer in lstms:
        kernels.tune(layer, cudnn_training=True)
    if mnist_dir:
        from keras_seqmodels.data import mnist

        images, labels = mnist.read_mnist_split(mnist_dir, "train", 5000, 0)
        images, labels = images[: batch * (train_steps + 2)], labels[: batch * (train_steps + 2)]
        task = "mnist"
    else:
        rng = np.random.default_rng(0)
        images = rng.integers(0, 256, (batch * (train_steps + 2), 28, 28)).astype("float32")
        projections = rng.standard_normal((784, 10))
        labels = np.argmax((images.reshape(len(images), -1) - 127.5) @ projections, axis=-1)
        task = "synthetic"
    optimizer = keras.optimizers.Adam(2e-3, clipnorm=1.0)
    model.compile(
        optimizer=optimizer,
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        jit_compile=True,
    )
    start = time.time()
    for step in range(train_steps):
        sl = slice(step * batch, (step + 1) * batch)
        model.train_on_batch(images[sl], labels[sl])
    seconds = time.time() - start
    held = slice(train_steps * batch, (train_steps + 2) * batch)
    tv = [v.value for v in model.trainable_variables]
    ntv = [v.value for v in model.non_trainable_variables]

    def logits(tv, x, training):
        return model.stateless_call(tv, ntv, x, training=training)[0]

    logits = jax.jit(logits, static_argnums=2)
    through_cudnn = np.asarray(logits(tv, images[held], True))
    through_fused = np.asarray(logits(tv, images[held], False))
    report(
        "network",
        task=task,
        train_steps=train_steps,
        train_seconds=round(seconds, 1),
        logits_diff=float(np.abs(through_cudnn - through_fused).max()),
        logits_scale=float(np.abs(through_fused).max()),
        accuracy_cudnn=float(np.mean(through_cudnn.argmax(-1) == labels[held])),
        accuracy_fused=float(np.mean(through_fused.argmax(-1) == labels[held])),
        argmax_agreement=float(np.mean(through_cudnn.argmax(-1) == through_fused.argmax(-1))),
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", help="write the rows as JSON here")
    parser.add_argument("--mnist", help="a folder with the MNIST idx files (else a synthetic task)")
    parser.add_argument("--train-steps", type=int, default=60)
    parser.add_argument(
        "--quick", action="store_true", help="fewer kernel sizes, 20 training steps"
    )
    args = parser.parse_args()
    import keras

    print(
        "jax",
        jax.__version__,
        jax.default_backend(),
        jax.devices()[0].device_kind,
        "keras",
        keras.__version__,
        flush=True,
    )
    if jax.default_backend() != "gpu":
        print("No GPU: cuDNN's LSTM cannot run here (the CPU tests use lstm_ref in its place).")
        return
    sizes = [
        (8, 8, 50, 4),
        (81, 81, 50, 128),
        (80, 80, 784, 128),
        (81, 81, 784, 128),
        (1, 81, 784, 128),
    ]
    if args.quick:
        sizes = [(8, 8, 50, 4), (81, 81, 784, 128)]
    sections = [
        ("kernel", lambda: kernel_section(sizes)),
        ("weights", lambda: weights_section(sizes)),
        ("layer", layer_section),
        ("network", lambda: network_section(args.mnist, 20 if args.quick else args.train_steps)),
    ]
    for name, run in sections:
        try:
            run()
        except Exception as error:  # noqa: BLE001 (a diagnostic: report and go on)
            report(name, error=f"{type(error).__name__}: {error}")
    if args.out:
        with open(args.out, "w") as f:
            json.dump(RESULTS, f, indent=1)


if __name__ == "__main__":
    main()
