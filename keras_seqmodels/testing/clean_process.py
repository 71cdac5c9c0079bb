"""Running a snippet in a fresh Python process, for tests of exported models.

A SavedModel is meant to be served without this package (or Keras) at hand:
TensorFlow Serving, or a Python process that imports only TensorFlow. The
export tests therefore load and call each export in such a process:

    from keras_seqmodels.testing import call_saved_model
    outputs = call_saved_model(export_dir, {"text": np.array([b"a b c"])})
    np.testing.assert_allclose(outputs["output_0"], keras_outputs, atol=1e-5)
"""

import json
import os
import subprocess
import sys
import tempfile
import textwrap

import numpy as np

# Packages a snippet may not import: an export has to stand on TensorFlow
# alone. (Keras and JAX cannot be listed: ``import tensorflow`` itself imports
# them when they are installed.)
DEFAULT_FORBIDDEN = ("keras_seqmodels",)

_ENV_KEEP = ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "SYSTEMROOT")

_WRAPPER = """\
import json, sys
import numpy as np

class _Block:
    def __init__(self, names):
        self.names = names

    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in self.names:
            raise ImportError("clean process: importing " + name + " is not allowed")
        return None


def _main():
    work, forbidden = sys.argv[1], json.loads(sys.argv[2])
    sys.meta_path.insert(0, _Block(forbidden))
    with np.load(work + "/inputs.npz", allow_pickle=False) as data:
        inputs = {k: data[k] for k in data.files}
    outputs = {}
    with open(work + "/snippet.py") as f:
        code = compile(f.read(), "<snippet>", "exec")
    exec(code, {"inputs": inputs, "outputs": outputs, "workdir": work,
                "__name__": "__snippet__"})
    imported = sorted(m for m in forbidden if m in sys.modules)
    if imported:
        raise SystemExit("clean process: the snippet imported " + str(imported))
    arrays = {}
    for key, value in outputs.items():
        arr = np.asarray(value)
        if arr.dtype == object:
            arr = arr.astype(bytes)
        arrays[key] = arr
    np.savez(work + "/outputs.npz", **arrays)

_main()
"""


class CleanProcessError(RuntimeError):
    """The snippet failed, timed out, or imported a forbidden module."""


def run_in_clean_process(
    snippet,
    inputs=None,
    timeout=300,
    forbidden_modules=DEFAULT_FORBIDDEN,
    env=None,
):
    """Run ``snippet`` in a new interpreter and return what it put in ``outputs``.

    The process starts with ``python -I`` (no ``PYTHONPATH``, no user site,
    the current directory not on ``sys.path``) from an empty temporary
    folder, with an environment reduced to ``PATH``/``HOME``/locale plus
    ``env``, and ``TF_CPP_MIN_LOG_LEVEL=3``. The snippet sees three globals:
    ``inputs`` (dict of NumPy arrays, as given), ``outputs`` (a dict to fill
    with arrays, tensors' ``.numpy()`` or lists) and ``workdir``.

    Args:
        snippet: Python source; dedented before running.
        inputs: dict of name to array-like (numbers, ``bytes`` or ``str``).
        timeout: seconds before the process is killed.
        forbidden_modules: top-level packages the snippet may not import
            (an import raises ``ImportError``; ``sys.modules`` is checked when
            it ends). Default: this package.
        env: extra environment variables.

    Returns:
        dict of output name to NumPy array (strings come back as ``bytes``).

    Raises:
        CleanProcessError: non-zero exit, timeout, or a forbidden import; the
            message carries the end of the process's stderr.

    Example (starts a new Python, which takes seconds):

    >>> run_in_clean_process(  # doctest: +SKIP
    ...     "outputs['y'] = inputs['x'] * 2", {"x": [1, 2]}, forbidden_modules=())
    {'y': array([2, 4])}
    """
    inputs = {} if inputs is None else dict(inputs)
    for key in inputs:
        if not isinstance(key, str) or not key.isidentifier():
            raise ValueError(
                f"run_in_clean_process: input names must be identifiers. Received: {key!r}"
            )
    child_env = {k: os.environ[k] for k in _ENV_KEEP if k in os.environ}
    child_env["TF_CPP_MIN_LOG_LEVEL"] = "3"
    child_env.update(env or {})
    with tempfile.TemporaryDirectory(prefix="clean_process_") as work:
        arrays = {k: _to_array(k, v) for k, v in inputs.items()}
        np.savez(os.path.join(work, "inputs.npz"), **arrays)
        with open(os.path.join(work, "snippet.py"), "w") as f:
            f.write(textwrap.dedent(snippet))
        command = [
            sys.executable,
            "-I",
            "-c",
            _WRAPPER,
            work,
            json.dumps(list(forbidden_modules)),
        ]
        try:
            proc = subprocess.run(
                command,
                cwd=work,
                env=child_env,
                capture_output=True,
                text=True,
                timeout=timeout,
            )
        except subprocess.TimeoutExpired as err:
            raise CleanProcessError(
                f"clean process: no result after {timeout} s. stderr:\n{_tail(err.stderr)}"
            ) from None
        if proc.returncode != 0:
            raise CleanProcessError(
                f"clean process: exit status {proc.returncode}. stderr:\n{_tail(proc.stderr)}"
            )
        with np.load(os.path.join(work, "outputs.npz"), allow_pickle=False) as data:
            return {k: data[k] for k in data.files}


def call_saved_model(export_dir, inputs, signature="serving_default", timeout=300, env=None):
    """Load a SavedModel in a clean process and call one signature.

    The process imports TensorFlow and NumPy only (importing this package
    there raises ``ImportError``).

    Args:
        export_dir: the SavedModel folder.
        inputs: dict of the signature's input names to arrays (``bytes`` or
            ``str`` arrays for string inputs); cast to each input's dtype.
        signature: the signature key.
        timeout: seconds before the process is killed.
        env: extra environment variables.

    Returns:
        dict of the signature's output names to NumPy arrays.

    Example (after ``seqmodels export NAME exported/sst`` of a tree model):

    >>> call_saved_model(  # doctest: +SKIP
    ...     "exported/sst", {"trees": ["(4 (2 a) (4 (4 wonderful) (2 film)))"]})["root_class"]
    array([4], dtype=int32)
    """
    snippet = """
        import tensorflow as tf

        loaded = tf.saved_model.load(str(inputs.pop("__export_dir")))
        fn = loaded.signatures[str(inputs.pop("__signature"))]
        specs = fn.structured_input_signature[1]
        missing = sorted(set(specs) - set(inputs))
        if missing:
            raise SystemExit(f"call_saved_model: missing inputs {missing}; "
                             f"the signature takes {sorted(specs)}")
        feed = {k: tf.constant(v, dtype=specs[k].dtype) for k, v in inputs.items()}
        for key, value in fn(**feed).items():
            outputs[key] = value.numpy()
    """
    payload = dict(inputs)
    payload["__export_dir"] = np.asarray(os.path.abspath(export_dir))
    payload["__signature"] = np.asarray(signature)
    return run_in_clean_process(snippet, payload, timeout=timeout, env=env)


def _to_array(name, value):
    arr = np.asarray(value)
    if arr.dtype == object:
        try:
            arr = arr.astype(bytes)
        except (TypeError, ValueError, UnicodeEncodeError):
            raise ValueError(
                f"run_in_clean_process: input {name!r} must be numbers, bytes "
                f"or str. Received an object array of {type(arr.flat[0])}"
            ) from None
    return arr


def _tail(text, lines=40):
    if not text:
        return "(empty)"
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    return "\n".join(text.strip().splitlines()[-lines:])
