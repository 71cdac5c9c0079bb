"""Sizes from a model file, a zoo index or a request are bounded before use.

A ``.keras`` config says how large each layer is; a zoo index says how large
each artifact is; a request says how much to search. Each size is checked
against a documented limit (``keras_seqmodels.utils.bounds``,
docs/reliability.md) before anything grows with it: a crafted value is a
quick ``ValueError`` naming the layer (or file), the argument and the range.
"""

import io
import json
import os
import subprocess
import sys
import zipfile

import keras
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import keras_seqmodels as ks
from keras_seqmodels import testing
from keras_seqmodels.data import conllu
from keras_seqmodels.utils import bounds, validation
from keras_seqmodels.zoo import api

FAST = settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))


def over(limit):
    return st.one_of(
        st.integers(limit + 1, 10**12), st.integers(limit + 1, 10**12).map(str)
    )


# -- the shared checker ---------------------------------------------------------


@FAST
@given(arg=st.sampled_from(sorted(bounds.LIMITS)), data=st.data())
def test_every_limited_argument_is_refused_above_its_limit(arg, data):
    maximum, _ = bounds.LIMITS[arg]
    value = data.draw(over(maximum))
    with pytest.raises(ValueError) as err:
        bounds.check_config("SomeLayer 'x'", {arg: value})
    message = str(err.value)
    assert message.startswith("SomeLayer 'x': ")
    assert f"`{arg}`" in message and f"{maximum:,}]" in message
    assert f"Received: {arg}={value!r}" in message


@FAST
@given(arg=st.sampled_from(sorted(bounds.LIMITS)), data=st.data())
def test_every_limited_argument_is_accepted_up_to_its_limit(arg, data):
    maximum, _ = bounds.LIMITS[arg]
    value = data.draw(st.integers(1, maximum))
    assert bounds.check_config("SomeLayer", {arg: value}) == {arg: value}
    assert validation.check_positive_int("SomeLayer", arg, value) == value


@FAST
@given(arg=st.sampled_from(sorted(bounds.LIMITS)), data=st.data())
def test_constructor_check_applies_the_same_limits(arg, data):
    maximum, _ = bounds.LIMITS[arg]
    value = data.draw(st.integers(maximum + 1, 10**15))
    with pytest.raises(ValueError, match=rf"`{arg}` must be an integer in \[1, {maximum:,}\]"):
        validation.check_positive_int("SomeLayer", arg, value)


def test_nan_and_infinite_sizes_are_refused():
    for value in (float("nan"), float("inf"), "inf", "nan"):
        with pytest.raises(ValueError, match="`units`"):
            bounds.check_config("Dense 'd'", {"units": value})


@pytest.mark.parametrize(
    "name",
    ["ElmanCell", "GatedCell", "GRUCell", "LSTMCell", "LeakyCell", "ClockworkCell",
     "DelayedCell", "EchoStateCell", "DeepTransitionCell"],
)  # fmt: skip
def test_every_cell_refuses_units_over_the_limit(name):
    cls = getattr(ks.cells, name)
    assert cls(bounds.WIDTH).units == bounds.WIDTH  # the limit itself builds (lazily)
    with pytest.raises(ValueError, match=r"`units` must be an integer in \[1, 8,192\]"):
        cls(bounds.WIDTH + 1)
    config = cls(4).get_config()
    config["units"] = 30000
    # Keras's own Layer.from_config re-raises as TypeError, with the message.
    expected = r"`units` must be an integer in \[1, 8,192\]"
    with pytest.raises((ValueError, TypeError), match=expected):
        cls.from_config(config)


# -- crafted .keras files -----------------------------------------------------------


def saved_model(path, units=4):
    inputs = keras.Input((5, 3))
    outputs = ks.layers.Recurrent(ks.cells.LSTMCell(units, name="lstm_cell"), name="rnn")(inputs)
    keras.Model(inputs, outputs).save(path)


def rewrite_config(path, change):
    """Rewrite the config.json inside a .keras archive with ``change(config)``."""
    with zipfile.ZipFile(path) as archive:
        entries = {n: archive.read(n) for n in archive.namelist()}
    config = json.loads(entries["config.json"])
    change(config)
    entries["config.json"] = json.dumps(config).encode()
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in entries.items():
            archive.writestr(name, data)


def set_key(node, key, value):
    """Set ``key`` wherever it occurs in a nested config; how many were set."""
    count = 0
    if isinstance(node, dict):
        for k in node:
            if k == key:
                node[k] = value
                count += 1
            else:
                count += set_key(node[k], key, value)
    elif isinstance(node, list):
        for item in node:
            count += set_key(item, key, value)
    return count


@pytest.fixture(scope="module")
def good_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("crafted") / "good.keras"
    saved_model(path)
    return path


@FAST
@given(units=st.integers(bounds.WIDTH + 1, 10**9))
def test_crafted_units_are_refused_before_keras_builds(good_file, tmp_path_factory, units):
    path = tmp_path_factory.mktemp("u") / "crafted.keras"
    path.write_bytes(good_file.read_bytes())
    rewrite_config(path, lambda c: set_key(c, "units", units))
    with pytest.raises(ValueError) as err:
        bounds.check_keras_file(str(path))
    assert str(path) in str(err.value) and "LSTMCell 'lstm_cell'" in str(err.value)
    assert f"units={units}" in str(err.value)


def test_crafted_units_refused_by_keras_load_model_too(good_file, tmp_path, monkeypatch):
    """Without the file check: the cell's from_config refuses, before any
    weight is made."""
    path = tmp_path / "crafted.keras"
    path.write_bytes(good_file.read_bytes())
    rewrite_config(path, lambda c: set_key(c, "units", 30000))
    made = []
    monkeypatch.setattr(keras.Variable, "__init__", spy(keras.Variable.__init__, made))
    with pytest.raises(Exception, match=r"`units` must be an integer in \[1, 8,192\]"):
        keras.saving.load_model(path, safe_mode=True)
    assert made == []


@FAST
@given(
    rows=st.integers(1, bounds.VOCABULARY),
    width=st.integers(1, bounds.WIDTH),
)
def test_config_building_more_weights_than_the_file_holds_is_refused(
    tmp_path_factory, rows, width
):
    """Each size within its limit, but together more weights than the file
    has bytes: refused (memory is bounded by the file's size)."""
    path = tmp_path_factory.mktemp("e") / "embedding.keras"
    inputs = keras.Input((3,), dtype="int32")
    keras.Model(inputs, keras.layers.Embedding(5, 2, name="emb")(inputs)).save(path)
    rewrite_config(path, lambda c: set_key(c, "input_dim", rows) + set_key(c, "output_dim", width))
    with zipfile.ZipFile(path) as archive:
        weights = sum(i.file_size for i in archive.infolist() if i.filename.endswith(".h5"))
    if rows * width > weights + bounds.WEIGHTS_SLACK:
        with pytest.raises(ValueError, match=f"builds at least {rows * width:,} weights, but"):
            bounds.check_keras_file(str(path))
    else:
        bounds.check_keras_file(str(path))


def test_weights_that_unpack_far_beyond_the_file_are_refused(good_file, tmp_path):
    """A zip bomb: the weights entry claims many times the bytes it is packed in."""
    path = tmp_path / "bomb.keras"
    with zipfile.ZipFile(good_file) as archive:
        entries = {n: archive.read(n) for n in archive.namelist()}
    entries["model.weights.h5"] = bytes(80 << 20)  # 80 MiB of zeros, packs to ~80 kB
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in entries.items():
            archive.writestr(name, data)
    assert path.stat().st_size < 1 << 20
    with pytest.raises(ValueError, match=r"bomb\.keras: its contents unpack to [\d,]+ bytes"):
        bounds.check_keras_file(str(path))


ZOO_FILES = sorted(
    os.path.join(root, name)
    for root, _, names in os.walk(os.path.join(os.path.dirname(api.ZOO_DIR), "..", "zoo"))
    for name in names
    if name.endswith(".keras")
)


@pytest.mark.parametrize("path", ZOO_FILES, ids=os.path.basename)
def test_every_zoo_file_passes_the_check(path):
    """No real model is refused: the limits sit far above the zoo's sizes."""
    config, weights = bounds.read_keras_config(path)
    bounds.check_keras_file(path)
    assert 0 < bounds.estimated_weights(config) <= weights


def test_good_file_passes_the_check(good_file):
    bounds.check_keras_file(str(good_file))
    assert keras.saving.load_model(good_file).output_shape == (None, 4)


@pytest.mark.parametrize("count", [bounds.MAX_LAYERS + 1, 20_000])
def test_too_many_layers_in_a_file_are_refused_quickly(good_file, tmp_path, count):
    path = tmp_path / "deep.keras"
    path.write_bytes(good_file.read_bytes())

    def add_layers(config):
        layers = config["config"]["layers"]
        extra = [dict(layers[-1], name=f"copy_{i}") for i in range(count)]
        for i, layer in enumerate(extra):
            layer["config"] = dict(layer["config"], name=f"copy_{i}")
        layers.extend(extra)

    rewrite_config(path, add_layers)
    before = bounds._LayerCount.calls
    with pytest.raises(ValueError, match=f"more than {bounds.MAX_LAYERS:,} layer configs"):
        bounds.check_keras_file(str(path))
    # The parse stops at the first layer config over the limit: the objects
    # parsed (a layer config and the few objects inside it each) do not grow
    # with the file's 20,000 layers.
    parsed = bounds._LayerCount.calls - before
    assert parsed <= OBJECTS_PER_LAYER * (bounds.MAX_LAYERS + 1) + OBJECTS_PER_LAYER * 8


# A layer config in these files is at most this many JSON objects (its own,
# its config, initializers, dtype policy, build config...).
OBJECTS_PER_LAYER = 12


def test_configs_nested_too_deep_are_refused():
    node = {"class_name": "Dense", "config": {"name": "d", "units": 3}}
    for i in range(bounds.MAX_NESTING + 1):
        node = {"class_name": "Wrapper", "config": {"name": f"w{i}", "layer": node}}
    with pytest.raises(ValueError, match="nested more than"):
        bounds.check_model_config(node, "deep.keras")


def test_not_a_keras_archive_is_named(tmp_path):
    for data in (b"", b"garbage", _zip_without_config()):
        path = tmp_path / "bad.keras"
        path.write_bytes(data)
        with pytest.raises(ValueError, match=r"bad\.keras: not a"):
            bounds.check_keras_file(str(path))


def _zip_without_config():
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("metadata.json", "{}")
    return buffer.getvalue()


def test_language_model_with_20000_layers_is_refused_quickly(monkeypatch):
    config = {"vocabulary": ["<eos>", "<unk>", "a"], "units": 4, "layers": 20_000,
              "name": "lm"}  # fmt: skip
    built = []
    monkeypatch.setattr(keras.layers.Layer, "__init__", spy(keras.layers.Layer.__init__, built))
    with pytest.raises(ValueError, match=r"`layers` must be an integer in \[1, 128\]"):
        ks.language_model.WordLanguageModel.from_config(config)
    assert built == []  # refused before any layer is made


def spy(function, calls):
    def wrapper(*args, **kwargs):
        calls.append(args[0])
        return function(*args, **kwargs)

    return wrapper


def test_translator_beam_from_a_config_is_refused_before_the_model_is_built():
    config = {"model": {"class_name": "NotEvenAClass", "config": {}}, "beam_size": 2_000_000,
              "source_vocabulary": [], "target_vocabulary": []}  # fmt: skip
    expected = r"Translator: `beam_size` must be an integer in \[1, 64\]"
    with pytest.raises(ValueError, match=expected):
        ks.seq2seq.Translator.from_config(config)


# -- a translation request ----------------------------------------------------------


@pytest.fixture(scope="module")
def translator():
    from keras_seqmodels.seq2seq import EncoderDecoder, Translator, text

    vocab = [text.START, text.END, "a", "b"]
    core = EncoderDecoder(6, 6, 4, 4, 4, start_id=2, end_id=3)
    return Translator(core, vocab, vocab, beam_size=2, max_output_length=5)


@FAST
@given(beam=st.integers(1, bounds.BEAM), data=st.data())
def test_translate_bounds_sentences_times_beam(translator, beam, data):
    batch = data.draw(st.integers(bounds.MAX_HYPOTHESES // beam + 1, 10**6))
    with pytest.raises(ValueError, match="`batch_size` must be an integer in"):
        translator.translate(["a"], beam_size=beam, batch_size=batch)


def test_translator_refuses_oversized_settings(translator):
    from keras_seqmodels.seq2seq import Translator

    for arg, value in (("beam_size", 65), ("max_output_length", 4097),
                       ("max_source_length", 10**9)):  # fmt: skip
        with pytest.raises(ValueError, match=f"`{arg}` must be an integer"):
            Translator(translator.model, translator.source_vocabulary,
                       translator.target_vocabulary, **{arg: value})  # fmt: skip


# -- the zoo resolver reads no more than the index records ----------------------------


def register(zoo_dir, name, assets=None):
    saved_model(zoo_dir / f"{name}.keras")
    ks.zoo.register_model(name, str(zoo_dir / f"{name}.keras"), task="test", metrics={},
                          data="none", command="none", card="none", assets=assets)  # fmt: skip
    return zoo_dir / "zoo" / name


def peak_rss_bytes():
    return testing.peak_rss_bytes()


def test_huge_sparse_artifact_behind_a_symlink_is_refused_unread(zoo_dir, monkeypatch):
    folder = register(zoo_dir, "m")
    artifact = folder / "m.keras"
    big = folder / "big.bin"
    with open(big, "wb") as f:
        f.truncate(6 << 30)  # 6 GiB, sparse: nothing on disk
    artifact.unlink()
    os.symlink("big.bin", artifact)
    before = peak_rss_bytes()
    opened = []
    real_open = open

    def counting_open(file, mode="r", *args, **kwargs):
        handle = CountingReader(real_open(file, mode, *args, **kwargs))
        if os.path.realpath(str(file)) == os.path.realpath(big):
            opened.append(handle)
        return handle

    monkeypatch.setattr(api, "open", counting_open, raising=False)
    expected = r"is 6,442,450,944 bytes, but the zoo index records"
    with pytest.raises(api.ArtifactError, match=expected):
        ks.zoo.load_model("m")
    assert len(opened) == 1 and opened[0].bytes_read == 0  # its size only, from fstat
    assert peak_rss_bytes() - before < 256 << 20


class CountingReader:
    """A file object that counts the bytes read through it."""

    def __init__(self, handle):
        self.handle, self.bytes_read = handle, 0

    def read(self, *args):
        data = self.handle.read(*args)
        self.bytes_read += len(data)
        return data

    def __getattr__(self, name):
        return getattr(self.handle, name)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.handle.close()


@FAST
@given(delta=st.integers(-1000, 1000).filter(bool))
def test_artifact_of_another_size_is_refused(zoo_dir, delta):
    folder = zoo_dir / "zoo" / "m"
    if not folder.exists():
        register(zoo_dir, "m")
    artifact = folder / "m.keras"
    size = api._entry("m")["size_bytes"]
    data = (zoo_dir / "m.keras").read_bytes()
    artifact.write_bytes(data[: size + delta] if delta < 0 else data + b"\0" * delta)
    with pytest.raises(api.ArtifactError, match=f"records {size:,}"):
        ks.zoo.load_model("m")


def test_asset_without_a_recorded_size_is_bounded(zoo_dir, monkeypatch):
    (zoo_dir / "vocab.txt").write_text("a\nb\n")
    folder = register(zoo_dir, "m", assets={"vocabulary": str(zoo_dir / "vocab.txt")})
    assert ks.zoo.read_asset("m", "vocabulary") == b"a\nb\n"
    monkeypatch.setattr(api, "MAX_ASSET_BYTES", 3)
    with pytest.raises(api.ArtifactError, match="over the 3-byte limit"):
        ks.zoo.read_asset("m", "vocabulary")
    assert (folder / "vocab.txt").exists()


# -- read_conllu streams, and bounds one line ------------------------------------------

WORD = "1\tDogs\tdog\tNOUN\tNNS\t_\t0\troot\t_\t_"


@FAST
@given(
    extra=st.integers(-3, 3),
    ending=st.sampled_from(["\n", "\r\n", ""]),
    position=st.integers(0, 2),
)
def test_conllu_line_limit_is_exact(tmp_path_factory, monkeypatch, extra, ending, position):
    limit = 64
    monkeypatch.setattr(conllu, "MAX_LINE_BYTES", limit)
    comment = "# " + "x" * (limit - 2 + extra)
    lines = [WORD, WORD, ""]
    lines.insert(position, comment)
    path = tmp_path_factory.mktemp("c") / "t.conllu"
    text = ending.join(lines) + ending if ending else "\n".join(lines)
    path.write_bytes(text.encode())
    if extra <= 0:
        assert conllu.read_conllu(str(path)) == [(["Dogs", "Dogs"], ["NOUN", "NOUN"])]
    else:
        with pytest.raises(ValueError, match=rf"t\.conllu, line {position + 1}: longer than 64"):
            conllu.read_conllu(str(path))


def test_read_conllu_of_a_64_mib_line_stays_small(tmp_path):
    """Refused after reading at most MAX_LINE_BYTES of it (a separate process,
    so that its peak memory is its own)."""
    path = tmp_path / "one_line.conllu"
    with open(path, "wb") as f:
        f.write(b"# ")
        for _ in range(64):
            f.write(b"x" * (1 << 20))
        f.write(b"\n")
    script = (
        "import sys\n"
        "from keras_seqmodels.data.conllu import read_conllu\n"
        "from keras_seqmodels.testing import peak_rss_bytes\n"
        "base = peak_rss_bytes()\n"
        "try:\n"
        "    read_conllu(sys.argv[1])\n"
        "except ValueError as err:\n"
        "    print('refused:', err)\n"
        "print(peak_rss_bytes() - base)\n"
    )
    out = subprocess.run([sys.executable, "-c", script, str(path)], capture_output=True,
                         text=True, timeout=120, check=True).stdout.splitlines()  # fmt: skip
    assert out[0].startswith("refused:") and "longer than 1,048,576 bytes" in out[0]
    assert int(out[-1]) < 16 << 20, out  # the file is 64 MiB


def test_read_conllu_shares_repeated_strings(tmp_path):
    path = tmp_path / "many.conllu"
    path.write_text((WORD + "\n\n") * 1000)
    sentences = conllu.read_conllu(str(path))
    assert len(sentences) == 1000
    assert len({id(words[0]) for words, _ in sentences}) == 1
    assert len({id(tags[0]) for _, tags in sentences}) == 1
