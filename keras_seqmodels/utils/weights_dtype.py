"""Store a `.keras` file's weights in half precision.

Keras saves every variable in its own dtype (float32 for a float32 model).
A model trained in float32 can ship at half the size with its weights
rounded to float16 on disk and still run in float32: `store_weights_as`
rewrites the weights file inside a `.keras` archive, casting each
floating-point array, and leaves the model's config untouched, so
`keras.saving.load_model` builds the float32 model and assigns the float16
values to its float32 variables (the cast is exact in that direction). What
changes is only the rounding of the stored weights (relative error at most
2^-11, float16's unit roundoff); a model whose weights exceed float16's
range (65504) is refused rather than stored as infinities.

This is what Keras lacks: its dtype policies change the dtype of the
variables (and of the computation) in memory, not the dtype on disk alone.

Example:

```python
store_weights_as("runs/lm/lm.keras", "float16")   # in place, about half the size
model = keras.saving.load_model("runs/lm/lm.keras")  # float32 variables
```
"""

import io
import os
import tempfile
import zipfile

import numpy as np

WEIGHTS_FILE = "model.weights.h5"
DTYPES = ("float32", "float16")


def store_weights_as(path, dtype="float16"):
    """Rewrite the weights inside the `.keras` file `path` as `dtype`.

    Args:
        path: a `.keras` archive written by `model.save`.
        dtype: `"float16"` (half the size of float32 weights) or
            `"float32"` (nothing to do for a float32 model).

    Returns:
        The number of arrays cast.

    Raises:
        ValueError: `dtype` is not one of `DTYPES`, `path` holds no
            `model.weights.h5`, or a weight is outside `dtype`'s finite
            range.
    """
    import h5py

    if dtype not in DTYPES:
        raise ValueError(f"store_weights_as: dtype must be one of {DTYPES}, got {dtype!r}.")
    target = np.dtype(dtype)
    with zipfile.ZipFile(path) as archive:
        names = archive.namelist()
        if WEIGHTS_FILE not in names:
            raise ValueError(
                f"store_weights_as: {path} holds no {WEIGHTS_FILE} (not a .keras file)."
            )
        members = {name: archive.read(name) for name in names}
    source = h5py.File(io.BytesIO(members[WEIGHTS_FILE]), "r")
    buffer = io.BytesIO()
    cast = 0
    with source, h5py.File(buffer, "w") as out:

        def copy(name, node):
            nonlocal cast
            if isinstance(node, h5py.Group):
                group = out.require_group(name)
                group.attrs.update(node.attrs)
                return
            value = node[()]
            if (
                isinstance(value, np.ndarray)
                and np.issubdtype(value.dtype, np.floating)
                and value.dtype != target
            ):
                limit = np.finfo(target).max
                if value.size and np.abs(value).max() > limit:
                    raise ValueError(
                        f"store_weights_as: weight {name!r} of {path} reaches "
                        f"{np.abs(value).max():.3g}, beyond {dtype}'s range ({limit:.6g})."
                    )
                value = value.astype(target)
                cast += 1
            dataset = out.create_dataset(name, data=value)
            dataset.attrs.update(node.attrs)

        out.attrs.update(source.attrs)
        source.visititems(copy)
    members[WEIGHTS_FILE] = buffer.getvalue()
    folder = os.path.dirname(os.path.abspath(path))
    mode = os.stat(path).st_mode & 0o777  # mkstemp's file is 0600
    handle, temporary = tempfile.mkstemp(suffix=".keras", dir=folder)
    os.close(handle)
    try:
        with zipfile.ZipFile(temporary, "w", zipfile.ZIP_DEFLATED) as archive:
            for name in names:
                archive.writestr(name, members[name])
        os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException:
        os.unlink(temporary)
        raise
    return cast
