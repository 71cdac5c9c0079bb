import os
import sys

import pytest

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


def _zoo_exports_folder():
    """One scratch folder per test run for the shared zoo SavedModels, made
    by the first process (pytest's controller; xdist workers inherit it in
    their environment) and removed when that process exits."""
    import atexit
    import shutil
    import tempfile

    if "KS_TEST_ZOO_EXPORTS" not in os.environ:
        folder = tempfile.mkdtemp(prefix="ks_zoo_exports_")
        os.environ["KS_TEST_ZOO_EXPORTS"] = folder
        atexit.register(shutil.rmtree, folder, ignore_errors=True)


_zoo_exports_folder()


@pytest.fixture(scope="session")
def zoo_savedmodel():
    """``export(name) -> directory``: the shipped zoo model ``name`` as a
    SavedModel (``zoo.load(name).export``), written once per test run and
    shared by every test and xdist worker; tests only read it."""
    import fcntl
    import shutil

    root = os.environ["KS_TEST_ZOO_EXPORTS"]

    def export(name):
        from keras_seqmodels import zoo

        target = os.path.join(root, name)
        with open(target + ".lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # another worker may be writing it
            if not os.path.exists(os.path.join(target, "saved_model.pb")):
                shutil.rmtree(target + ".partial", ignore_errors=True)
                zoo.load(name).export(target + ".partial")
                os.rename(target + ".partial", target)
        return target

    return export
