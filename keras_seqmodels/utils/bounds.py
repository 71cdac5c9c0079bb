"""Upper bounds on sizes that come from a model config, a zoo index or a request.

A ``.keras`` file is data: its ``config.json`` says how large each layer is,
and Keras allocates what it says. A crafted config with ``units=30000`` or
20,000 layers would allocate until the machine runs out of memory or time
before any weight is read. Every size-like value the package reads from a
config, an index or a request is checked here first, against the limits
below, which are far above what the zoo and the recipes use (the zoo's
largest values: 1,024 units, 3 layers, beam 5, a 10,000-word vocabulary).

- ``check_size(owner, arg, value)``: one value; the constructors of the
  package's layers and models call it (through
  ``validation.check_positive_int``), so ``from_config`` is bounded too.
- ``check_config(owner, config)``: the size-like keys of one layer's config;
  the package's ``from_config`` methods call it before building anything.
- ``check_model_config(config, source)`` and ``check_keras_file(path)``:
  a whole model config (every nested layer, Keras's own included), the
  number of layers and the nesting depth; every place the package loads a
  ``.keras`` file (zoo, CLI, recipes, export) calls it before Keras does.

Each refusal is one ``ValueError`` naming the layer (or file), the argument,
the allowed range and the value received:

    >>> try:
    ...     check_size("LSTMCell 'lstm_cell'", "units", 30000)
    ... except ValueError as err:
    ...     print(str(err).split(" (")[0])
    LSTMCell 'lstm_cell': `units` must be an integer in [1, 8,192]
"""

import json
import numbers
import zipfile

# Limits, by kind of size.
WIDTH = 8_192  # units, embedding and memory widths
VOCABULARY = 1_048_576  # vocabulary sizes, classes, tags, Dense outputs
DEPTH = 128  # stacked layers, hops
HEADS = 64  # read / write heads
BEAM = 64  # beam size
LENGTH = 4_096  # tokens kept from a source, produced as an output
MEMORY_SLOTS = 65_536  # rows of an external memory, sentences of a story
CHARACTERS = 1_024  # characters per word of a character encoder
MAX_LAYERS = 2_048  # layer configs in one model file
MAX_NESTING = 64  # nested layer configs (a cell in a layer in a model ...)
MAX_CONFIG_BYTES = 64 << 20  # config.json inside a .keras archive
# How far the entries of a .keras archive may unpack (saved weights hardly
# compress; a zip bomb does), beyond MAX_CONFIG_BYTES.
MAX_UNPACK_RATIO = 100
# Weights a config may build beyond the bytes of weights its file holds.
WEIGHTS_SLACK = 16 << 20
# A translation request: sentences x beam hypotheses searched at once.
MAX_HYPOTHESES = 4_096

# Argument name -> (largest value, what it is). The same name means the same
# kind of size everywhere in the package (and in Keras's own layers).
LIMITS = {
    "units": (WIDTH, "widths"),
    "encoder_units": (WIDTH, "widths"),
    "decoder_units": (WIDTH, "widths"),
    "output_units": (WIDTH, "widths"),
    "state_size": (WIDTH, "widths"),
    "embed_dim": (WIDTH, "widths"),
    "embedding_dim": (WIDTH, "widths"),
    "output_dim": (WIDTH, "widths"),
    "memory_width": (WIDTH, "widths"),
    "memory_dim": (WIDTH, "widths"),
    "filters": (WIDTH, "widths"),
    "vocab_size": (VOCABULARY, "vocabulary sizes"),
    "vocabulary_size": (VOCABULARY, "vocabulary sizes"),
    "source_vocabulary_size": (VOCABULARY, "vocabulary sizes"),
    "target_vocabulary_size": (VOCABULARY, "vocabulary sizes"),
    "input_dim": (VOCABULARY, "vocabulary sizes"),
    "num_tags": (VOCABULARY, "vocabulary sizes"),
    "num_classes": (VOCABULARY, "vocabulary sizes"),
    "num_chars": (VOCABULARY, "vocabulary sizes"),
    "max_tokens": (VOCABULARY, "vocabulary sizes"),
    "layers": (DEPTH, "depths"),
    "num_layers": (DEPTH, "depths"),
    "encoder_layers": (DEPTH, "depths"),
    "decoder_layers": (DEPTH, "depths"),
    "hops": (DEPTH, "depths"),
    "read_heads": (HEADS, "heads"),
    "write_heads": (HEADS, "heads"),
    "num_heads": (HEADS, "heads"),
    "beam_size": (BEAM, "beam sizes"),
    "max_source_length": (LENGTH, "sequence lengths"),
    "max_output_length": (LENGTH, "sequence lengths"),
    "max_length": (LENGTH, "sequence lengths"),
    "output_sequence_length": (LENGTH, "sequence lengths"),
    "memory_size": (MEMORY_SLOTS, "memory sizes"),
    "max_chars": (CHARACTERS, "characters per word"),
}

# Where a class uses a name for another kind of size: Keras's ``Dense(units)``
# is an output layer as often as a hidden one (a softmax over a vocabulary).
CLASS_LIMITS = {
    "Dense": {"units": (VOCABULARY, "Dense outputs")},
}


def _number(value):
    """``value`` as a number if it is one (or a string holding one), else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, numbers.Real):
        return value
    if isinstance(value, str):
        try:
            return float(value.strip())
        except ValueError:
            return None
    return None


def limit_of(arg, class_name=None):
    """``(maximum, kind)`` for an argument name (of ``class_name``), or None."""
    special = CLASS_LIMITS.get(class_name or "", {})
    return special.get(arg) or LIMITS.get(arg)


def check_size(owner, arg, value, maximum=None, kind=None, minimum=1):
    """``value`` if it is within ``[minimum, maximum]``, else a ``ValueError``.

    Args:
        owner: the layer, model or file, the start of the message.
        arg: the argument name; its limit is looked up in ``LIMITS`` when
            ``maximum`` is None.
        value: the value to check (a number, or a string holding one; other
            types are returned as they are, for the caller's type check).
        maximum, kind: the limit and what it limits (default: ``LIMITS``).
        minimum: the smallest value allowed.

    Returns:
        ``value`` unchanged.
    """
    if maximum is None:
        found = LIMITS.get(arg)
        if found is None:
            return value
        maximum, kind = found
    number = _number(value)
    if number is None:
        return value
    if not number <= maximum or number < minimum:  # NaN fails the first test
        raise ValueError(
            f"{owner}: `{arg}` must be an integer in [{minimum:,}, {maximum:,}] "
            f"(a keras_seqmodels limit on {kind or 'sizes'}). Received: {arg}={value!r}"
        )
    return value


def check_config(owner, config, class_name=None):
    """Check the size-like keys of one layer's ``config`` dict (not nested ones).

    Called by ``from_config`` before anything is built.

    Returns:
        ``config`` unchanged.
    """
    if not isinstance(config, dict):
        return config
    for arg, value in config.items():
        found = limit_of(arg, class_name)
        if found is not None:
            number = _number(value)
            if number is not None and not number <= found[0]:
                check_size(owner, arg, value, *found)
    return config


def check_model_config(config, source="model config"):
    """Check a whole serialized model (the dict of a ``.keras`` file's config.json).

    Every nested layer config is checked with ``check_config`` (Keras's own
    layers too); the number of layer configs is at most ``MAX_LAYERS`` and
    their nesting at most ``MAX_NESTING``. Only sizes above their limits are
    refused here; the constructors check the rest (zero, negative, types).

    Raises:
        ValueError: naming ``source``, the layer, the argument and the limit.
    """
    count = 0
    stack = [(config, "", None, 0)]
    while stack:
        node, owner, class_name, depth = stack.pop()
        if isinstance(node, list):
            stack.extend((item, owner, class_name, depth) for item in node)
            continue
        if not isinstance(node, dict):
            continue
        if "class_name" in node and isinstance(node.get("config"), dict):
            count += 1
            depth += 1
            class_name = str(node["class_name"])
            name = node["config"].get("name")
            owner = f"{class_name} {name!r}" if isinstance(name, str) else class_name
            if count > MAX_LAYERS:
                raise _too_many_layers(source)
            if depth > MAX_NESTING:
                raise ValueError(
                    f"{source}: layer configs nested more than {MAX_NESTING} deep (at "
                    f"{owner}; a keras_seqmodels limit); refusing to build it"
                )
            check_config(f"{source}: {owner}", node["config"], class_name)
        stack.extend((value, owner, class_name, depth) for value in node.values())
    return config


def estimated_weights(config):
    """A lower bound on the number of weights a serialized model builds.

    Counted where a config alone tells: an embedding's ``input_dim`` x
    ``output_dim``; a layer's ``units`` x the last dimension of its recorded
    input shape; a recurrent cell's ``units`` x ``units`` (its recurrent
    kernel, which the real cell has several of).
    """
    total = 0
    stack = [config]
    while stack:
        node = stack.pop()
        if isinstance(node, list):
            stack.extend(node)
            continue
        if not isinstance(node, dict):
            continue
        stack.extend(node.values())
        layer = node.get("config")
        if "class_name" not in node or not isinstance(layer, dict):
            continue
        for rows, width in _EMBEDDINGS:
            total += _product(layer.get(rows), layer.get(width))
        for count, units in _STACKS + (("layers", "units"),) * (node["class_name"] == _LM):
            total += _product(layer.get(count), layer.get(units), layer.get(units))
        if node["class_name"] == _LM and isinstance(layer.get("vocabulary"), list):
            width = layer.get("embedding_dim") or layer.get("units")
            total += _product(len(layer["vocabulary"]), width)
        units = _number(layer.get("units"))
        if not units or not 0 < units < float("inf"):
            continue
        shape = (node.get("build_config") or {}).get("input_shape")
        if isinstance(shape, list) and shape and isinstance(shape[-1], int) and shape[-1] > 0:
            total += int(units) * shape[-1]
        if "recurrent_initializer" in layer:
            total += int(units) * int(units)
    return total


# Keys of one config whose product is a lower bound on its weights: an
# embedding (rows x width), stacked recurrent layers (layers x units x units).
_EMBEDDINGS = (
    ("input_dim", "output_dim"),
    ("vocab_size", "embed_dim"),
    ("source_vocabulary_size", "embedding_dim"),
    ("target_vocabulary_size", "embedding_dim"),
)
_STACKS = (("encoder_layers", "encoder_units"), ("decoder_layers", "decoder_units"))
_LM = "WordLanguageModel"


def _product(*values):
    """The product of the numbers given (0 unless each is a positive number)."""
    numbers_ = [_number(v) for v in values if v is not None]
    if len(numbers_) < 2 or not all(n and 0 < n < float("inf") for n in numbers_):
        return 0
    out = 1
    for n in numbers_:
        out *= int(n)
    return out


def _check_weights_size(source, config, weights_bytes):
    """A config that builds more weights than its file has bytes of weights is
    crafted (or truncated): every saved weight takes at least one byte."""
    need = estimated_weights(config)
    if need > weights_bytes + WEIGHTS_SLACK:
        raise ValueError(
            f"{source}: its config builds at least {need:,} weights, but the file holds "
            f"{weights_bytes:,} bytes of weights; refusing to build it (a crafted or "
            "truncated file)"
        )


def read_keras_config(source, data=None):
    """The parsed config.json of a ``.keras`` archive (a path, or its bytes as
    ``data``), read with its size bounded, and the bytes of its weights files
    (None if it has none); ``ValueError`` naming ``source`` if it is not a
    ``.keras`` archive."""
    import io

    try:
        with zipfile.ZipFile(io.BytesIO(data) if data is not None else source) as archive:
            try:
                entry = archive.getinfo("config.json")
            except KeyError:
                raise ValueError(
                    f"{source}: not a Keras model file (a .keras archive has a config.json)"
                ) from None
            if entry.file_size > MAX_CONFIG_BYTES:
                raise ValueError(
                    f"{source}: its config.json is {entry.file_size:,} bytes; at most "
                    f"{MAX_CONFIG_BYTES:,} (a keras_seqmodels limit); refusing to read it"
                )
            with archive.open(entry) as f:
                text = f.read(MAX_CONFIG_BYTES + 1)
            weights = [i.file_size for i in archive.infolist() if i.filename.endswith(".h5")]
            unpacked = sum(i.file_size for i in archive.infolist())
            packed = sum(i.compress_size for i in archive.infolist())
            if unpacked > MAX_UNPACK_RATIO * packed + MAX_CONFIG_BYTES:
                raise ValueError(
                    f"{source}: its contents unpack to {unpacked:,} bytes, more than "
                    f"{MAX_UNPACK_RATIO} times their {packed:,} packed bytes (a keras_seqmodels "
                    "limit: saved weights hardly compress); refusing to read it"
                )
    except (zipfile.BadZipFile, OSError, EOFError) as err:
        if isinstance(err, FileNotFoundError):
            raise
        raise ValueError(f"{source}: not a valid .keras archive ({err})") from None
    if len(text) > MAX_CONFIG_BYTES:
        raise ValueError(
            f"{source}: its config.json is over {MAX_CONFIG_BYTES:,} bytes (a keras_seqmodels "
            "limit); refusing to read it"
        )
    try:
        config = json.loads(text, object_hook=_LayerCount(source))
    except (ValueError, RecursionError) as err:
        if isinstance(err, _TooManyLayers):
            raise
        raise ValueError(f"{source}: config.json is not valid JSON ({err})") from None
    return config, (sum(weights) if weights else None)


class _TooManyLayers(ValueError):
    """A model config with more than ``MAX_LAYERS`` layer configs."""


def _too_many_layers(source):
    return _TooManyLayers(
        f"{source}: more than {MAX_LAYERS:,} layer configs (a keras_seqmodels "
        "limit on layers per model file); refusing to build it"
    )


class _LayerCount:
    """A ``json.loads`` object hook that counts layer configs as they are
    parsed and stops the parse at the first one over ``MAX_LAYERS``: a file
    of 20,000 layers is refused after parsing 2,049 of them, not all.
    ``calls`` counts the objects parsed (the tests bound the work with it)."""

    calls = 0  # over all instances: what the tests read

    def __init__(self, source):
        self.source = source
        self.layers = 0

    def __call__(self, node):
        type(self).calls += 1
        if "class_name" in node and isinstance(node.get("config"), dict):
            self.layers += 1
            if self.layers > MAX_LAYERS:
                raise _too_many_layers(self.source)
        return node


def check_keras_file(source, data=None):
    """Check the sizes in a ``.keras`` file before Keras builds it.

    Args:
        source: the file's path (or a name for messages when ``data`` is given).
        data: the file's bytes, if already read.

    Raises:
        ValueError: the file is not a ``.keras`` archive, a size in its
            config is over its limit (the message names the file, the layer,
            the argument and the allowed range), or its config builds more
            weights than the file holds bytes of weights (so memory is bounded
            by the file's size).
    """
    config, weights_bytes = read_keras_config(source, data)
    check_model_config(config, str(source))
    if weights_bytes is not None:
        _check_weights_size(str(source), config, weights_bytes)
