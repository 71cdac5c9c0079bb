"""Keras's own LSTM with JAX on an NVIDIA GPU: its cuDNN path (the default in
inference) against its generic loop (``use_cudnn=False``), same weights.

    KERAS_BACKEND=jax python benchmarks/keras_lstm_cudnn_check.py

Prints, per dtype and direction, the largest difference between the two, whether
the cuDNN output holds NaN, and the difference once the cuDNN output is reversed
in time. On an H200 (JAX 0.11.2, Keras 3.15.1, 2026-11-27): float32 forward
0.00024 (float32 rounding on the GPU); float32 ``go_backwards=True`` 0.353, but 0.00011 once
reversed (cuDNN's outputs come back in input order, the loop's in processing
order); float64 NaN from cuDNN in both directions. docs/layers.md, "Known issues
of upstream layers". On a CPU Keras runs no cuDNN and every difference is 0.
"""
import os

os.environ.setdefault("KERAS_BACKEND", "jax")
os.environ.setdefault("JAX_ENABLE_X64", "1")
import jax
import keras
import numpy as np

print("jax", jax.__version__, jax.default_backend(), "keras", keras.__version__)
x = np.random.default_rng(0).normal(size=(2, 5, 4))
for dtype in ("float32", "float64"):
    for go_backwards in (False, True):
        kw = dict(return_sequences=True, go_backwards=go_backwards, dtype=dtype)
        cudnn, loop = keras.layers.LSTM(3, **kw), keras.layers.LSTM(3, use_cudnn=False, **kw)
        xs = x.astype(dtype)
        cudnn.build(xs.shape)
        loop.build(xs.shape)
        loop.set_weights(cudnn.get_weights())
        a, b = np.asarray(cudnn(xs)), np.asarray(loop(xs))
        difference = np.nanmax(np.abs(a - b))
        print(f"{dtype} go_backwards={go_backwards}: cudnn-loop max {difference:.3g}, "
              f"cudnn NaN {np.isnan(a).any()}, loop NaN {np.isnan(b).any()}, "
              f"cudnn time-flipped vs loop max {np.nanmax(np.abs(a[:, ::-1] - b)):.3g}")
