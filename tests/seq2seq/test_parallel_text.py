"""Two plain-text files -> a trained Translator -> an exported SavedModel with beam search.

TensorFlow only (string tensors, SavedModel).
"""

import collections

import keras
import numpy as np
import pytest

pytestmark = pytest.mark.tf_only
if keras.backend.backend() != "tensorflow":
    pytest.skip("string models need the TensorFlow backend", allow_module_level=True)

import tensorflow as tf  # noqa: E402

from keras_seqmodels.export.translation import export_translator  # noqa: E402
from keras_seqmodels.seq2seq import (  # noqa: E402
    Translator,
    read_parallel_text,
    train_translator,
)

# A word-for-word toy language pair: learnable in a few epochs by attention.
EN = ["dog", "cat", "man", "woman", "runs", "sleeps"]
DE = ["Hund", "Katze", "Mann", "Frau", "läuft", "schläft"]


def write_pairs(folder, name, n, seed):
    rng = np.random.default_rng(seed)
    src, tgt = [], []
    for _ in range(n):
        words = rng.integers(0, len(EN), rng.integers(1, 4))
        src.append(" ".join(EN[i] for i in words) + ".")
        tgt.append(" ".join(DE[i] for i in words) + ".")
    (folder / f"{name}.en").write_text("\n".join(src) + "\n", encoding="utf-8")
    (folder / f"{name}.de").write_text("\n".join(tgt) + "\n", encoding="utf-8")
    return str(folder / f"{name}.en"), str(folder / f"{name}.de")


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    folder = tmp_path_factory.mktemp("parallel")
    train = write_pairs(folder, "train", 300, 0)
    val = write_pairs(folder, "val", 40, 1)
    translator = Translator.from_parallel_text(
        *train, validation=val, epochs=10, embedding_dim=16, encoder_units=16,
        decoder_units=32, batch_size=32, learning_rate=2e-2, beam_size=3, verbose=0,
    )
    return translator, folder, val


def test_training_learns_more_than_the_most_frequent_token(trained):
    translator, _, (val_src, val_tgt) = trained
    history = translator.model.history.history
    assert history["loss"][-1] < 0.7 * history["loss"][0], history["loss"]
    # Baseline: always predicting the most frequent target piece (incl. the end token).
    pieces = [p for line in read_parallel_text(val_src, val_tgt)[1]
              for p in line.replace(".", " .").split() + ["</s>"]]
    majority = collections.Counter(pieces).most_common(1)[0][1] / len(pieces)
    assert history["val_masked_accuracy"][-1] > majority + 0.15, (history, majority)


def test_exported_savedmodel_decodes_strings_with_beam_search(trained):
    translator, folder, (val_src, _) = trained
    sentences = read_parallel_text(val_src, val_src)[0][:12] + ["", "a zebra runs."]
    expected = [s.decode("utf-8") for s in translator(tf.constant(sentences)).numpy()]
    # The translations are text of the target language, not ids.
    target_words = set(DE) | {"."}
    assert all(expected[:12]) and expected[12] == ""
    assert all(set(out.replace(".", " .").split()) <= target_words for out in expected[:12])
    directory = export_translator(translator, str(folder / "served"))
    served = tf.saved_model.load(directory).signatures["serving_default"]
    got = served(inputs=tf.constant(sentences))["translations"].numpy()
    assert [s.decode("utf-8") for s in got] == expected
    # What it serves is the beam search's best hypothesis (beam 3, the model's).
    beam_ids = translator.translate_ids(translator.encode_source(sentences[:12]), beam_size=3)
    np.testing.assert_array_equal(
        translator.decode_target(beam_ids).numpy(), np.array([e.encode() for e in expected[:12]]))


def test_saved_translator_reloads(trained, tmp_path):
    translator, _, (val_src, _) = trained
    path = tmp_path / "translator.keras"
    translator.save(path)
    loaded = keras.saving.load_model(path)
    sentences = tf.constant(read_parallel_text(val_src, val_src)[0][:5])
    np.testing.assert_array_equal(loaded(sentences).numpy(), translator(sentences).numpy())


def test_bad_parallel_files_are_one_clear_error(tmp_path):
    (tmp_path / "a.txt").write_text("one\ntwo\n")
    (tmp_path / "b.txt").write_text("eins\n")
    with pytest.raises(ValueError, match="has 2 lines and .* has 1"):
        train_translator(str(tmp_path / "a.txt"), str(tmp_path / "b.txt"))
    (tmp_path / "c.txt").write_text("\n  \n")
    (tmp_path / "d.txt").write_text("x\n\n")
    with pytest.raises(ValueError, match="no pair of non-blank lines"):
        read_parallel_text(str(tmp_path / "c.txt"), str(tmp_path / "d.txt"))
    with pytest.raises(FileNotFoundError):
        read_parallel_text(str(tmp_path / "missing.txt"), str(tmp_path / "b.txt"))


def test_cli_export_of_a_translator_file_and_of_a_raw_encoder_decoder(trained, tmp_path, capsys):
    from keras_seqmodels.cli.main import main
    from keras_seqmodels.seq2seq import EncoderDecoder

    translator, _, (val_src, _) = trained
    path = tmp_path / "mine.keras"
    translator.save(path)
    assert main(["export", str(path), str(tmp_path / "served")]) == 0
    served = tf.saved_model.load(str(tmp_path / "served")).signatures["serving_default"]
    sentences = tf.constant(read_parallel_text(val_src, val_src)[0][:4])
    np.testing.assert_array_equal(
        served(inputs=sentences)["translations"].numpy(), translator(sentences).numpy())

    capsys.readouterr()
    core = EncoderDecoder(10, 10, 4, 4, 4, start_id=2, end_id=3)
    core((np.ones((1, 3), "int32"), np.ones((1, 2), "int32")))
    core.save(tmp_path / "core.keras")
    code = main(["export", str(tmp_path / "core.keras"), str(tmp_path / "core_out")])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1, err
    assert "EncoderDecoder" in err and "Translator.from_parallel_text" in err
    assert not (tmp_path / "core_out").exists()
