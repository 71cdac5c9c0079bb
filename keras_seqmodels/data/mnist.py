"""A reader of the MNIST idx files (LeCun et al.), with a fixed validation draw.

NumPy and ``gzip`` only: it works where TensorFlow is not installed.
"""

import gzip
import os
import zlib

import numpy as np

# The largest idx payload read (bytes): MNIST's training images are 47 MB.
MAX_IDX_BYTES = 1 << 30


def read_idx(path, shape=None, owner="MNIST"):
    """An idx ``.gz`` file: big-endian header (magic, dims), then uint8 data.

    The header is checked before the data is read: the magic bytes
    (``00 00 08``, unsigned bytes), 1 to 4 dimensions, the item shape
    ``shape[1:]`` if given, and a size of at most ``MAX_IDX_BYTES``; then
    exactly that many bytes must follow. Anything else (an empty, truncated,
    not gzip-compressed or lying file) is a ``ValueError`` starting with
    ``owner`` (the model or tool that reads it) and the file.
    """
    if not os.path.isfile(path):
        raise FileNotFoundError(f"{owner}: no such data file: {path}")
    form = "a gzip-compressed idx file of unsigned bytes (as distributed for MNIST)"
    try:
        with gzip.open(path, "rb") as f:
            head = f.read(4)
            if len(head) < 4 or head[:3] != b"\0\0\x08" or not 1 <= head[3] <= 4:
                start = head.hex() or "nothing (it is empty)"
                raise ValueError(
                    f"{owner}: {path} is not {form}: it starts with {start}, not 000008 "
                    "and a dimension count of 1 to 4"
                )
            ndim = head[3]
            header = f.read(4 * ndim)
            if len(header) < 4 * ndim:
                raise ValueError(f"{owner}: {path} is truncated inside its idx header")
            dims = [int.from_bytes(header[4 * i : 4 * i + 4], "big") for i in range(ndim)]
            if shape is not None and (len(dims) != len(shape) or dims[1:] != list(shape[1:])):
                raise ValueError(
                    f"{owner}: {path} holds an array of shape {tuple(dims)}; expected "
                    f"(n, {', '.join(map(str, shape[1:]))})".replace(", )", ")")
                )
            size = int(np.prod(dims, dtype=object))
            if size > MAX_IDX_BYTES:
                raise ValueError(
                    f"{owner}: {path} says it holds {size:,} bytes of data (shape "
                    f"{tuple(dims)}), over the {MAX_IDX_BYTES:,}-byte limit; refusing to read it"
                )
            raw = f.read(size + 1)
    except (OSError, EOFError, zlib.error) as err:  # gzip.BadGzipFile is an OSError
        raise ValueError(f"{owner}: {path} is not {form} ({err})") from None
    if len(raw) != size:
        found = "more" if len(raw) > size else f"{len(raw):,} bytes of"
        raise ValueError(
            f"{owner}: {path} has {found} data where its header says {size:,} bytes "
            f"(shape {tuple(dims)}); the file is truncated or corrupt"
        )
    return np.frombuffer(raw, np.uint8).reshape(dims)


def read_mnist_split(data_dir, split, valid_size=5000, split_seed=0, owner="MNIST"):
    """Images ``(n, 28, 28)`` float32 0-255 and labels ``(n,)`` int64 of one split.

    ``"test"``: the 10,000 test images (``t10k-*``). ``"validation"``:
    ``valid_size`` of the 60,000 training images, a fixed draw (the first
    ``valid_size`` of ``numpy.random.default_rng(split_seed).permutation``);
    ``"train"``: the others. Each split keeps the files' order.
    """
    prefix = "t10k" if split == "test" else "train"
    images_path = os.path.join(data_dir, f"{prefix}-images-idx3-ubyte.gz")
    labels_path = os.path.join(data_dir, f"{prefix}-labels-idx1-ubyte.gz")
    images = read_idx(images_path, shape=(None, 28, 28), owner=owner)
    labels = read_idx(labels_path, shape=(None,), owner=owner)
    if len(images) != len(labels) or len(images) == 0:
        raise ValueError(
            f"{owner}: {images_path} has {len(images):,} images but {labels_path} has "
            f"{len(labels):,} labels; expected the same number, at least 1"
        )
    if labels.max() > 9:
        raise ValueError(
            f"{owner}: {labels_path} holds the label {int(labels.max())}; MNIST labels are 0-9"
        )
    if split != "test" and len(images) <= valid_size:
        raise ValueError(
            f"{owner}: {images_path} has {len(images):,} images; the training split needs "
            f"more than the {valid_size:,} held out for validation"
        )
    if split != "test":
        order = np.random.default_rng(split_seed).permutation(len(images))
        index = np.sort(order[:valid_size] if split == "validation" else order[valid_size:])
        images, labels = images[index], labels[index]
    return images.astype("float32"), labels.astype("int64")
