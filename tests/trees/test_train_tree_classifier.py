"""Your own bracketed trees -> ``train_tree_classifier`` -> save, reload, export."""

import random

import keras
import numpy as np
import pytest

from keras_seqmodels import trees as T
from keras_seqmodels.trees.root_accuracy import RootAccuracy

pytestmark = pytest.mark.tf_only

POSITIVE, NEGATIVE = ["good", "great", "fun"], ["bad", "dull", "awful"]
NEUTRAL = ["the", "film", "plot", "is", "a"]
# Labels of a made-up scheme, not SST's 0-4: a user's own integers.
LABEL = {"pos": 7, "neg": -3, "none": 0}


def write_trees(path, count, seed):
    """``count`` binary trees of 2-4 words, one of them a sentiment word; a
    leaf is labelled by its word, an inner node by the sentiment word below
    it (``none`` if none). Returns the root labels."""
    rng = random.Random(seed)

    def word_label(w):
        return LABEL["pos"] if w in POSITIVE else LABEL["neg"] if w in NEGATIVE else 0

    def grow(words):
        if len(words) == 1:
            return word_label(words[0]), f"({word_label(words[0])} {words[0]})"
        cut = rng.randint(1, len(words) - 1)
        (a, left), (b, right) = grow(words[:cut]), grow(words[cut:])
        label = a if a != 0 else b
        return label, f"({label} {left} {right})"

    roots, lines = [], []
    for _ in range(count):
        words = rng.choices(NEUTRAL, k=rng.randint(1, 3))
        words.insert(rng.randint(0, len(words)), rng.choice(POSITIVE + NEGATIVE))
        # Capitals in the file: the classifier lower-cases.
        words = [w.capitalize() if rng.random() < 0.2 else w for w in words]
        label, line = grow(words)
        roots.append(label)
        lines.append(line)
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    return roots, lines


def run_cli(argv):
    """``(exit code, stdout, stderr)`` of ``seqmodels ARGV``, in-process."""
    from contextlib import redirect_stderr, redirect_stdout
    from io import StringIO

    from keras_seqmodels.cli.main import main

    out, err = StringIO(), StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    folder = tmp_path_factory.mktemp("own_trees")
    train, dev = str(folder / "train.txt"), str(folder / "dev.txt")
    _, train_lines = write_trees(train, 160, seed=0)
    dev_roots, dev_lines = write_trees(dev, 60, seed=1)
    classifier = T.train_tree_classifier(
        train, dev, epochs=4, embedding_dim=16, units=16, dropout=0.0,
        learning_rate=2e-2, min_count=1, batch_size=16, verbose=0,
    )  # fmt: skip
    return dict(
        classifier=classifier, folder=folder, dev_roots=dev_roots, dev_lines=dev_lines,
        train_labels=sorted({x for line in train_lines for x in T.parse_ptb(line).labels}),
    )  # fmt: skip


def test_labels_come_from_the_training_file(trained):
    clf = trained["classifier"]
    assert clf.labels == trained["train_labels"] == [-3, 0, 7]
    assert clf.label_names == ["-3", "0", "7"]
    assert clf.network.outputs[0].shape[-1] == 3


def test_learns_above_the_majority_baseline(trained):
    clf, gold = trained["classifier"], trained["dev_roots"]
    majority = max(gold.count(x) for x in set(gold)) / len(gold)
    predicted = clf.predict_labels(trained["dev_lines"])
    accuracy = np.mean([p == g for p, g in zip(predicted, gold)])
    assert accuracy > majority + 0.2, (accuracy, majority)
    history = clf.history.history
    assert len(history["val_root_accuracy"]) == 4
    # The validation metric is the root accuracy computed here.
    assert history["val_root_accuracy"][-1] == pytest.approx(accuracy, abs=1e-6)
    assert history["loss"][-1] < history["loss"][0]


def test_plain_sentences_get_a_balanced_tree(trained):
    clf = trained["classifier"]
    sentences = ["a great film", "the plot is awful", "Dull"]
    probs = clf.predict_probabilities(sentences)
    assert probs.shape == (3, 3)
    np.testing.assert_allclose(probs.sum(1), 1.0, rtol=1e-5)
    from keras_seqmodels.trees.text import text_to_tree

    as_trees = clf.predict_probabilities([text_to_tree(s) for s in sentences])
    np.testing.assert_allclose(probs, as_trees, rtol=1e-6)


def test_save_and_load_give_identical_outputs(trained, tmp_path):
    clf = trained["classifier"]
    path = str(tmp_path / "mine.keras")
    clf.save(path)
    loaded = keras.saving.load_model(path)
    assert isinstance(loaded, T.TreeClassifier)
    assert loaded.labels == clf.labels and loaded.lower == clf.lower
    batch = T.encode([T.lower_tokens(T.parse_ptb(s)) for s in trained["dev_lines"][:8]], arity=2)
    inputs = [batch["tokens"].astype(str), batch["children"], batch["levels"]]
    np.testing.assert_array_equal(
        keras.ops.convert_to_numpy(loaded(inputs)), keras.ops.convert_to_numpy(clf(inputs))
    )
    assert loaded.predict_labels(trained["dev_lines"]) == clf.predict_labels(trained["dev_lines"])


def test_export_serves_labels_and_probabilities(trained, tmp_path):
    import tensorflow as tf

    from keras_seqmodels import export

    clf = trained["classifier"]
    lines = trained["dev_lines"][:5]
    served_dir = export.export(clf, str(tmp_path / "served"))
    served = tf.saved_model.load(served_dir)
    out = served.signatures["serving_default"](trees=tf.constant(lines + ["(7 (0 a) (7 good)"]))
    expected = clf.predict_probabilities(lines)
    np.testing.assert_allclose(out["root_probabilities"].numpy()[:5], expected, atol=1e-5)
    assert out["root_class"].numpy().tolist() == expected.argmax(1).tolist() + [-1]
    names = [s.decode() for s in out["root_label"].numpy()]
    assert names == [str(x) for x in clf.predict_labels(lines)] + [""]
    assert out["error"].numpy()[-1].decode() == "unbalanced brackets"
    labels = served.signatures["labels"]()["labels"].numpy()
    assert [s.decode() for s in labels] == clf.label_names


def test_cli_exports_and_scores_a_saved_classifier(trained, tmp_path):
    import tensorflow as tf

    clf = trained["classifier"]
    path = str(tmp_path / "mine.keras")
    clf.save(path)
    code, out, err = run_cli(["export", path, str(tmp_path / "served")])
    assert code == 0, err
    served = tf.saved_model.load(str(tmp_path / "served")).signatures["serving_default"]
    result = served(trees=tf.constant(["(7 (0 a) (7 great))"]))
    assert set(result) == {"root_class", "root_label", "root_probabilities", "error"}
    assert result["root_label"].numpy()[0].decode() == str(clf.predict_labels(["a great"])[0])
    code, out, err = run_cli(["export", path, str(tmp_path / "beam"), "--beam", "3"])
    expected = "--beam is not an option of the savedmodel export of a tree classifier"
    assert code == 2 and expected in err, err
    code, out, err = run_cli(["sentiment", "--model-path", path, "(0 (0 a) (7 great))", "a dull"])
    assert code == 0, err
    assert out.split() == [str(x) for x in clf.predict_labels(["(0 (0 a) (7 great))", "a dull"])]


def test_string_labels(tmp_path):
    path = tmp_path / "train.txt"
    path.write_text("(pos (none the) (pos good))\n(neg (neg bad) (none film))\n" * 3)
    clf = T.train_tree_classifier(str(path), epochs=1, embedding_dim=4, units=4, min_count=1,
                                  verbose=0)  # fmt: skip
    assert clf.labels == ["neg", "none", "pos"]
    assert set(clf.predict_labels(["(pos (none the) (pos good))", "bad"])) <= set(clf.labels)


@pytest.mark.parametrize(
    "text, fragments",
    [
        ("(1 (1 good) (0 fun))\n(1 (1 a) (0 b)\n", ["line 2", "unbalanced brackets"]),
        ("(1 (1 good) (0 fun))\n\nthis is a sentence\n", ["line 3", "not a bracketed tree"]),
        ("(1 (1 a) (0 b) (1 c))\n", ["line 1", "3 children", "binary"]),
        ("((1 a) (0 b))\n", ["line 1", "root has no label"]),
        ("(1 (1 a) (0 b))\n(x (y a) (z b))\n", ["line 2", "all integers or all strings"]),
        ("(1 (1 a) (1 b))\n", ["only the label [1]", "at least 2"]),
        ("\n\n", ["holds no tree"]),
    ],
)
def test_bad_files_name_the_function_file_and_line(tmp_path, text, fragments):
    path = tmp_path / "bad.txt"
    path.write_text(text)
    with pytest.raises(ValueError) as err:
        T.train_tree_classifier(str(path), epochs=1, verbose=0)
    message = str(err.value)
    assert message.startswith("train_tree_classifier: ")
    assert str(path) in message
    for fragment in fragments:
        assert fragment in message, (fragment, message)


def test_missing_file(tmp_path):
    good = tmp_path / "good.txt"
    good.write_text("(1 (1 a) (0 b))\n")
    missing = str(tmp_path / "nope.txt")
    with pytest.raises(FileNotFoundError, match="train_tree_classifier: no such file.*nope.txt"):
        T.train_tree_classifier(missing)
    with pytest.raises(FileNotFoundError, match="train_tree_classifier: no such file.*nope.txt"):
        T.train_tree_classifier(str(good), missing)


def test_tree_classifier_checks_its_arguments():
    net = T.build_tree_network(["", "a"], num_classes=3, embedding_dim=4, units=4)
    with pytest.raises(ValueError, match="3 output columns but 2 labels"):
        T.TreeClassifier(net, labels=[0, 1])
    with pytest.raises(ValueError, match="at least 2 distinct"):
        T.TreeClassifier(net, labels=[0, 0, 1])
    with pytest.raises(ValueError, match="3 inputs"):
        T.TreeClassifier(keras.Sequential([keras.Input((2,)), keras.layers.Dense(3)]), [0, 1, 2])


def test_root_accuracy_reads_the_root_and_skips_unlabelled_roots():
    rng = np.random.default_rng(0)
    y_true = rng.integers(-1, 3, size=(32, 5))
    y_pred = rng.normal(size=(32, 5, 3))
    metric = RootAccuracy()
    metric.update_state(y_true, y_pred)
    keep = y_true[:, 0] >= 0
    expected = np.mean(y_pred[keep, 0].argmax(-1) == y_true[keep, 0])
    assert float(metric.result()) == pytest.approx(expected)
    assert RootAccuracy.from_config(RootAccuracy(root=2).get_config()).root == 2


def test_tree_dataset_knows_its_number_of_batches():
    from keras_seqmodels.trees import parse_ptb, tree_dataset

    trees = [parse_ptb("(1 (0 a) (1 b))")] * 53
    for shuffle in (False, True):
        ds = tree_dataset(trees, 25, shuffle=shuffle)
        assert int(ds.cardinality()) == 3 == sum(1 for _ in ds)
