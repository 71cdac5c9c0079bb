import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
# The NumPy references run in float64; JAX needs this to honour float64.
os.environ.setdefault("JAX_ENABLE_X64", "1")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def _jax_compilation_cache():
    """On JAX, a compilation cache for this test session (a fresh temporary
    folder, removed at exit). Eager calls of layers with a ``fori_loop``
    (the tree layers' level loop, the recurrent runners) trace a new loop body
    each call, which JAX's in-memory cache does not recognise, so every call
    recompiled the same XLA program (about 2 s each); the on-disk cache is
    keyed by the compiled program itself and turns the repeats into loads."""
    if os.environ.get("KERAS_BACKEND") != "jax":
        return
    import atexit
    import shutil
    import tempfile

    import jax

    folder = tempfile.mkdtemp(prefix="jax_test_cache_")
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    jax.config.update("jax_compilation_cache_dir", folder)
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)


_jax_compilation_cache()


def _jax_full_float32():
    """On JAX, float32 matrix products at full precision on every device.

    JAX's default on NVIDIA GPUs multiplies float32 matrices in TF32 (10-bit
    mantissa), which moves results by about 1e-4 relative: more than the
    equality tests against float64 NumPy references allow. The tests compare
    the equations, not the device's fast mode, so they ask for "highest";
    on a CPU this changes nothing."""
    if os.environ.get("KERAS_BACKEND") != "jax":
        return
    import jax

    jax.config.update("jax_default_matmul_precision", "highest")


_jax_full_float32()
