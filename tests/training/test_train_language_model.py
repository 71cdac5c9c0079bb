"""Plain text -> a trained WordLanguageModel -> save/load, generation, SavedModel.

Training, saving and generation run on every backend; the export tests need
TensorFlow (string tensors, SavedModel).
"""

import math
import random

import keras
import numpy as np
import pytest

from keras_seqmodels.language_model import (
    WordLanguageModel,
    build_vocabulary,
    read_words,
    train_language_model,
)

# A toy language whose next word depends on the words before it: the subject
# fixes the verb and the object; "the" and "a" are followed by a subject
# at the start of a sentence and by an object after the verb.
SENTENCES = [
    "the cat chases the mouse",
    "the dog fetches the ball",
    "a bird sings a song",
    "the cat eats the fish",
    "a dog chases a cat",
]


def write_text(path, lines, seed):
    rng = random.Random(seed)
    text = "\n".join(rng.choice(SENTENCES).capitalize() for _ in range(lines))
    path.write_text(text + "\n", encoding="utf-8")
    return str(path)


def unigram_perplexity(train_path, val_path):
    """Perplexity of the training text's word frequencies on the validation text."""
    train, val = read_words(train_path), read_words(val_path)
    counts = {w: train.count(w) for w in set(train)}
    log_p = [math.log(counts.get(w, 0.5) / len(train)) for w in val[1:]]
    return math.exp(-sum(log_p) / len(log_p))


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    folder = tmp_path_factory.mktemp("text")
    train = write_text(folder / "train.txt", 400, 0)
    val = write_text(folder / "valid.txt", 60, 1)
    lm = train_language_model(
        train, val, epochs=4, units=32, layers=1, dropout=0.0, sequence_length=12,
        batch_size=16, learning_rate=1e-2, verbose=0,
    )  # fmt: skip
    return lm, folder, train, val


def test_validation_perplexity_falls_well_below_the_unigram_baseline(trained):
    lm, _, train, val = trained
    history = lm.history.history
    assert len(history["val_perplexity"]) == 4
    assert history["val_perplexity"][-1] < history["val_perplexity"][0]
    assert np.allclose(history["val_loss"], np.log(history["val_perplexity"]))
    baseline = unigram_perplexity(train, val)
    assert history["val_perplexity"][-1] < 0.5 * baseline, (history, baseline)
    assert len(lm.vocabulary) < baseline * 3  # far below uniform as well
    # The reported number is the model's perplexity on the validation file.
    assert lm.perplexity(val, sequence_length=12) == pytest.approx(
        history["val_perplexity"][-1], rel=1e-6
    )


def test_vocabulary_and_tokenization(trained):
    lm = trained[0]
    assert lm.vocabulary[:2] == ["<eos>", "<unk>"]
    assert "the" in lm.vocabulary and "The" not in lm.vocabulary
    assert lm.ids("The CAT zebra") == [lm.vocabulary.index(w) for w in ("the", "cat", "<unk>")]
    assert lm.ids("") == [0]


def test_next_words_is_a_distribution_and_learned_the_grammar(trained):
    lm = trained[0]
    full = lm.next_words("the cat chases the", top_k=None)
    assert len(full) == len(lm.vocabulary)
    assert sum(p for _, p in full) == pytest.approx(1.0, abs=1e-6)
    assert [p for _, p in full] == sorted((p for _, p in full), reverse=True)
    assert lm.next_words("the dog fetches the", top_k=1)[0][0] == "ball"
    batch = lm.next_words(["a bird sings a", "the dog"], top_k=3)
    assert len(batch) == 2 and all(len(b) == 3 for b in batch)


def test_log_likelihood_is_the_sum_of_the_next_word_log_probabilities(trained):
    lm = trained[0]
    p1 = dict(lm.next_words("the", top_k=None))["cat"]
    p2 = dict(lm.next_words("the cat", top_k=None))["chases"]
    assert lm.log_likelihood("the cat chases") == pytest.approx(math.log(p1 * p2), abs=1e-4)
    assert lm.log_likelihood("the") == 0.0


def test_generate_greedy_follows_the_most_likely_word_and_sampling_repeats_with_a_seed(trained):
    lm = trained[0]
    greedy = lm.generate("the dog", 4, greedy=True).split()
    prompt = "the dog"
    for word in greedy:
        assert word == lm.next_words(prompt, top_k=1)[0][0]
        prompt += " " + word
    a = lm.generate("", 12, temperature=1.5, seed=3)
    assert a == lm.generate("", 12, temperature=1.5, seed=3)
    assert len(a.split()) == 12 and set(a.split()) <= set(lm.vocabulary)
    samples = {lm.generate("", 12, temperature=1.5, seed=s) for s in range(4)}
    assert len(samples) > 1  # the seed matters
    with pytest.raises(ValueError, match="length"):
        lm.generate("the", 0)
    with pytest.raises(ValueError, match="temperature"):
        lm.generate("the", 3, temperature=0)


def test_save_and_load_keep_the_vocabulary_with_the_weights(trained, tmp_path):
    lm = trained[0]
    path = tmp_path / "mine.keras"
    lm.save(path)
    loaded = keras.saving.load_model(path)
    assert isinstance(loaded, WordLanguageModel)
    assert loaded.vocabulary == lm.vocabulary and loaded.lowercase == lm.lowercase
    ids = np.array([lm.ids("the cat chases the mouse")], "int32")
    np.testing.assert_allclose(
        np.asarray(loaded.predict_on_batch(ids)), np.asarray(lm.predict_on_batch(ids)), atol=1e-6
    )
    assert loaded.generate("a", 8, seed=5) == lm.generate("a", 8, seed=5)


def test_case_is_kept_when_asked(tmp_path):
    path = tmp_path / "t.txt"
    path.write_text("The cat\nthe cat\n", encoding="utf-8")
    words = read_words(str(path), lowercase=False)
    assert words == ["The", "cat", "<eos>", "the", "cat", "<eos>"]
    lm = WordLanguageModel(build_vocabulary(words), units=4, layers=1, lowercase=False)
    assert lm.ids("The the") == [lm.vocabulary.index("The"), lm.vocabulary.index("the")]
    assert WordLanguageModel.from_config(lm.get_config()).lowercase is False


def test_rare_words_become_unknown():
    words = "a a a b b c <eos>".split()
    assert build_vocabulary(words, min_count=2) == ["<eos>", "<unk>", "a", "b"]
    assert build_vocabulary(words, vocabulary_size=3) == ["<eos>", "<unk>", "a"]
    with pytest.raises(ValueError, match="vocabulary_size"):
        build_vocabulary(words, vocabulary_size=2)


def test_bad_input_is_one_clear_error(tmp_path):
    empty = tmp_path / "empty.txt"
    empty.write_text("\n  \n", encoding="utf-8")
    good = tmp_path / "good.txt"
    good.write_text("a b c\n" * 3, encoding="utf-8")
    binary = tmp_path / "binary.txt"
    binary.write_bytes(b"\xff\xfe\x00abc\n")
    missing = str(tmp_path / "missing.txt")
    with pytest.raises(FileNotFoundError, match=r"train_language_model: no such file: .*missing"
                       r"\.txt .*one sentence .* per line"):  # fmt: skip
        train_language_model(missing)
    with pytest.raises(ValueError, match=r"train_language_model: .*empty\.txt holds no words"):
        train_language_model(str(empty))
    with pytest.raises(ValueError, match=r"train_language_model: .*binary\.txt, line 1: not UTF-8"):
        train_language_model(str(binary))
    with pytest.raises(FileNotFoundError, match=r"`validation_path`"):
        train_language_model(str(good), missing)
    with pytest.raises(ValueError, match="sequence_length"):
        train_language_model(str(good), sequence_length=0)
    with pytest.raises(ValueError, match="<unk>"):
        WordLanguageModel(["<eos>", "a"])


# Export (TensorFlow) ---------------------------------------------------------


@pytest.mark.tf_only
def test_exported_savedmodel_serves_the_same_words_and_scores(trained, tmp_path):
    import tensorflow as tf

    from keras_seqmodels.export.language_model import export_language_model

    lm = trained[0]
    export_language_model(lm, str(tmp_path / "served"))
    serve = tf.saved_model.load(str(tmp_path / "served")).signatures["serving_default"]
    texts = ["The dog fetches the", "a bird", "", "the zebra"]
    out = serve(text=tf.constant(texts))
    words = [w.decode() for w in out["next_word"].numpy()]
    assert words == [lm.next_words(t, top_k=1)[0][0] for t in texts]
    probs = tf.nn.softmax(out["next_word_logits"]).numpy()
    expected = np.array([[dict(lm.next_words(t, top_k=None))[w] for w in lm.vocabulary]
                         for t in texts])  # fmt: skip
    np.testing.assert_allclose(probs, expected, atol=1e-5)
    np.testing.assert_allclose(
        out["log_likelihood"].numpy(), [lm.log_likelihood(t) for t in texts], atol=1e-4
    )


@pytest.mark.tf_only
def test_cli_exports_a_saved_language_model(trained, tmp_path, capsys):
    import tensorflow as tf

    from keras_seqmodels import export
    from keras_seqmodels.cli.main import main

    lm = trained[0]
    path = tmp_path / "mine.keras"
    lm.save(path)
    assert main(["export", str(path), str(tmp_path / "served")]) == 0
    serve = tf.saved_model.load(str(tmp_path / "served")).signatures["serving_default"]
    assert serve(text=tf.constant(["the dog fetches the"]))["next_word"].numpy()[0] == b"ball"
    # The Python export of the file is the same SavedModel.
    export.export(str(path), str(tmp_path / "served_too"))
    again = tf.saved_model.load(str(tmp_path / "served_too")).signatures["serving_default"]
    assert again(text=tf.constant(["a bird sings a"]))["next_word"].numpy()[0] == b"song"

    capsys.readouterr()
    code = main(["export", str(path), str(tmp_path / "beam"), "--beam", "3"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1 and "--beam" in err, err


@pytest.mark.tf_only
def test_export_keeps_the_case_of_a_cased_model(tmp_path):
    import tensorflow as tf

    from keras_seqmodels.export.language_model import export_language_model

    keras.utils.set_random_seed(0)
    lm = WordLanguageModel(["<eos>", "<unk>", "The", "the", "cat"], units=4, layers=1,
                           lowercase=False)  # fmt: skip
    embedding = lm.network.get_layer("embedding").embeddings  # words far apart
    embedding.assign(np.random.default_rng(0).normal(0, 3, embedding.shape))
    export_language_model(lm, str(tmp_path / "served"))
    serve = tf.saved_model.load(str(tmp_path / "served")).signatures["serving_default"]
    texts = ["The cat", "the cat", "THE cat"]
    served = serve(text=tf.constant(texts))["log_likelihood"].numpy()
    np.testing.assert_allclose(served, [lm.log_likelihood(t) for t in texts], atol=1e-5)
    assert abs(served[0] - served[1]) > 1e-3 and abs(served[1] - served[2]) > 1e-3
    assert lm.ids("THE") == [1]  # unknown: not lower-cased


def test_cli_generates_from_a_saved_language_model(trained, tmp_path, capsys):
    from keras_seqmodels.cli.main import main

    lm = trained[0]
    path = tmp_path / "mine.keras"
    lm.save(path)
    capsys.readouterr()
    args = ["generate", str(path), "--prompt", "the cat", "--length", "6", "--seed", "2"]
    assert main(args) == 0
    out = capsys.readouterr().out
    expected = "the cat " + lm.generate("the cat", 6, seed=2)
    assert out.split() == expected.replace("<eos>", " ").split(), (out, expected)

    other = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
    other.save(tmp_path / "dense.keras")
    code = main(["generate", str(tmp_path / "dense.keras")])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1 and "WordLanguageModel" in err, err
